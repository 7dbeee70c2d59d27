#include "api/json_read.h"

#include <stdexcept>

#include "common/bounded_json.h"

namespace gd::api {

using nlohmann::json;

namespace {

[[noreturn]] void wrong_type(const char* what, const char* key,
                             const char* type) {
  throw std::runtime_error(std::string(what) + ": '" + key + "' is not " +
                           type);
}

// The value of `key`, or nullptr when it is absent or null.
const json* field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

json parse_object(std::string_view body, const char* what) {
  json j = parse_bounded_json(body);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(std::string(what) +
                             ": the reply is not a JSON object");
  return j;
}

double number_or(const json& j, const char* key, double fallback,
                 const char* what) {
  const json* v = field(j, key);
  if (!v) return fallback;
  if (!v->is_number()) wrong_type(what, key, "a number");
  return v->get<double>();
}

std::optional<double> optional_number(const json& j, const char* key,
                                      const char* what) {
  const json* v = field(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(what, key, "a number");
  return v->get<double>();
}

std::string text_or_empty(const json& j, const char* key, size_t max_bytes,
                          const char* what) {
  const json* v = field(j, key);
  if (!v) return "";
  if (!v->is_string()) wrong_type(what, key, "a string");
  const auto& s = v->get_ref<const std::string&>();
  return s.substr(0, max_bytes);
}

std::optional<int64_t> optional_integer(const json& j, const char* key,
                                        int64_t lo, int64_t hi,
                                        const char* what) {
  const json* v = field(j, key);
  if (!v) return std::nullopt;
  // A double such as 1.5 or 1e300 is not a count; an unsigned too large for
  // int64 is out of range either way.
  if (!v->is_number_integer()) wrong_type(what, key, "a whole number");
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
    wrong_type(what, key, "in range");
  const int64_t n = v->get<int64_t>();
  if (n < lo || n > hi) wrong_type(what, key, "in range");
  return n;
}

}  // namespace gd::api
