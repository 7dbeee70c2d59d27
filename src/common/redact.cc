#include "common/redact.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/ascii_text.h"

namespace gd {

namespace {

// A name (option or variable) that names a credential.
bool names_secret(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kWords = {
      "key", "token", "secret", "password", "passwd", "credential", "auth"};
  std::string n = ascii_lower(name);
  return std::any_of(kWords.begin(), kWords.end(), [&](std::string_view w) {
    return n.find(w) != std::string::npos;
  });
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
         c == '.';
}

// "scheme://userinfo@host...": the password (or a lone token) of the user
// info redacted. Returns false when `word` has no user info.
bool redact_url(std::string_view word, std::string& out) {
  size_t scheme = word.find("://");
  if (scheme == std::string_view::npos) return false;
  size_t start = scheme + 3;
  size_t end = word.find_first_of("/?#", start);
  std::string_view authority =
      word.substr(start, end == std::string_view::npos ? end : end - start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos || at == 0) return false;
  std::string_view userinfo = authority.substr(0, at);
  size_t colon = userinfo.find(':');
  out.append(word.substr(0, start));
  if (colon != std::string_view::npos) {
    out.append(userinfo.substr(0, colon + 1));
    out.append(kRedacted);
  } else {
    out.append(kRedacted);
  }
  out.append(word.substr(start + at));
  return true;
}

// One space-free word; `secret_follows` is set when the next word is the
// value of a secret-named option ("--api-key V").
void redact_word(std::string_view word, std::string& out, bool& secret_follows,
                 bool look_inside = true) {
  secret_follows = false;
  if (redact_url(word, out)) return;
  size_t dashes = 0;
  while (dashes < word.size() && dashes < 2 && word[dashes] == '-') ++dashes;
  size_t eq = word.find('=');
  std::string_view name =
      word.substr(dashes, eq == std::string_view::npos ? eq : eq - dashes);
  bool plain_name =
      !name.empty() && std::all_of(name.begin(), name.end(), is_name_char);
  if (eq == std::string_view::npos) {
    // "--api-key" alone: its value is the next word. A bare word (no dash)
    // is an argument, not an option name.
    secret_follows = dashes > 0 && plain_name && names_secret(name);
    out.append(word);
    if (ascii_lower(word) == "bearer") secret_follows = true;
    return;
  }
  if (plain_name && names_secret(name)) {
    out.append(word.substr(0, eq + 1));
    out.append(kRedacted);
    return;
  }
  // "--env=API_TOKEN=V": look one level (no deeper) into the value.
  out.append(word.substr(0, eq + 1));
  bool ignored;
  if (look_inside)
    redact_word(word.substr(eq + 1), out, ignored, false);
  else
    out.append(word.substr(eq + 1));
}

}  // namespace

std::string redact_secrets(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool secret_next = false;
  size_t i = 0;
  while (i <= text.size()) {
    size_t sp = text.find(' ', i);
    if (sp == std::string_view::npos) sp = text.size();
    std::string_view word = text.substr(i, sp - i);
    if (!word.empty()) {
      if (secret_next && word.front() != '-') {
        out.append(kRedacted);
        secret_next = false;
      } else {
        redact_word(word, out, secret_next);
      }
    }
    if (sp == text.size()) break;
    out += ' ';
    i = sp + 1;
  }
  return out;
}

}  // namespace gd
