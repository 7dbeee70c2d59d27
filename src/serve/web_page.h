// The dashboard's files over HTTP: content negotiation (gzip), ETags and
// cache lifetimes, and the security headers every reply of serve carries.
#pragma once

#include <string_view>

#include "serve/api.h"
#include "serve/web_assets.h"

namespace gd {

// Sent with every reply: the page's script and styles come only from serve
// itself (no inline script, no eval, nothing from elsewhere), it cannot be
// framed, and no reply is sniffed into another type.
inline constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

// Assets under a content-hashed URL never change: cached for a year and
// never revalidated. The page itself is revalidated each time (ETag), so a
// new serve version is picked up at once.
inline constexpr const char* kImmutableCache =
    "public, max-age=31536000, immutable";
inline constexpr const char* kRevalidateCache = "no-cache";

// True when Accept-Encoding allows gzip (a "gzip" or "*" token whose q is
// not 0).
bool accepts_gzip(std::string_view accept_encoding);
// True when If-None-Match lists `etag` (weak comparison) or is "*".
bool etag_matches(std::string_view if_none_match, std::string_view etag);

// 200 with the gzip or identity bytes, or 304 when the client has them.
ApiReply web_asset_reply(const WebAsset& asset,
                         std::string_view accept_encoding,
                         std::string_view if_none_match);

}  // namespace gd
