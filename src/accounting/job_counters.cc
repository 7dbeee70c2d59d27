#include "accounting/job_counters.h"

#include <algorithm>

namespace gd::accounting {
namespace {

// What a job used since `before`: the running figures only grow.
Usage since(const Usage& now, const Usage& before) {
  Usage d;
  d.held_s = now.held_s - before.held_s;
  d.busy_s = now.busy_s - before.busy_s;
  d.sm_active_s = now.sm_active_s - before.sm_active_s;
  d.sm_measured_s = now.sm_measured_s - before.sm_measured_s;
  d.idle_held_s = now.idle_held_s - before.idle_held_s;
  d.energy_j = now.energy_j - before.energy_j;
  d.energy_counter_j = now.energy_counter_j - before.energy_counter_j;
  d.energy_power_j = now.energy_power_j - before.energy_power_j;
  return d;
}

AccountOptions tracking() {
  AccountOptions o;
  o.max_groups = kJobsTracked;
  return o;
}

}  // namespace

JobCounters::JobCounters(const TraceHeader& header, size_t slots,
                         double release_after_s)
    : acc_(header, tracking()),
      max_slots_(slots),
      release_after_s_(release_after_s) {
  other_.key = "other";
  other_.name = "other";
  other_.other = true;
}

void JobCounters::add(const Sample& sample) {
  acc_.add(sample);
  acc_.each_group(Dimension::kJob, [this](const GroupRow& row) {
    Usage& seen = seen_[row.key];
    const Usage d = since(row.usage, seen);
    seen = row.usage;
    if (!(d.held_s > 0) && !(d.energy_j > 0)) return;
    auto slot = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) {
      return s.counter.key == row.key;
    });
    if (slot == slots_.end() && !row.folded && slots_.size() < max_slots_) {
      slots_.push_back({{row.key, row.label, {}, false}, row.last_t});
      slot = slots_.end() - 1;
    }
    if (slot == slots_.end()) {
      other_.usage.add(d);
      return;
    }
    slot->counter.usage.add(d);
    slot->last_held_t = row.last_t;
  });
  std::erase_if(slots_, [&](const Slot& s) {
    return sample.t - s.last_held_t > release_after_s_;
  });
}

std::vector<JobCounter> JobCounters::counters() const {
  std::vector<JobCounter> out;
  out.reserve(slots_.size() + 1);
  for (const Slot& s : slots_) out.push_back(s.counter);
  out.push_back(other_);
  return out;
}

}  // namespace gd::accounting
