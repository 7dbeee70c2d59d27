// The Prometheus API's reply bodies decoded, internal to prometheus_api.cc
// (and its tests): the error JSON as one line, a range query's matrix and
// the series API's label sets, every count and string bounded.
//
// simdjson, as the trace reader (src/trace/json_in*.cc) uses for large
// input: a range reply of thousands of series of 11,000 points is tens of
// MiB, which simdjson reads several times faster than nlohmann and into
// one flat buffer instead of a tree of small allocations.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "http_client/prometheus_api.h"

namespace gd::http::prom {

// What a reply's body holds, for the limits still left to the call.
struct Budget {
  size_t series = 0;  // series this reply may add
  size_t points = 0;  // points this reply may add
};

// The server's own error line ("bad_data: parse error at char 4: ...")
// when `body` is Prometheus' error JSON, else "".
std::string error_of(std::string_view body, const Limits& limits);

// A range query's reply body -> `out` (one Series per result). Returns ""
// or one line saying why the body is refused (not JSON, "status" not
// "success", not a matrix, over the budget or the limits).
std::string decode_matrix(std::string_view body, const Limits& limits,
                          const Budget& budget, std::vector<Series>& out);

// The series API's reply body -> `out` (labels only).
std::string decode_series(std::string_view body, const Limits& limits,
                          const Budget& budget, std::vector<Series>& out);

}  // namespace gd::http::prom
