// The one redactor of secrets in command lines (and other argv-like text)
// that gpudoctor hands to anyone who is not the local user, e.g. serve's
// JSON API. Each secret value is replaced by kRedacted; the rest of the text
// is kept, so the command stays recognisable.
//
// What counts as a secret (names compared case-insensitively):
//   - the value of an option whose name contains key, token, secret,
//     password, passwd, credential or auth: "--api-key=V", "--api-key V",
//     "-token=V", "--db-password V";
//   - the value of KEY=VALUE words whose KEY contains one of those words
//     (AWS_SECRET_ACCESS_KEY=V, HF_TOKEN=V, PGPASSWORD=V), also inside an
//     option value ("--env=API_TOKEN=V");
//   - URL user info: "https://user:pass@host" ->
//   "https://user:<redacted>@host",
//     "https://tok@host" -> "https://<redacted>@host";
//   - the word after "Bearer".
// Not redacted: "-p V" (a port or pid far more often than a password; use
// --password=), secrets with no name in front of them.
#pragma once

#include <string>
#include <string_view>

namespace gd {

inline constexpr std::string_view kRedacted = "<redacted>";

std::string redact_secrets(std::string_view text);

}  // namespace gd
