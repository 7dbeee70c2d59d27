#include "kernellog/log_line_prefix.h"

#include <cctype>

#include "common/ascii_text.h"

namespace gd::kernellog {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "[...]" at the front, then blanks: dmesg's monotonic or ctime stamp.
std::string_view drop_bracket_stamp(std::string_view s) {
  if (s.empty() || s.front() != '[') return s;
  size_t close = s.find(']');
  // A stamp is short; a ']' far away belongs to the message.
  if (close == std::string_view::npos || close > 40) return s;
  return trim(s.substr(close + 1));
}

}  // namespace

size_t kmsg_header_length(std::string_view line) {
  // At least three comma-separated fields, the first three numeric, then ';'
  // before any blank.
  size_t i = 0;
  for (int field = 0; field < 3; ++field) {
    size_t start = i;
    while (i < line.size() && is_digit(line[i])) ++i;
    if (i == start || i >= line.size()) return 0;
    if (field < 2 && line[i] != ',') return 0;
    if (field < 2) ++i;
  }
  if (line[i] != ',' && line[i] != ';') return 0;
  size_t semi = line.find(';', i);
  if (semi == std::string_view::npos) return 0;
  for (size_t k = i; k < semi; ++k)
    if (line[k] == ' ') return 0;
  return semi + 1;
}

std::string_view kernel_message(std::string_view line) {
  std::string_view s = trim(line);
  if (size_t k = kmsg_header_length(s)) return trim(s.substr(k));
  if (!s.empty() && s.front() == '[') return drop_bracket_stamp(s);
  // syslog/journal: the message follows the first "kernel: " within the
  // header part of the line (date, host and tag take well under 80 chars).
  size_t tag = s.find("kernel: ");
  if (tag != std::string_view::npos && tag < 80) {
    return drop_bracket_stamp(trim(s.substr(tag + 8)));
  }
  if (s.starts_with("kernel:")) return drop_bracket_stamp(trim(s.substr(7)));
  return s;
}

std::optional<double> line_uptime_s(std::string_view line) {
  std::string_view s = trim(line);
  if (size_t k = kmsg_header_length(s)) {
    size_t a = s.find(','), b = s.find(',', a + 1);
    double usec = 0;
    for (size_t i = b + 1; i < k && is_digit(s[i]); ++i)
      usec = usec * 10 + (s[i] - '0');
    return usec / 1e6;
  }
  size_t tag = s.find("kernel: ");
  if (tag != std::string_view::npos && tag < 80) s = trim(s.substr(tag + 8));
  if (s.empty() || s.front() != '[') return std::nullopt;
  size_t close = s.find(']');
  if (close == std::string_view::npos || close > 40) return std::nullopt;
  std::string_view stamp = trim(s.substr(1, close - 1));
  double secs = 0, scale = 0;
  bool digits = false;
  for (char c : stamp) {
    if (c == '.' && scale == 0) {
      scale = 1;
    } else if (is_digit(c)) {
      digits = true;
      if (scale == 0) {
        secs = secs * 10 + (c - '0');
      } else {
        scale /= 10;
        secs += (c - '0') * scale;
      }
    } else {
      return std::nullopt;  // dmesg -T's "[Fri Aug 30 11:43:09 2024]"
    }
  }
  if (!digits) return std::nullopt;
  return secs;
}

}  // namespace gd::kernellog
