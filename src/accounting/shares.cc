#include "accounting/shares.h"

namespace gd::accounting {
namespace {

// Weights proportional to `value` of each holder when every holder has
// one and they sum above zero; false (nothing written) otherwise.
template <typename Get>
bool proportional(const std::vector<Holder>& holders, Get get,
                  std::vector<double>& out) {
  double sum = 0;
  for (const Holder& h : holders) {
    auto v = get(h);
    if (!v || *v < 0) return false;
    sum += static_cast<double>(*v);
  }
  if (!(sum > 0)) return false;
  out.resize(holders.size());
  for (size_t i = 0; i < holders.size(); ++i)
    out[i] = static_cast<double>(*get(holders[i])) / sum;
  return true;
}

}  // namespace

void split_interval(const std::vector<Holder>& holders, Split& out) {
  const auto mem = [](const Holder& h) { return h.mem; };
  const auto sm = [](const Holder& h) { return h.sm; };
  if (proportional(holders, mem, out.held)) {
    out.held_method = SplitMethod::kMemory;
  } else {
    out.held.assign(holders.size(), 1.0 / static_cast<double>(holders.size()));
    out.held_method = SplitMethod::kEqual;
  }
  if (proportional(holders, sm, out.activity)) {
    out.activity_method = SplitMethod::kSm;
  } else {
    out.activity = out.held;
    out.activity_method = out.held_method;
  }
}

}  // namespace gd::accounting
