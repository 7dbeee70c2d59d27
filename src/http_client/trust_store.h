// Which CA certificates verify an https:// server when the user named none
// (--ca-file). The release bundle carries Debian's OpenSSL, which looks in
// Debian's places (/usr/lib/ssl/cert.pem and certs/, i.e. /etc/ssl/certs);
// on RHEL, SUSE or Alpine those do not exist and every https:// URL would
// fail verification. There the system's own bundle is used instead.
#pragma once

#include <string>
#include <vector>

namespace gd::http {

// The systems' CA bundles, in the order they are tried: Debian/Ubuntu,
// RHEL/Fedora/Rocky (two names of one file), SUSE, Alpine.
inline const std::vector<std::string> kSystemCaBundles = {
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
};

// "" when OpenSSL's own defaults find certificates: SSL_CERT_FILE or
// SSL_CERT_DIR is set, or `default_file` exists, or `default_dir` holds a
// file. Else the first of `candidates` that is a readable file; "" when
// none is (verification then fails, and the error names --ca-file).
std::string fallback_ca_bundle(const std::string& default_file,
                               const std::string& default_dir,
                               const std::vector<std::string>& candidates);

// The same with the linked OpenSSL's compiled-in places and
// kSystemCaBundles; worked out once.
const std::string& fallback_ca_bundle();

}  // namespace gd::http
