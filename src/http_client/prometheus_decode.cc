#include "http_client/prometheus_decode.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/terminal_text.h"
#include "http_client/prometheus_internal.h"

namespace gd::http::prom {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Far deeper than any reply of the API (a matrix is 6 levels deep).
constexpr size_t kMaxDepth = 16;
// The server's error text kept in a message.
constexpr size_t kMaxErrorBytes = 300;

// Parses `body` into `parser`'s document; "" or why not.
std::string parse(simdjson::dom::parser& parser, std::string_view body,
                  element& root) {
  if (auto e = parser.allocate(body.size(), kMaxDepth))
    return std::string("cannot parse the reply: ") + simdjson::error_message(e);
  simdjson::padded_string padded(body);
  if (auto e = parser.parse(padded).get(root))
    return std::string("the reply is not JSON (") + simdjson::error_message(e) +
           ")";
  return "";
}

std::string_view text_or_empty(element object, const char* key) {
  std::string_view s;
  if (object[key].get_string().get(s)) return {};
  return s;
}

// "": status is "success"; else the error line of the reply.
std::string check_status(element root, const Limits& limits) {
  std::string_view status;
  if (root["status"].get_string().get(status))
    return "the reply has no \"status\"";
  if (status == "success") return "";
  // Either may be absent: the line says what there is.
  const std::string_view type = text_or_empty(root, "errorType");
  const std::string_view text = text_or_empty(root, "error");
  if (text.empty())
    return "the server says \"" +
           terminal_safe(status, limits.max_label_bytes) + "\"";
  std::string line = type.empty() ? "" : std::string(type) + ": ";
  line += text;
  return terminal_safe(line, kMaxErrorBytes);
}

// A label set: at most max_labels, names and values cut, sorted by name.
std::string read_labels(object metric, const Limits& limits, Labels& out) {
  for (auto field : metric) {
    if (out.size() == limits.max_labels)
      return "a series has more than " + std::to_string(limits.max_labels) +
             " labels";
    std::string_view value;
    if (field.value.get_string().get(value))
      return "a label value is not a string";
    out.emplace_back(capped(field.key, limits.max_label_bytes),
                     capped(value, limits.max_label_bytes));
  }
  std::sort(out.begin(), out.end());
  return "";
}

// "1.5", "NaN", "+Inf", "-Inf" (Prometheus writes values as strings).
bool parse_value(std::string_view s, double& v) {
  if (s == "+Inf" || s == "Inf") {
    v = std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "-Inf") {
    v = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "NaN") {
    v = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(v);
}

// [[t, "v"], ...] -> points; `points_left` is at least values.size().
std::string read_points(array values, size_t& points_left,
                        std::vector<Point>& out) {
  for (element pair : values) {
    array tv;
    double t = 0;
    std::string_view text;
    if (pair.get_array().get(tv) || tv.size() != 2 ||
        tv.at(0).get_double().get(t) || tv.at(1).get_string().get(text))
      return "a point is not [time, \"value\"]";
    Point p{t, 0};
    if (!std::isfinite(t) || !parse_value(text, p.v))
      return "a point's value is not a number";
    --points_left;  // the caller saw that all of `values` fit
    // The server's order is trusted no further than this: a point not
    // after the last one is dropped.
    if (!out.empty() && p.t <= out.back().t) continue;
    out.push_back(p);
  }
  return "";
}

std::string too_many_series(const Budget& budget) {
  return "the reply has more than " + std::to_string(budget.series) +
         " series; narrow the query or the time range";
}

}  // namespace

std::string error_of(std::string_view body, const Limits& limits) {
  simdjson::dom::parser parser;
  element root;
  if (!parse(parser, body, root).empty()) return "";
  std::string_view status;
  if (root["status"].get_string().get(status) || status != "error") return "";
  return check_status(root, limits);
}

std::string decode_matrix(std::string_view body, const Limits& limits,
                          const Budget& budget, std::vector<Series>& out) {
  simdjson::dom::parser parser;
  element root;
  if (auto why = parse(parser, body, root); !why.empty()) return why;
  if (auto why = check_status(root, limits); !why.empty()) return why;
  std::string_view type;
  array result;
  if (root["data"]["resultType"].get_string().get(type) || type != "matrix" ||
      root["data"]["result"].get_array().get(result))
    return "the reply is not a matrix (data.resultType, data.result)";
  if (result.size() > budget.series) return too_many_series(budget);
  size_t points_left = budget.points;
  for (element item : result) {
    object metric;
    array values;
    if (item["metric"].get_object().get(metric) ||
        item["values"].get_array().get(values))
      return "a result has no \"metric\" object or \"values\" array";
    Series s;
    if (auto why = read_labels(metric, limits, s.labels); !why.empty())
      return why;
    if (values.size() > points_left)
      return "the reply has more than " + std::to_string(budget.points) +
             " points; ask for a shorter range or a longer step";
    if (auto why = read_points(values, points_left, s.points); !why.empty())
      return why;
    out.push_back(std::move(s));
  }
  return "";
}

std::string decode_series(std::string_view body, const Limits& limits,
                          const Budget& budget, std::vector<Series>& out) {
  simdjson::dom::parser parser;
  element root;
  if (auto why = parse(parser, body, root); !why.empty()) return why;
  if (auto why = check_status(root, limits); !why.empty()) return why;
  array data;
  if (root["data"].get_array().get(data))
    return "the reply has no \"data\" array";
  if (data.size() > budget.series) return too_many_series(budget);
  for (element item : data) {
    object metric;
    if (item.get_object().get(metric)) return "a series is not an object";
    Series s;
    if (auto why = read_labels(metric, limits, s.labels); !why.empty())
      return why;
    out.push_back(std::move(s));
  }
  return "";
}

}  // namespace gd::http::prom
