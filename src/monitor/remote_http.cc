#include "monitor/remote_http.h"

#include <chrono>

namespace gd::monitor {
namespace {

std::chrono::microseconds seconds(double s) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(s));
}

}  // namespace

std::unique_ptr<httplib::Client> remote_client(const RemoteOptions& o,
                                               const RemoteUrl& url,
                                               double read_timeout_s) {
  auto client = std::make_unique<httplib::Client>(url.scheme_host_port);
  client->set_connection_timeout(seconds(o.request_timeout_s));
  client->set_write_timeout(seconds(o.request_timeout_s));
  client->set_read_timeout(seconds(read_timeout_s));
  client->set_keep_alive(false);
  if (!o.user.empty()) client->set_basic_auth(o.user, o.password);
  if (!o.ca_file.empty()) client->set_ca_cert_path(o.ca_file);
  return client;
}

std::string cannot_reach(const RemoteOptions& o, httplib::Error e) {
  std::string why;
  switch (e) {
    case httplib::Error::Connection:
      why = "no connection (is serve running and listening there?)";
      break;
    case httplib::Error::Read:
      why = "no answer in time";
      break;
    case httplib::Error::SSLConnection:
      why = "the TLS handshake failed (is it https on that port?)";
      break;
    case httplib::Error::SSLServerVerification:
      why = o.ca_file.empty()
                ? "its certificate is not trusted (give --ca-file with "
                  "serve's certificate or the CA that signed it)"
                : "its certificate is not trusted by --ca-file " + o.ca_file +
                      " (or does not name this host)";
      break;
    default:
      why = httplib::to_string(e);
  }
  return "cannot reach " + o.url + ": " + why;
}

}  // namespace gd::monitor
