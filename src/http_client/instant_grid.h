// Raw samples as a range query would give them: the value of a series at
// each time of the grid start, start + step, ... is its last sample at most
// the lookback old (Prometheus' instant selector: [t - lookback, t]), none
// after a stale marker. Remote read returns raw samples at the scrape
// times; this puts them on the grid the trace model is built on, so a
// window read either way is the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "http_client/prometheus_api.h"

namespace gd::http::prom {

// Prometheus' default --query.lookback-delta.
inline constexpr double kLookbackS = 300;

class InstantGrid {
 public:
  // The caller has checked the range and step (split_range's grid).
  InstantGrid(double start, double end, double step_s,
              double lookback_s = kLookbackS);

  size_t steps() const { return steps_; }
  int64_t first_ms() const { return start_ms_; }
  int64_t last_ms() const { return time_ms(steps_ - 1); }
  int64_t lookback_ms() const { return lookback_ms_; }

  // One series being put on the grid: its samples pushed in time order
  // (one not after the last pushed is dropped), then finish().
  class Cursor {
   public:
    explicit Cursor(const InstantGrid& grid) : grid_(&grid) {}
    void push(int64_t t_ms, double v);
    // The series' points on the grid, one per grid time that has a value.
    std::vector<Point> finish();
    // The points put on the grid so far (finish() may add the last ones).
    size_t points() const { return out_.size(); }

   private:
    void fill_before(int64_t t_ms);

    const InstantGrid* grid_;
    std::vector<Point> out_;
    size_t next_ = 0;  // the first grid time not yet given a value or not
    bool has_last_ = false;
    int64_t last_t_ = 0;
    double last_v_ = 0;
  };

 private:
  int64_t time_ms(size_t i) const;

  double start_, step_;
  int64_t start_ms_, lookback_ms_;
  size_t steps_;
};

// Prometheus' stale marker (a NaN with this bit pattern): the series ended.
bool is_stale_marker(double v);

}  // namespace gd::http::prom
