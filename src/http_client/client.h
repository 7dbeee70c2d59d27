// The one HTTP client of gpudoctor (gpudoctor-full only: it links
// cpp-httplib and OpenSSL, src/cli/full_binary.h): top --connect's feed and
// remote kill, ps's and diagnose's questions to serve, serve's posts to
// Alertmanager, and any other API client (GET with query parameters, POST
// with a body).
//
// The server is untrusted: whatever it sends, a request ends by its total
// deadline (connect, TLS, request, headers and body together, not per
// read), its reply's head is bounded in bytes and lines (cpp-httplib 0.11
// bounds neither: endless headers grow its map until memory runs out), its
// body in bytes, and another thread can end it at once (RequestCancel).
// Every failure is one line in words a user can act on.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/url.h"

namespace gd::http {

// A reply's status line and headers: serve's are ~300 bytes in 8 lines.
inline constexpr size_t kMaxReplyHeadBytes = 64 * 1024;
inline constexpr size_t kMaxReplyHeadLines = 100;
// A reply's body unless the request says otherwise (serve's status is ~60 KB
// with 512 processes).
inline constexpr size_t kMaxReplyBodyBytes = 16 << 20;

using Fields = std::vector<std::pair<std::string, std::string>>;

// Who asks, and whom to trust: the same for every request to one server.
struct Credentials {
  std::string user, password;  // basic auth ("" none)
  std::string bearer_token;    // "Authorization: Bearer" ("" none)
  // https: PEM certificates to trust (a self-signed server's own, or the CA
  // that signed it) instead of the system's ("" the system's).
  std::string ca_file;
  // How the user gives ca_file, for the message when a certificate is not
  // trusted.
  std::string ca_option = "--ca-file";
};

struct Reply;

struct Request {
  std::string method = "GET";
  // After the URL's own path: "/api/v1/status" (a query written here,
  // "/api/v1/export?since=10m", is sent as it is).
  std::string path;
  // Sent after '?', each name and value percent-encoded, after the URL's
  // own query.
  Fields query;
  Fields headers;
  std::string body;  // POST: sent with content_type
  std::string content_type;
  double total_s = 2;  // the request's one deadline
  size_t max_body_bytes = kMaxReplyBodyBytes;
  // Optional: called once the head is in (status and headers), before the
  // body; false ends the request.
  std::function<bool(const Reply&)> on_head;
  // Optional: each piece of the body as it arrives, instead of keeping it
  // in Reply::body; false ends the request (its error is the caller's).
  std::function<bool(std::string_view)> on_body;
};

struct Reply {
  // An HTTP reply came whole within the bounds; else `error` says why, in
  // one line ("cannot reach URL: why", "stopped" after a cancel).
  bool ok = false;
  std::string error;
  // A failure that asking again cannot mend (a reply over its size bound,
  // a certificate not trusted): callers that try again do not.
  bool final = false;
  int status = 0;
  Fields headers;
  std::string body;
  // The first header of this name (case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
};

// One request on a fresh connection to `url`, bounded as above.
Reply send(const Url& url, const Credentials& who, const Request& request,
           RequestCancel& cancel);

// "a=1&b=x%20y": the query of `fields`, percent-encoded.
std::string encode_query(const Fields& fields);

}  // namespace gd::http
