// https through the one client: a self-signed server (made by the openssl
// command, as an operator makes one for serve's --web-config) is refused
// without its certificate, in words that say what to give, and reached with
// it as the CA file.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "http_client/client.h"

namespace gd::http {
namespace {

class SelfSignedServer {
 public:
  SelfSignedServer() {
    char dir[] = "/tmp/gd_tls_test_XXXXXX";
    if (!::mkdtemp(dir)) throw std::runtime_error("mkdtemp");
    dir_ = dir;
    crt_ = dir_ + "/server.crt";
    const std::string key = dir_ + "/server.key";
    const std::string cmd =
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + key + " -out " +
        crt_ +
        " -days 1 -subj /CN=localhost -addext "
        "subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1";
    made_ = std::system(cmd.c_str()) == 0;
    if (!made_) return;
    server_ = std::make_unique<httplib::SSLServer>(crt_.c_str(), key.c_str());
    server_->Get("/api/v1/status",
                 [](const httplib::Request&, httplib::Response& res) {
                   res.set_content("secure", "text/plain");
                 });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~SelfSignedServer() {
    if (server_) {
      server_->stop();
      thread_.join();
    }
    std::filesystem::remove_all(dir_);
  }
  bool made() const { return made_; }
  std::string url() const {
    return "https://127.0.0.1:" + std::to_string(port_);
  }
  const std::string& crt() const { return crt_; }

 private:
  std::string dir_, crt_;
  bool made_ = false;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(HttpClientTls, TrustedOnlyWithItsCertificateAsTheCaFile) {
  SelfSignedServer server;
  ASSERT_TRUE(server.made()) << "the openssl command could not make a "
                                "certificate (install openssl)";
  Request req;
  req.path = "/api/v1/status";
  req.total_s = 10;
  RequestCancel cancel;
  Credentials who;
  Reply r = send(parse_url(server.url()), who, req, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "cannot reach " + server.url() +
                         ": its certificate is not trusted (give --ca-file "
                         "with the server's certificate or the CA that "
                         "signed it)");
  who.ca_file = server.crt();
  r = send(parse_url(server.url()), who, req, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "secure");
}

}  // namespace
}  // namespace gd::http
