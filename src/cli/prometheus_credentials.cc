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

http::Url prometheus_url(const PrometheusFlags& f,
                         const std::string& flag_prefix) {
  try {
    return http::parse_url(f.url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(flag_prefix + "prometheus", e.what());
  }
}

http::Credentials prometheus_credentials(const PrometheusFlags& f,
                                         const std::string& flag_prefix) {
  const std::string token_flag = flag_prefix + "bearer-token-file";
  const std::string user_flag = flag_prefix + "basic-auth-user";
  const std::string password_flag = flag_prefix + "password-file";
  const std::string ca_flag = flag_prefix + "ca-file";
  http::Credentials who;
  // Named when the server's certificate is not trusted, ca_file given or not.
  who.ca_option = ca_flag;
  if (!f.bearer_token_file.empty() && !f.user.empty())
    throw CLI::ValidationError(token_flag + " and " + user_flag +
                               " exclude each other");
  if (f.user.empty() != f.password_file.empty())
    throw CLI::ValidationError(user_flag + " and " + password_flag +
                               " go together");
  if (!f.bearer_token_file.empty())
    who.bearer_token = first_line(token_flag, f.bearer_token_file);
  if (!f.user.empty()) {
    who.user = f.user;
    who.password = first_line(password_flag, f.password_file);
  }
  if (!f.ca_file.empty()) {
    if (f.url.rfind("https://", 0) != 0)
      throw CLI::ValidationError(ca_flag + " is for an https:// " +
                                 flag_prefix + "prometheus");
    if (!std::ifstream(f.ca_file))
      throw CLI::ValidationError(ca_flag, f.ca_file + ": cannot read it");
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
