#include "http_client/instant_grid.h"

#include <bit>
#include <cmath>

namespace gd::http::prom {
namespace {

constexpr uint64_t kStaleNaN = 0x7ff0000000000002ull;

int64_t ms_of(double s) { return std::llround(s * 1000); }

}  // namespace

bool is_stale_marker(double v) {
  return std::bit_cast<uint64_t>(v) == kStaleNaN;
}

InstantGrid::InstantGrid(double start, double end, double step_s,
                         double lookback_s)
    : start_(start),
      step_(step_s),
      start_ms_(ms_of(start)),
      lookback_ms_(ms_of(lookback_s)),
      steps_(
          split_range(start, end, step_s, SIZE_MAX).empty()
              ? 0
              : static_cast<size_t>(std::floor((end - start) / step_s + 1e-9)) +
                    1) {}

int64_t InstantGrid::time_ms(size_t i) const {
  return ms_of(start_ + static_cast<double>(i) * step_);
}

// Every grid time before `t_ms` takes the last sample, when it is recent
// enough and not a stale marker.
void InstantGrid::Cursor::fill_before(int64_t t_ms) {
  for (; next_ < grid_->steps_; ++next_) {
    const int64_t at = grid_->time_ms(next_);
    if (at >= t_ms) break;
    // (at - lookback cannot overflow: grid times are checked; a hostile
    // sample time can be anything.)
    if (has_last_ && last_t_ >= at - grid_->lookback_ms_ &&
        !is_stale_marker(last_v_))
      out_.push_back(
          {grid_->start_ + static_cast<double>(next_) * grid_->step_, last_v_});
  }
}

void InstantGrid::Cursor::push(int64_t t_ms, double v) {
  if (has_last_ && t_ms <= last_t_) return;
  // A sample at a grid time is that time's value: only the times before
  // it are settled by the one before.
  fill_before(t_ms);
  has_last_ = true;
  last_t_ = t_ms;
  last_v_ = v;
}

std::vector<Point> InstantGrid::Cursor::finish() {
  fill_before(INT64_MAX);
  return std::move(out_);
}

}  // namespace gd::http::prom
