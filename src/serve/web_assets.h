// The dashboard's files, embedded in the binary at build time
// (web/embed_assets.cmake generates web_assets() from web/src and the npm
// packages of web/package-lock.json).
#pragma once

#include <span>
#include <string_view>

namespace gd {

struct WebAsset {
  std::string_view path;          // "/" or "/assets/<content hash>/<name>"
  std::string_view content_type;  // with charset for text
  std::string_view body;          // identity bytes
  std::string_view gzip;          // the same, gzip-compressed (level 9)
  std::string_view etag;          // quoted: "\"<content hash>\""
  bool immutable;                 // true: the URL changes with the content
};

// Every embedded file (generated source).
std::span<const WebAsset> web_assets();
// The asset served at `path` ("/index.html" is "/"); nullptr if none.
const WebAsset* find_web_asset(std::string_view path);

}  // namespace gd
