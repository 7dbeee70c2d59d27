// --web-config FILE: TLS and basic auth, in the format of the Prometheus
// exporter-toolkit web configuration file that node_exporter reads:
//
//   tls_server_config:
//     cert_file: server.crt        # PEM; relative to the file's directory
//     key_file: server.key
//     min_version: TLS12           # TLS10..TLS13 (default TLS12)
//     max_version: TLS13
//     client_auth_type: NoClientCert
//   basic_auth_users:
//     prometheus: $2y$10$...       # bcrypt hash
//
// Keys of that format gpudoctor does not implement (client certificates,
// cipher_suites, http_server_config, ...) and unknown keys are errors, so a
// file never silently means less than it says.
#pragma once

#include <map>
#include <string>

namespace gd {

struct WebConfig {
  bool tls = false;
  std::string cert_pem, key_pem;
  std::string tls_priorities;  // GnuTLS priority string
  std::map<std::string, std::string> basic_auth_users;  // name -> bcrypt
};

// Throws std::invalid_argument "what is wrong" (YAML errors with line).
// Files named in `text` are read relative to `base_dir`.
WebConfig parse_web_config(const std::string& text,
                           const std::string& base_dir);

// Throws std::runtime_error "web config PATH: what is wrong".
WebConfig load_web_config(const std::string& path);

}  // namespace gd
