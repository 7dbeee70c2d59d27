// Low-level pieces of the Prometheus text exposition format 0.0.4: label
// value escaping, number formatting, family headers. Everything that ends
// up between quotes goes through here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gd::prom {

// Longest label value taken from untrusted input (process and user names):
// long enough for any comm (15 bytes) or user name, short enough that a
// hostile process cannot bloat every scrape.
inline constexpr size_t kMaxUntrustedLabelBytes = 128;

// Escapes a label value per the exposition format: backslash, double quote
// and line feed become \\, \" and \n. Invalid UTF-8 and other control
// characters are replaced by U+FFFD so the payload stays valid UTF-8.
void append_label_value(std::string& out, std::string_view value);

// For values a process controls: as above, then cut to at most `max_bytes`
// bytes of output text (never inside a UTF-8 character or an escape).
void append_untrusted_label_value(std::string& out, std::string_view value,
                                  size_t max_bytes = kMaxUntrustedLabelBytes);

// Sample values: integers exactly, others shortest round-trip; NaN, +Inf,
// -Inf as the format spells them.
void append_value(std::string& out, double v);
void append_value(std::string& out, uint64_t v);

// "# HELP name help\n# TYPE name type\n". `help` is escaped (\\ and \n).
void append_family_header(std::string& out, std::string_view name,
                          std::string_view type, std::string_view help);

// Builds one series' label set: {a="x",b="y"}.
class Labels {
 public:
  Labels& add(std::string_view name, std::string_view value);
  Labels& add(std::string_view name, int64_t value);
  Labels& add_untrusted(std::string_view name, std::string_view value);
  // Appends the pre-rendered text of another set (without braces).
  Labels& add_raw(std::string_view rendered);
  // "" when empty, else "{...}".
  std::string str() const { return body_.empty() ? "" : "{" + body_ + "}"; }
  const std::string& body() const { return body_; }

 private:
  void comma() {
    if (!body_.empty()) body_ += ',';
  }
  std::string body_;
};

// Puts `name="value"` first in the label set of every sample line of
// `page` from byte `from` on (lines this exporter wrote: comments are left
// alone). serve's gpudoctor_* series carry dcgm-exporter's Hostname label
// this way, in one place rather than in every family.
void prepend_label(std::string& page, size_t from, std::string_view name,
                   std::string_view value);

// name{labels} value\n
void append_sample(std::string& out, std::string_view name,
                   std::string_view label_body, double v);
void append_sample(std::string& out, std::string_view name,
                   std::string_view label_body, uint64_t v);

}  // namespace gd::prom
