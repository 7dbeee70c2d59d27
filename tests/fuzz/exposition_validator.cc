#include "exposition_validator.h"

#include <cctype>
#include <charconv>
#include <set>

namespace gd::fuzz {
namespace {

bool name_start(char c, bool colon_ok) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         (colon_ok && c == ':');
}
bool name_char(char c, bool colon_ok) {
  return name_start(c, colon_ok) || std::isdigit(static_cast<unsigned char>(c));
}

// Consumes a metric name (colon_ok) or label name from the front of `s`.
std::string_view take_name(std::string_view& s, bool colon_ok) {
  size_t n = 0;
  if (!s.empty() && name_start(s[0], colon_ok))
    while (n < s.size() && name_char(s[n], colon_ok)) ++n;
  std::string_view name = s.substr(0, n);
  s.remove_prefix(n);
  return name;
}

// Length of the UTF-8 sequence at the front of `s`; 0 when invalid.
size_t utf8_length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  size_t n = c < 0x80         ? 1
             : (c >> 5) == 6  ? 2
             : (c >> 4) == 14 ? 3
             : (c >> 3) == 30 ? 4
                              : 0;
  if (n == 0 || n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(i) & 0xC0) != 0x80) return 0;
  if (n == 2 && c < 0xC2) return 0;                   // overlong
  if (n == 3 && c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
  if (n == 3 && c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
  if (n == 4 &&
      (c > 0xF4 || (c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90)))
    return 0;
  return n;
}

bool valid_utf8(std::string_view s) {
  while (!s.empty()) {
    const size_t n = utf8_length(s);
    if (n == 0) return false;
    s.remove_prefix(n);
  }
  return true;
}

bool valid_value(std::string_view v) {
  if (v == "NaN" || v == "+Inf" || v == "-Inf") return true;
  double d = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  return ec == std::errc() && p == v.data() + v.size() &&
         v.find_first_of("in") == std::string_view::npos;  // no inf/nan words
}

// Consumes '"value"' from the front of `s`; false when badly escaped.
bool take_label_value(std::string_view& s) {
  if (s.empty() || s[0] != '"') return false;
  s.remove_prefix(1);
  while (!s.empty() && s[0] != '"') {
    if (s[0] == '\\') {
      if (s.size() < 2 || (s[1] != '\\' && s[1] != '"' && s[1] != 'n'))
        return false;
      s.remove_prefix(2);
    } else {
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return false;
  s.remove_prefix(1);
  return true;
}

std::string sample_error(std::string_view line, const std::string& family,
                         std::set<std::string>& series) {
  std::string_view s = line;
  const std::string_view name = take_name(s, true);
  if (name.empty()) return "no metric name";
  if (name != family)
    return "sample of '" + std::string(name) + "' outside its family '" +
           family + "'";
  if (!s.empty() && s[0] == '{') {
    s.remove_prefix(1);
    std::set<std::string_view> seen;
    while (!s.empty() && s[0] != '}') {
      const std::string_view label = take_name(s, false);
      if (label.empty()) return "bad label name";
      if (!seen.insert(label).second) return "label given twice";
      if (s.empty() || s[0] != '=') return "no '=' after a label name";
      s.remove_prefix(1);
      if (!take_label_value(s)) return "badly quoted label value";
      if (!s.empty() && s[0] == ',')
        s.remove_prefix(1);
      else if (s.empty() || s[0] != '}')
        return "no ',' or '}' after a label";
    }
    if (s.empty()) return "labels not closed";
    s.remove_prefix(1);
  }
  const std::string_view key = line.substr(0, line.size() - s.size());
  if (!series.emplace(key).second) return "duplicate series";
  if (s.empty() || s[0] != ' ') return "no space before the value";
  s.remove_prefix(1);
  if (!valid_value(s)) return "bad value '" + std::string(s) + "'";
  return "";
}

std::string comment_error(std::string_view line, std::string& family,
                          std::set<std::string>& families) {
  std::string_view s = line.substr(1);
  if (!s.starts_with(" HELP ") && !s.starts_with(" TYPE ")) return "";
  const bool is_type = s.starts_with(" TYPE ");
  s.remove_prefix(6);
  const std::string_view name = take_name(s, true);
  if (name.empty()) return "no metric name";
  if (s.empty() || s[0] != ' ') return "no space after the name";
  s.remove_prefix(1);
  if (!is_type) {
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == '\\' &&
          (i + 1 == s.size() || (s[i + 1] != '\\' && s[i + 1] != 'n')))
        return "bad escape in HELP";
      else if (s[i] == '\\')
        ++i;
    return "";
  }
  if (s != "counter" && s != "gauge" && s != "histogram" && s != "summary" &&
      s != "untyped")
    return "unknown type '" + std::string(s) + "'";
  if (!families.emplace(name).second) return "family typed twice";
  family = std::string(name);
  return "";
}

}  // namespace

std::string exposition_error(std::string_view page) {
  if (!valid_utf8(page)) return "not valid UTF-8";
  if (!page.empty() && page.back() != '\n') return "no final line feed";
  std::string family;
  std::set<std::string> families, series;
  size_t number = 0;
  while (!page.empty()) {
    const size_t nl = page.find('\n');
    const std::string_view line = page.substr(0, nl);
    page.remove_prefix(nl + 1);
    ++number;
    if (line.empty()) continue;
    const std::string error = line[0] == '#'
                                  ? comment_error(line, family, families)
                                  : sample_error(line, family, series);
    if (!error.empty())
      return "line " + std::to_string(number) + ": " + error + ": " +
             std::string(line);
  }
  return "";
}

}  // namespace gd::fuzz
