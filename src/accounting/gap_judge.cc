#include "accounting/gap_judge.h"

#include <algorithm>

namespace gd::accounting {

double GapJudge::limit() const {
  if (count_ == 0) return kNoHistoryLimit;
  std::array<double, kWindow> v = recent_;
  const size_t n = std::min(count_, kWindow);
  std::nth_element(v.begin(), v.begin() + n / 2, v.begin() + n);
  return factor_ * v[n / 2];
}

void GapJudge::observe(double dt) {
  if (!(dt > 0)) return;
  recent_[next_] = dt;
  next_ = (next_ + 1) % kWindow;
  ++count_;
}

}  // namespace gd::accounting
