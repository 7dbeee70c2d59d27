#include "exporter/prom_text.h"

#include <fmt/format.h>

#include <cmath>

namespace gd::prom {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at text[i], or 0 if it is invalid
// (truncated, overlong, surrogate, above U+10FFFF).
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len]) return 0;       // overlong
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;  // surrogate
  if (cp > 0x10FFFF) return 0;
  return len;
}

// Appends `value` escaped, stopping before the output would exceed
// `max_bytes` (SIZE_MAX: no cap). Returns nothing; cuts only between
// characters.
void append_escaped(std::string& out, std::string_view value,
                    size_t max_bytes) {
  size_t written = 0;
  auto fits = [&](size_t n) { return written + n <= max_bytes; };
  for (size_t i = 0; i < value.size();) {
    const char c = value[i];
    std::string_view piece;
    char buf[2];
    size_t consumed = 1;
    if (c == '\\' || c == '"') {
      buf[0] = '\\';
      buf[1] = c;
      piece = {buf, 2};
    } else if (c == '\n') {
      piece = "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      piece = kReplacement;
    } else {
      size_t len = utf8_sequence_length(value, i);
      if (len == 0) {
        piece = kReplacement;
      } else {
        piece = value.substr(i, len);
        consumed = len;
      }
    }
    if (!fits(piece.size())) return;
    out.append(piece);
    written += piece.size();
    i += consumed;
  }
}

}  // namespace

void append_label_value(std::string& out, std::string_view value) {
  append_escaped(out, value, SIZE_MAX);
}

void append_untrusted_label_value(std::string& out, std::string_view value,
                                  size_t max_bytes) {
  append_escaped(out, value, max_bytes);
}

void append_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<int64_t>(v));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

void append_value(std::string& out, uint64_t v) {
  fmt::format_to(std::back_inserter(out), "{}", v);
}

void append_family_header(std::string& out, std::string_view name,
                          std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

Labels& Labels::add(std::string_view name, std::string_view value) {
  comma();
  body_ += name;
  body_ += "=\"";
  append_label_value(body_, value);
  body_ += '"';
  return *this;
}

Labels& Labels::add(std::string_view name, int64_t value) {
  comma();
  fmt::format_to(std::back_inserter(body_), "{}=\"{}\"", name, value);
  return *this;
}

Labels& Labels::add_untrusted(std::string_view name, std::string_view value) {
  comma();
  body_ += name;
  body_ += "=\"";
  append_untrusted_label_value(body_, value);
  body_ += '"';
  return *this;
}

Labels& Labels::add_raw(std::string_view rendered) {
  if (rendered.empty()) return *this;
  comma();
  body_ += rendered;
  return *this;
}

namespace {
void append_series_name(std::string& out, std::string_view name,
                        std::string_view label_body) {
  out += name;
  if (!label_body.empty()) {
    out += '{';
    out += label_body;
    out += '}';
  }
  out += ' ';
}
}  // namespace

void append_sample(std::string& out, std::string_view name,
                   std::string_view label_body, double v) {
  append_series_name(out, name, label_body);
  append_value(out, v);
  out += '\n';
}

void append_sample(std::string& out, std::string_view name,
                   std::string_view label_body, uint64_t v) {
  append_series_name(out, name, label_body);
  append_value(out, v);
  out += '\n';
}

void prepend_label(std::string& page, size_t from, std::string_view name,
                   std::string_view value) {
  if (from >= page.size()) return;
  std::string label(name);
  label += "=\"";
  append_label_value(label, value);
  label += '"';
  // Only the part from `from` is rewritten: the page before it (dcgm-exporter's
  // families, most of it) is neither copied nor moved.
  std::string out;
  out.reserve((page.size() - from) + (page.size() - from) / 8);
  size_t at = from;
  while (at < page.size()) {
    size_t eol = page.find('\n', at);
    if (eol == std::string::npos) eol = page.size();
    const std::string_view line(page.data() + at, eol - at);
    // A metric name holds neither '{' nor ' ': the first of them ends it.
    const size_t cut = line.find_first_of("{ ");
    if (line.empty() || line[0] == '#' || cut == std::string_view::npos) {
      out += line;
    } else if (line[cut] == '{') {
      out.append(line.substr(0, cut + 1));
      out += label;
      if (line.size() > cut + 1 && line[cut + 1] != '}') out += ',';
      out.append(line.substr(cut + 1));
    } else {
      out.append(line.substr(0, cut));
      out += '{';
      out += label;
      out += '}';
      out.append(line.substr(cut));
    }
    if (eol < page.size()) out += '\n';
    at = eol + 1;
  }
  page.resize(from);
  page += out;
}

}  // namespace gd::prom
