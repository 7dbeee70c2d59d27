#include "trace/faults_json.h"

#include <simdjson.h>

#include "trace/trace_io.h"

namespace gd {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// s[i] is the opening quote; returns the index after the closing quote.
size_t skip_string(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return s.size();
}

// Returns the index just after the JSON value that starts at s[i].
size_t skip_value(std::string_view s, size_t i) {
  if (i >= s.size()) return i;
  if (s[i] == '"') return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = skip_string(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return i;
  }
  // Scalar: number, true, false, null.
  while (i < s.size() && !is_space(s[i]) && s[i] != ',' && s[i] != '}' &&
         s[i] != ']') {
    ++i;
  }
  return i;
}

bool key_equals(std::string_view quoted_key, std::string_view name) {
  std::string_view inner = quoted_key.substr(1, quoted_key.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner == name;
  simdjson::dom::parser parser;
  simdjson::padded_string padded(quoted_key);
  std::string_view decoded;
  if (parser.parse(padded).get_string().get(decoded)) return false;
  return decoded == name;
}

}  // namespace

std::string_view raw_top_level_member(std::string_view s,
                                      std::string_view name) {
  size_t i = skip_space(s, 0);
  if (i >= s.size() || s[i] != '{') return {};
  ++i;
  while (true) {
    i = skip_space(s, i);
    if (i >= s.size() || s[i] != '"') return {};
    const size_t key_end = skip_string(s, i);
    const std::string_view key = s.substr(i, key_end - i);
    i = skip_space(s, key_end);
    if (i >= s.size() || s[i] != ':') return {};
    const size_t value_begin = skip_space(s, i + 1);
    const size_t value_end = skip_value(s, value_begin);
    if (key_equals(key, name)) {
      return s.substr(value_begin, value_end - value_begin);
    }
    i = skip_space(s, value_end);
    if (i >= s.size() || s[i] != ',') return {};
    ++i;
  }
}

void append_faults_json(std::string& out, std::string_view raw) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(raw);
  simdjson::dom::element ignored;
  if (auto err = parser.parse(padded).get(ignored)) {
    throw TraceError(std::string("header faults_json is not valid JSON: ") +
                     simdjson::error_message(err));
  }
  const size_t begin = out.size();
  out.append(raw);
  for (size_t i = begin; i < out.size(); ++i) {
    if (out[i] == '\n' || out[i] == '\r') out[i] = ' ';
  }
}

}  // namespace gd
