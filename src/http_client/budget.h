// One time budget shared by several requests (e.g. ps asking serve once per
// process within 300 ms): each request's total deadline (client.h) is what
// is left of it.
#pragma once

#include <algorithm>
#include <chrono>

namespace gd::http {

class Budget {
 public:
  explicit Budget(double total_s)
      : end_(std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(total_s))) {}

  // Seconds left, at least 0.
  double left_s() const {
    return std::max(0.0, std::chrono::duration<double>(
                             end_ - std::chrono::steady_clock::now())
                             .count());
  }
  bool spent() const { return left_s() <= 0; }

 private:
  std::chrono::steady_clock::time_point end_;
};

}  // namespace gd::http
