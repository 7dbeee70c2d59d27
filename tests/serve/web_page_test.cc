// The dashboard's files over HTTP (serve/web_page.h): content negotiation,
// validators, cache lifetimes, and that every embedded file is there.
#include "serve/web_page.h"

#include <gtest/gtest.h>

#include <string>

namespace gd {
namespace {

std::string header(const ApiReply& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

TEST(WebPage, EmbedsThePageAndItsAssets) {
  const WebAsset* page = find_web_asset("/");
  ASSERT_NE(page, nullptr);
  EXPECT_EQ(find_web_asset("/index.html"), page);
  EXPECT_EQ(page->content_type, "text/html; charset=utf-8");
  const std::string html(page->body);
  // The page names its scripts by content-hashed URLs, never inline.
  for (const char* name : {"app.js", "uPlot.min.js", "app.css"}) {
    const size_t at = html.find(std::string("/") + name);
    ASSERT_NE(at, std::string::npos) << name;
    const size_t start = html.rfind("\"/assets/", at);
    ASSERT_NE(start, std::string::npos) << name;
    const std::string url =
        html.substr(start + 1, at - start + std::string(name).size());
    const WebAsset* a = find_web_asset(url);
    ASSERT_NE(a, nullptr) << url;
    EXPECT_TRUE(a->immutable);
    EXPECT_FALSE(a->gzip.empty());
    EXPECT_LT(a->gzip.size(), a->body.size());
  }
  EXPECT_EQ(html.find("{{asset:"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);  // no inline script
  EXPECT_EQ(find_web_asset("/assets/0000/app.js"), nullptr);
  EXPECT_EQ(find_web_asset("/app.js"), nullptr);
}

TEST(WebPage, GzipOnlyWhenAccepted) {
  const WebAsset& a = *find_web_asset("/");
  auto gz = web_asset_reply(a, "gzip, deflate, br", "");
  EXPECT_EQ(gz.status, 200);
  EXPECT_EQ(header(gz, "Content-Encoding"), "gzip");
  EXPECT_EQ(gz.static_body, a.gzip);
  EXPECT_EQ(header(gz, "Vary"), "Accept-Encoding");
  for (const char* no :
       {"", "identity", "br", "gzip;q=0", "gzip; q=0.000", "*;q=0"}) {
    auto plain = web_asset_reply(a, no, "");
    EXPECT_EQ(header(plain, "Content-Encoding"), "") << no;
    EXPECT_EQ(plain.static_body, a.body) << no;
  }
  EXPECT_TRUE(accepts_gzip("GZIP;q=0.5"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_FALSE(accepts_gzip("xgzip"));
}

TEST(WebPage, EtagsAnswer304AndDifferByEncoding) {
  const WebAsset& a = *find_web_asset("/");
  auto plain = web_asset_reply(a, "", "");
  auto gz = web_asset_reply(a, "gzip", "");
  const std::string etag = header(plain, "ETag"), gz_etag = header(gz, "ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_NE(etag, gz_etag);
  EXPECT_EQ(web_asset_reply(a, "", etag).status, 304);
  EXPECT_EQ(web_asset_reply(a, "gzip", gz_etag).status, 304);
  EXPECT_EQ(web_asset_reply(a, "gzip", "W/" + gz_etag).status, 304);
  EXPECT_EQ(web_asset_reply(a, "gzip", "\"other\", " + gz_etag).status, 304);
  EXPECT_EQ(web_asset_reply(a, "gzip", "*").status, 304);
  EXPECT_EQ(web_asset_reply(a, "gzip", etag).status, 200);
  EXPECT_EQ(web_asset_reply(a, "", "\"other\"").status, 200);
  auto not_modified = web_asset_reply(a, "", etag);
  EXPECT_TRUE(not_modified.static_body.empty());
  EXPECT_TRUE(not_modified.body.empty());
}

TEST(WebPage, CacheLifetimes) {
  const WebAsset& page = *find_web_asset("/");
  EXPECT_EQ(header(web_asset_reply(page, "", ""), "Cache-Control"), "no-cache");
  for (const auto& a : web_assets()) {
    if (a.path == "/") continue;
    EXPECT_EQ(header(web_asset_reply(a, "", ""), "Cache-Control"),
              "public, max-age=31536000, immutable")
        << a.path;
  }
}

TEST(WebPage, PolicyForbidsInlineScript) {
  const std::string csp = kContentSecurityPolicy;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos);
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
}

}  // namespace
}  // namespace gd
