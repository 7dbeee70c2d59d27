#include "http_client/client.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "http_client/bounded_stream.h"
#include "http_client/trust_store.h"

namespace gd::http {
namespace {

std::chrono::microseconds seconds(double s) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(s));
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string size_text(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// httplib's client (plain or TLS: `Base`) with its socket read and written
// through a BoundedStream. process_socket is the library's hook for how a
// connected socket becomes a Stream.
template <class Base>
class BoundedClient final : public Base {
 public:
  BoundedClient(const Url& url, Bounds& b) : Base(url.host, url.port), b_(b) {}

 private:
  using Socket = httplib::ClientImpl::Socket;
  bool process_socket(const Socket& socket,
                      std::function<bool(httplib::Stream&)> callback) override {
    BoundedStream stream(socket.sock, socket.ssl, b_);
    return callback(stream);
  }

  Bounds& b_;
};

std::unique_ptr<httplib::ClientImpl> make_client(const Url& url,
                                                 const Credentials& who,
                                                 Bounds& b) {
  std::unique_ptr<httplib::ClientImpl> client;
  if (url.https)
    client = std::make_unique<BoundedClient<httplib::SSLClient>>(url, b);
  else
    client = std::make_unique<BoundedClient<httplib::ClientImpl>>(url, b);
  // Each phase gets the whole budget; the deadline ends them all together.
  client->set_connection_timeout(seconds(b.total_s));
  client->set_read_timeout(seconds(b.total_s));
  client->set_write_timeout(seconds(b.total_s));
  client->set_keep_alive(false);
  client->set_socket_options([&b](socket_t fd) { b.cancel->adopt(fd); });
  if (!who.user.empty()) client->set_basic_auth(who.user, who.password);
  if (!who.bearer_token.empty())
    client->set_bearer_token_auth(who.bearer_token);
  if (!who.ca_file.empty())
    client->set_ca_cert_path(who.ca_file);
  else if (url.https && !fallback_ca_bundle().empty())
    client->set_ca_cert_path(fallback_ca_bundle());
  return client;
}

// "cannot reach URL: why" for a request that got no HTTP answer.
std::string cannot_reach(const Url& url, const Credentials& who,
                         httplib::Error e) {
  std::string why;
  switch (e) {
    case httplib::Error::Connection:
      why = "no connection (is the server running and listening there?)";
      break;
    case httplib::Error::Read:
      why = "no answer in time";
      break;
    case httplib::Error::SSLConnection:
      why = "the TLS handshake failed (is it https on that port?)";
      break;
    case httplib::Error::SSLServerVerification:
      why = who.ca_file.empty()
                ? "its certificate is not trusted (give " + who.ca_option +
                      " with the server's certificate or the CA that "
                      "signed it)"
                : "its certificate is not trusted by " + who.ca_option + " " +
                      who.ca_file + " (or does not name this host)";
      break;
    default:
      why = httplib::to_string(e);
  }
  return "cannot reach " + url.text + ": " + why;
}

// The request line's target: the URL's path, the request's path, then the
// URL's query, a query written into the request's path, and its fields.
std::string target(const Url& url, const Request& r) {
  std::string path = url.path + r.path, query;
  std::string in_path;
  if (auto q = path.find('?'); q != std::string::npos) {
    in_path = path.substr(q + 1);
    path.resize(q);
  }
  for (const std::string& part : {url.query, in_path, encode_query(r.query)}) {
    if (part.empty()) continue;
    if (!query.empty()) query += '&';
    query += part;
  }
  if (path.empty()) path = "/";
  return query.empty() ? path : path + "?" + query;
}

// What ended a request that got no whole reply, in one line.
std::string stop_error(Stop why, const Url& url, const Credentials& who,
                       double total_s, httplib::Error e) {
  switch (why) {
    case Stop::kDeadline:
      // To a tenth: a deadline that is what was left of a round's reads
      // as "10s", not "9.99999s".
      return "cannot reach " + url.text + ": no complete reply within " +
             number_text(std::round(total_s * 10) / 10) + "s";
    case Stop::kCancelled:
      return "stopped";
    case Stop::kHeadTooLarge:
      return url.text + ": the reply's headers exceed " +
             std::to_string(kMaxReplyHeadLines) + " lines or " +
             size_text(kMaxReplyHeadBytes);
    case Stop::kNone:
      break;
  }
  return cannot_reach(url, who, e);
}

}  // namespace

std::string Reply::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() &&
        std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      return v;
  return "";
}

std::string encode_query(const Fields& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += httplib::detail::encode_query_param(name) + "=" +
           httplib::detail::encode_query_param(value);
  }
  return out;
}

Reply send(const Url& url, const Credentials& who, const Request& request,
           RequestCancel& cancel) {
  Bounds b;
  b.total_s = request.total_s;
  b.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(b.total_s));
  b.cancel = &cancel;
  auto client = make_client(url, who, b);

  Reply reply;
  httplib::Request req;
  req.method = request.method;
  req.path = target(url, request);
  for (const auto& [k, v] : request.headers) req.headers.emplace(k, v);
  if (!request.content_type.empty())
    req.headers.emplace("Content-Type", request.content_type);
  req.body = request.body;
  bool too_big = false, refused = false;
  size_t received = 0;
  req.response_handler = [&](const httplib::Response& head) {
    reply.status = head.status;
    for (const auto& [k, v] : head.headers) reply.headers.emplace_back(k, v);
    refused = request.on_head && !request.on_head(reply);
    return !refused;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    received += len;
    if (received > request.max_body_bytes) {
      too_big = true;
      return false;
    }
    if (!request.on_body) {
      reply.body.append(data, len);
      return true;
    }
    refused = !request.on_body(std::string_view(data, len));
    return !refused;
  };

  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool sent = false;
  {
    // Connecting and the TLS handshake happen in httplib, each phase
    // waiting up to total_s: at the deadline this shuts the socket down.
    std::jthread watchdog([&b](std::stop_token stop) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      cv.wait_until(lock, stop, b.deadline, [] { return false; });
      if (!stop.stop_requested()) b.ended();
    });
    sent = !cancel.cancelled() && client->send(req, res, error);
  }
  Stop why = b.stop.load();
  if (!sent && why == Stop::kNone && cancel.cancelled()) why = Stop::kCancelled;
  cancel.release();
  reply.status = res.status > 0 ? res.status : reply.status;
  reply.ok = sent && why == Stop::kNone && !too_big && !refused;
  if (reply.ok) return reply;
  reply.final = too_big || error == httplib::Error::SSLServerVerification;
  if (too_big)
    reply.error = url.text + request.path + ": the reply is larger than " +
                  size_text(request.max_body_bytes);
  else if (refused && why == Stop::kNone)
    reply.error = url.text + request.path + ": the reply was not taken";
  else
    reply.error = stop_error(why, url, who, request.total_s, error);
  return reply;
}

}  // namespace gd::http
