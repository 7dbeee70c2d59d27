#include "cli/export_prometheus.h"

#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <stdexcept>

#include "http_client/prometheus_api.h"
#include "promsource/node_match.h"
#include "promsource/read_node.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

// A secret's file: its first line, as tokens and passwords are kept (a
// flag's value would show in ps and shell history).
std::string first_line(const std::string& flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CLI::ValidationError(flag, path + ": cannot read it");
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty())
    throw CLI::ValidationError(flag, path + ": the first line is empty");
  return line;
}

http::Credentials credentials(const PrometheusExportFlags& f) {
  http::Credentials who;
  if (!f.bearer_token_file.empty() && !f.user.empty())
    throw CLI::ValidationError("--bearer-token-file",
                               "and --user exclude each other");
  if (f.user.empty() != f.password_file.empty())
    throw CLI::ValidationError(f.user.empty() ? "--password-file" : "--user",
                               "--user and --password-file go together");
  if (!f.bearer_token_file.empty())
    who.bearer_token = first_line("--bearer-token-file", f.bearer_token_file);
  if (!f.user.empty()) {
    who.user = f.user;
    who.password = first_line("--password-file", f.password_file);
  }
  if (!f.ca_file.empty()) {
    if (f.url.rfind("https://", 0) != 0)
      throw CLI::ValidationError("--ca-file",
                                 "is for an https:// --prometheus");
    if (!std::ifstream(f.ca_file))
      throw CLI::ValidationError("--ca-file", f.ca_file + ": cannot read it");
    who.ca_file = f.ca_file;
  }
  return who;
}

}  // namespace

size_t export_prometheus(const PrometheusExportFlags& f) {
  http::Url url;
  try {
    url = http::parse_url(f.url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--prometheus", e.what());
  }
  try {
    promsource::check_node_name(f.node);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--node", e.what());
  }
  http::prom::Client client(url, credentials(f));
  // A TLS connection ended on our side is still written to by OpenSSL's
  // close_notify: EPIPE, not a SIGPIPE that ends the export silently.
  std::signal(SIGPIPE, SIG_IGN);
  http::RequestCancel cancel;
  promsource::NodeQuery q{f.node, f.start, f.end, f.step_s};
  promsource::NodeWindow window = [&] {
    try {
      return promsource::read_node(client, q, cancel);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--since/--until/--step", e.what());
    }
  }();
  size_t n = 0;
  TraceWriter writer(f.out);
  writer.write_header(window.header());
  window.each_sample([&](const Sample& s) {
    writer.write_sample(s);
    ++n;
  });
  writer.close();
  return n;
}

}  // namespace gd
