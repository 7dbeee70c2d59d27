#include "serve/web_page.h"

#include <string>

#include "common/ascii_text.h"

namespace gd {
namespace {

// Calls fn(item) for each comma-separated item, trimmed.
template <typename Fn>
void for_each_item(std::string_view list, Fn fn) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    fn(trim(list.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// A q value of zero ("q=0", "q=0.0", "q=0.000") refuses the coding.
bool q_is_zero(std::string_view params) {
  size_t q = params.find("q=");
  if (q == std::string_view::npos) return false;
  std::string_view v = trim(params.substr(q + 2));
  if (v.empty() || v[0] != '0') return false;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] != '0' && v[i] != '.') return false;
  return true;
}

std::string gzip_etag(std::string_view etag) {
  // A different representation needs a different strong validator:
  // "hash" becomes "hash-gz".
  std::string e(etag);
  if (e.size() >= 2 && e.back() == '"') e.insert(e.size() - 1, "-gz");
  return e;
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
  bool ok = false;
  for_each_item(accept_encoding, [&](std::string_view item) {
    const size_t semi = item.find(';');
    const std::string_view coding = trim(item.substr(0, semi));
    const std::string_view params =
        semi == std::string_view::npos ? "" : item.substr(semi + 1);
    if (iequals(coding, "gzip") || coding == "*")
      if (!q_is_zero(params)) ok = true;
  });
  return ok;
}

bool etag_matches(std::string_view if_none_match, std::string_view etag) {
  bool match = false;
  for_each_item(if_none_match, [&](std::string_view tag) {
    if (tag == "*") match = true;
    if (tag.size() > 2 && tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) match = true;
  });
  return match;
}

ApiReply web_asset_reply(const WebAsset& asset,
                         std::string_view accept_encoding,
                         std::string_view if_none_match) {
  const bool gz = !asset.gzip.empty() && accepts_gzip(accept_encoding);
  const std::string etag = gz ? gzip_etag(asset.etag) : std::string(asset.etag);
  ApiReply r;
  r.content_type = std::string(asset.content_type);
  r.headers = {
      {"ETag", etag},
      {"Cache-Control", asset.immutable ? kImmutableCache : kRevalidateCache},
      {"Vary", "Accept-Encoding"}};
  if (!if_none_match.empty() && etag_matches(if_none_match, etag)) {
    r.status = 304;
    return r;
  }
  if (gz) r.headers.emplace_back("Content-Encoding", "gzip");
  r.static_body = gz ? asset.gzip : asset.body;
  return r;
}

const WebAsset* find_web_asset(std::string_view path) {
  if (path == "/index.html") path = "/";
  for (const auto& a : web_assets())
    if (a.path == path) return &a;
  return nullptr;
}

}  // namespace gd
