#include "cli/prometheus_credentials.h"

#include <fstream>
#include <stdexcept>

#include "common/secret_file.h"
#include "promsource/node_match.h"

namespace gd {
namespace {

// A secret's file: its first line, as tokens and passwords are kept (a
// flag's value would show in ps and shell history), bounded and without
// control bytes (common/secret_file.h).
std::string first_line(const std::string& flag, const std::string& path) {
  try {
    return read_secret_line(path);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(flag, e.what());
  }
}

}  // namespace

http::Url prometheus_url(const PrometheusFlags& f) {
  try {
    return http::parse_url(f.url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--prometheus", e.what());
  }
}

http::Credentials prometheus_credentials(const PrometheusFlags& f) {
  http::Credentials who;
  if (!f.bearer_token_file.empty() && !f.user.empty())
    throw CLI::ValidationError("--bearer-token-file",
                               "and --basic-auth-user exclude each other");
  if (f.user.empty() != f.password_file.empty())
    throw CLI::ValidationError(
        f.user.empty() ? "--password-file" : "--basic-auth-user",
        "--basic-auth-user and --password-file go together");
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

void check_node_label(const PrometheusFlags& f) {
  if (f.node_label.empty()) return;
  try {
    promsource::check_label_name(f.node_label);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--node-label", e.what());
  }
}

}  // namespace gd
