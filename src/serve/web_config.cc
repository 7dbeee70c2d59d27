#include "serve/web_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace gd {
namespace {

std::string read_text(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(what + ": cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string resolve(const std::string& base_dir, const std::string& file) {
  if (file.empty() || file.front() == '/' || base_dir.empty()) return file;
  return base_dir + "/" + file;
}

// exporter-toolkit's keys that gpudoctor does not implement.
const std::set<std::string> kUnsupportedTls = {"client_ca_file",
                                               "cipher_suites",
                                               "curve_preferences",
                                               "prefer_server_cipher_suites",
                                               "client_allowed_sans",
                                               "cert",
                                               "key"};

void check_keys(const YAML::Node& map, const std::string& where,
                const std::set<std::string>& known,
                const std::set<std::string>& unsupported = {}) {
  if (!map.IsMap()) throw std::invalid_argument(where + " must be a mapping");
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (unsupported.count(key))
      throw std::invalid_argument(where + "." + key +
                                  " is not supported by gpudoctor");
    if (!known.count(key))
      throw std::invalid_argument("unknown key " + where + "." + key);
  }
}

int tls_version(const std::string& v, const std::string& key) {
  static const std::vector<std::string> kNames = {"TLS10", "TLS11", "TLS12",
                                                  "TLS13"};
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == v) return static_cast<int>(i);
  throw std::invalid_argument("tls_server_config." + key + ": '" + v +
                              "' is not TLS10, TLS11, TLS12 or TLS13");
}

std::string scalar(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) throw std::invalid_argument(where + " must be a string");
  return n.as<std::string>();
}

WebConfig from_yaml(const YAML::Node& root, const std::string& base_dir);

}  // namespace

WebConfig parse_web_config(const std::string& text,
                           const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument("not YAML: line " +
                                std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  try {
    return from_yaml(root, base_dir);
  } catch (const YAML::Exception& e) {  // a key or value of the wrong kind
    throw std::invalid_argument("line " + std::to_string(e.mark.line + 1) +
                                ": " + e.msg);
  }
}

namespace {

WebConfig from_yaml(const YAML::Node& root, const std::string& base_dir) {
  WebConfig c;
  if (root.IsNull()) return c;
  check_keys(root, "web config", {"tls_server_config", "basic_auth_users"},
             {"http_server_config"});
  if (const auto tls = root["tls_server_config"]; tls && !tls.IsNull()) {
    check_keys(tls, "tls_server_config",
               {"cert_file", "key_file", "min_version", "max_version",
                "client_auth_type"},
               kUnsupportedTls);
    if (!tls["cert_file"] || !tls["key_file"])
      throw std::invalid_argument(
          "tls_server_config needs cert_file and key_file");
    if (const auto a = tls["client_auth_type"];
        a && scalar(a, "tls_server_config.client_auth_type") != "NoClientCert")
      throw std::invalid_argument("tls_server_config.client_auth_type: '" +
                                  a.as<std::string>() +
                                  "' is not supported by gpudoctor (only "
                                  "NoClientCert)");
    const int lo = tls["min_version"]
                       ? tls_version(scalar(tls["min_version"], "min_version"),
                                     "min_version")
                       : 2;
    const int hi = tls["max_version"]
                       ? tls_version(scalar(tls["max_version"], "max_version"),
                                     "max_version")
                       : 3;
    if (lo > hi)
      throw std::invalid_argument(
          "tls_server_config: min_version is above max_version");
    c.tls_priorities = "NORMAL:-VERS-ALL";
    for (int v = hi; v >= lo; --v)
      c.tls_priorities += ":+VERS-TLS1." + std::to_string(v);
    const std::string cert =
        resolve(base_dir, scalar(tls["cert_file"], "cert_file"));
    const std::string key =
        resolve(base_dir, scalar(tls["key_file"], "key_file"));
    c.cert_pem = read_text(cert, "tls_server_config.cert_file");
    c.key_pem = read_text(key, "tls_server_config.key_file");
    c.tls = true;
  }
  if (const auto users = root["basic_auth_users"]; users && !users.IsNull()) {
    if (!users.IsMap())
      throw std::invalid_argument("basic_auth_users must be a mapping");
    for (const auto& kv : users) {
      const std::string name = kv.first.as<std::string>();
      const std::string hash = scalar(kv.second, "basic_auth_users." + name);
      if (hash.size() < 60 || hash[0] != '$' || hash[1] != '2' ||
          (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') ||
          hash[3] != '$')
        throw std::invalid_argument("basic_auth_users." + name +
                                    ": not a bcrypt hash ($2a$, $2b$, $2y$)");
      c.basic_auth_users[name] = hash;
    }
  }
  return c;
}

}  // namespace

WebConfig load_web_config(const std::string& path) {
  try {
    const auto slash = path.rfind('/');
    const std::string dir =
        slash == std::string::npos ? "." : path.substr(0, slash);
    return parse_web_config(read_text(path, "file"), dir);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("web config " + path + ": " + e.what());
  }
}

}  // namespace gd
