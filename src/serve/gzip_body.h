// A reply body gzip-compressed for a client that accepts it (web_page.h's
// accepts_gzip): the Fleet page's /api/v1/fleet is ~3.5 KB a node (7 MB at
// 2,048 nodes) of repetitive JSON, which gzip makes ~30 times smaller.
#pragma once

#include <string>
#include <string_view>

namespace gd {

// `body` as one gzip member (RFC 1952), at zlib's fastest level. Throws
// std::runtime_error when zlib fails.
std::string gzip_body(std::string_view body);

}  // namespace gd
