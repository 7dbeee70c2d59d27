// The trace-line parser's error paths (json_in_read.h): the message names
// the file, line and field ("trace.jsonl:7: gpus[1].temp_c: expected a
// number, got a string").
#include "trace/json_in_read.h"

#include <string>
#include <vector>

#include "trace/trace_io.h"

namespace gd::json_in {

namespace {

[[noreturn, gnu::noinline, gnu::cold]] void invalid_json(
    const std::string& where, simdjson::error_code err) {
  throw TraceError(where + ": invalid JSON: " + simdjson::error_message(err));
}

}  // namespace

std::string path_of(const Loc& loc, std::string_view key) {
  std::vector<const Loc*> chain;
  for (const Loc* l = &loc; l; l = l->parent) {
    if (!l->name.empty()) chain.push_back(l);
  }
  std::string p;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!p.empty()) p += '.';
    p.append((*it)->name);
    if ((*it)->index != Loc::kNotInArray) {
      p += '[' + std::to_string((*it)->index) + ']';
    }
  }
  if (!key.empty()) {
    if (!p.empty()) p += '.';
    p.append(key);
  }
  return p;
}

[[noreturn, gnu::noinline, gnu::cold]] void fail(const Loc& loc,
                                                 std::string_view key,
                                                 const std::string& what) {
  std::string msg = loc.where + ": ";
  std::string path = path_of(loc, key);
  if (!path.empty()) msg += path + ": ";
  msg += what;
  throw TraceError(msg);
}

const char* type_name(element_type t) {
  switch (t) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
      return "an integer";
    case element_type::DOUBLE:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "something else";
}

[[noreturn, gnu::noinline, gnu::cold]] void wrong_type(const Loc& loc,
                                                       std::string_view key,
                                                       const char* expected,
                                                       element v) {
  fail(loc, key,
       std::string("expected ") + expected + ", got " + type_name(v.type()));
}

namespace {

[[noreturn]] void out_of_range(const Loc& loc, std::string_view key,
                               const std::string& text, bool target_is_signed) {
  fail(loc, key,
       "value " + text + " is out of range" +
           (target_is_signed ? "" : " (must be a non-negative integer)"));
}

}  // namespace

void integer_out_of_range(const Loc& loc, std::string_view key, int64_t x,
                          bool target_is_signed) {
  out_of_range(loc, key, std::to_string(x), target_is_signed);
}
void integer_out_of_range(const Loc& loc, std::string_view key, uint64_t x,
                          bool target_is_signed) {
  out_of_range(loc, key, std::to_string(x), target_is_signed);
}
void integer_out_of_range(const Loc& loc, std::string_view key, double d,
                          bool target_is_signed) {
  out_of_range(loc, key, std::to_string(d), target_is_signed);
}

void not_an_integer(const Loc& loc, std::string_view key, double d) {
  fail(loc, key, "expected an integer, got " + std::to_string(d));
}

[[noreturn, gnu::noinline, gnu::cold]] void missing(const Loc& loc,
                                                    std::string_view key) {
  fail(loc, "", "missing required field \"" + std::string(key) + "\"");
}

object root_object(simdjson::dom::parser& parser, const char* data, size_t len,
                   const Loc& root) {
  element doc;
  if (auto err = parser.parse(data, len, false).get(doc)) {
    invalid_json(root.where, err);
  }
  object obj;
  if (doc.get_object().get(obj)) {
    fail(root, "",
         std::string("expected a JSON object, got ") + type_name(doc.type()));
  }
  return obj;
}

}  // namespace gd::json_in
