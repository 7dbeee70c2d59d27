#include "accounting/accountant.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accounting/energy.h"
#include "accounting/gap_judge.h"
#include "accounting/group_table.h"
#include "accounting/owner.h"
#include "accounting/owner_tree_memo.h"
#include "accounting/shares.h"
#include "model/process_tree.h"

namespace gd::accounting {
namespace {

// The dimensions kept in group tables, in Dimension's order: job, user,
// container, pod, namespace (GPUs are indexed directly).
constexpr int kTables = static_cast<int>(Dimension::kGpu);

struct OwnerIdx {
  std::array<uint32_t, kTables> row{};
  bool operator==(const OwnerIdx&) const = default;
};
struct OwnerIdxHash {
  size_t operator()(const OwnerIdx& o) const {
    uint64_t h = 0;
    for (uint32_t r : o.row) h = (h ^ r) * 0x100000001b3ull;
    return static_cast<size_t>(h);
  }
};
constexpr size_t kMaxGroupsCap = size_t{1} << 20;

struct GpuState {
  bool started = false;
  double prev_t = 0;
  EnergyMeter meter;
  GpuAccount acc;
  GroupRow row;  // this GPU as a group of the "gpu" dimension
};

// A percentage from the trace as a fraction in [0, 1]; nullopt when absent
// or not a number. A hostile trace's 1e308 % would make every sum infinite.
std::optional<double> fraction(const std::optional<double>& pct) {
  if (!pct || !std::isfinite(*pct)) return std::nullopt;
  return std::clamp(*pct, 0.0, 100.0) / 100.0;
}

void touch(GroupRow& row, double t0, double t1, int gpu) {
  if (row.first_t == 0 || t0 < row.first_t) row.first_t = t0;
  row.last_t = std::max(row.last_t, t1);
  if (gpu >= 0 && gpu < 64) row.gpu_mask |= uint64_t{1} << gpu;
}

}  // namespace

const char* dimension_name(Dimension d) {
  switch (d) {
    case Dimension::kJob:
      return "job";
    case Dimension::kUser:
      return "user";
    case Dimension::kContainer:
      return "container";
    case Dimension::kPod:
      return "pod";
    case Dimension::kNamespace:
      return "namespace";
    case Dimension::kGpu:
      return "gpu";
  }
  return "?";
}

void Usage::add(const Usage& o) {
  held_s += o.held_s;
  busy_s += o.busy_s;
  sm_active_s += o.sm_active_s;
  sm_measured_s += o.sm_measured_s;
  idle_held_s += o.idle_held_s;
  energy_j += o.energy_j;
  energy_counter_j += o.energy_counter_j;
  energy_power_j += o.energy_power_j;
  split_sm_s += o.split_sm_s;
  split_memory_s += o.split_memory_s;
  split_equal_s += o.split_equal_s;
  mem_frac_s += o.mem_frac_s;
  mem_time_s += o.mem_time_s;
  mem_peak_bytes = std::max(mem_peak_bytes, o.mem_peak_bytes);
}

std::string split_text(const Usage& u) {
  std::string out;
  auto add = [&out](double s, const char* name) {
    if (s <= 0) return;
    if (!out.empty()) out += "+";
    out += name;
  };
  add(u.split_sm_s, "sm");
  add(u.split_memory_s, "memory");
  add(u.split_equal_s, "equal");
  return out.empty() ? "-" : out;
}

double Prices::cost(const Usage& u) const {
  double c = 0;
  if (kwh) c += *kwh * u.energy_j / kJoulesPerKwh;
  if (gpu_hour) c += *gpu_hour * u.held_s / 3600.0;
  return c;
}

struct Accountant::Impl {
  explicit Impl(const TraceHeader& header, AccountOptions o)
      : opt(o),
        gaps(o.gap_factor),
        tables{GroupTable(std::min(o.max_groups, kMaxGroupsCap)),
               GroupTable(std::min(o.max_groups, kMaxGroupsCap)),
               GroupTable(std::min(o.max_groups, kMaxGroupsCap)),
               GroupTable(std::min(o.max_groups, kMaxGroupsCap)),
               GroupTable(std::min(o.max_groups, kMaxGroupsCap))} {
    gpus.resize(kAccountedGpus);
    for (int i = 0; i < kAccountedGpus; ++i) {
      gpus[i].acc.index = i;
      gpus[i].row.key = "gpu:" + std::to_string(i);
      gpus[i].row.label = "GPU " + std::to_string(i);
    }
    for (const GpuInfo& info : header.gpus) {
      if (info.index < 0 || info.index >= kAccountedGpus) continue;
      GpuState& g = gpus[info.index];
      g.acc.name = info.name.substr(0, GroupTable::kKeyMax);
      g.acc.mem_total_bytes = info.memory_total_bytes;
      g.meter = EnergyMeter(info.power_limit_w);
    }
  }

  void add(const Sample& s, bool processes_as_before);
  void account_gpu(const Sample& s, const GpuSample& g, double limit);
  // Builds the sample's process tree when the owner is not known yet.
  OwnerIdx owner_index(const Sample& s, uint32_t pid);
  AccountReport finish();

  AccountOptions opt;
  GapJudge gaps;
  std::array<GroupTable, kTables> tables;
  std::vector<GpuState> gpus;
  Usage total;
  bool any_sample = false;
  double first_t = 0, prev_t = 0;
  size_t samples = 0;
  double last_limit = 0;

  // Per sample: the process tree (built once a sample has GPU processes)
  // and the owners already resolved. Hashed, not searched: a hostile
  // trace's GPU may list a million processes.
  std::optional<ProcessTree> tree;
  const Sample* tree_of = nullptr;
  std::unordered_map<uint32_t, OwnerIdx> owners;
  // The owners above hold while the samples repeat their processes.
  OwnerTreeMemo owners_tree;
  bool memo_of_last_add = false;  // the last add() updated owners_tree
  OwnerKeys keys;
  std::vector<Holder> holders;
  std::vector<OwnerIdx> holder_owner;
  // owner -> holder, once there are kHoldersSearched holders
  std::unordered_map<OwnerIdx, size_t, OwnerIdxHash> holder_of;
  static constexpr size_t kHoldersSearched = 16;
  // The holder of owner `o` in this interval, and whether it is new.
  std::pair<size_t, bool> holder_index(const OwnerIdx& o);
  // Every GPU process's owner (the last one seen), for attribute().
  std::unordered_map<uint32_t, OwnerIdx> owner_of_pid;
  void attribute(const std::vector<Accountant::FindingSpan>& findings);
  Split split;
};

std::pair<size_t, bool> Accountant::Impl::holder_index(const OwnerIdx& o) {
  // A GPU has a holder or two: searched; a hostile trace's thousands are
  // hashed.
  if (holder_owner.size() < kHoldersSearched) {
    for (size_t i = 0; i < holder_owner.size(); ++i)
      if (holder_owner[i] == o) return {i, false};
    return {holder_owner.size(), true};
  }
  if (holder_of.empty())
    for (size_t i = 0; i < holder_owner.size(); ++i)
      holder_of.emplace(holder_owner[i], i);
  const auto [it, added] = holder_of.emplace(o, holders.size());
  return {it->second, added};
}

OwnerIdx Accountant::Impl::owner_index(const Sample& s, uint32_t pid) {
  if (auto it = owners.find(pid); it != owners.end()) return it->second;
  if (tree_of != &s) {
    if (tree)
      tree->rebuild(s);
    else
      tree.emplace(s);
    tree_of = &s;
  }
  owner_of(*tree, pid, keys);
  OwnerIdx idx;
  idx.row[0] = tables[0].find_or_add(keys.job_key, keys.job_label);
  idx.row[1] = tables[1].find_or_add(keys.user_key, keys.user_label);
  idx.row[2] = tables[2].find_or_add(keys.container_key, keys.container_label);
  idx.row[3] = tables[3].find_or_add(keys.pod_key, keys.pod_label);
  idx.row[4] = tables[4].find_or_add(keys.namespace_key, keys.namespace_label);
  owners.emplace(pid, idx);
  if (owner_of_pid.size() < kPidsRemembered || owner_of_pid.count(pid))
    owner_of_pid[pid] = idx;
  return idx;
}

void Accountant::Impl::add(const Sample& s, bool processes_as_before) {
  // The memo holds the processes of the sample added before only when
  // that one got as far as the memo.
  const bool memo_of_last = memo_of_last_add;
  memo_of_last_add = false;
  if (opt.start && s.t < *opt.start) return;
  if (opt.end && s.t > *opt.end) return;
  if (any_sample && !(s.t > prev_t)) return;
  // The limit of this sample's intervals comes from the intervals before.
  const double limit = gaps.limit();
  if (any_sample) gaps.observe(s.t - prev_t);
  if (!any_sample) first_t = s.t;
  any_sample = true;
  prev_t = s.t;
  ++samples;
  last_limit = limit;
  if (!(processes_as_before && memo_of_last) &&
      !owners_tree.same_as_last(s.processes, s.slurm_jobs))
    owners.clear();
  memo_of_last_add = true;
  tree_of = nullptr;
  for (const GpuSample& g : s.gpus) account_gpu(s, g, limit);
}

void Accountant::Impl::account_gpu(const Sample& s, const GpuSample& g,
                                   double limit) {
  // A lost or stale GPU says nothing: the interval after it spans the
  // missing time, and is a gap when that is long.
  if (g.index < 0 || g.index >= kAccountedGpus || g.lost || g.stale) return;
  GpuState& st = gpus[g.index];
  GpuAccount& acc = st.acc;
  if (!st.started) {
    st.started = true;
    st.prev_t = s.t;
    acc.first_t = acc.last_t = s.t;
    st.meter.next(g, 0);
    return;
  }
  const double dt = s.t - st.prev_t;
  if (!(dt > 0)) return;
  st.prev_t = s.t;
  acc.last_t = s.t;
  const IntervalEnergy e = st.meter.next(g, dt);
  if (e.counter_reset) ++acc.counter_resets;

  if (dt > limit) {
    // Who held the GPU meanwhile is unknown; the counter still says how
    // much energy it used (power x dt over a gap would be a guess).
    ++acc.gaps;
    acc.unattributed_s += dt;
    if (e.joules && e.method == EnergyMethod::kCounter) {
      acc.energy_j += *e.joules;
      acc.energy_counter_j += *e.joules;
      acc.unattributed_energy_j += *e.joules;
    }
    return;
  }
  const double j = e.joules.value_or(0);
  if (e.joules) {
    acc.energy_j += j;
    (e.method == EnergyMethod::kCounter ? acc.energy_counter_j
                                        : acc.energy_power_j) += j;
  } else {
    acc.unmeasured_s += dt;
  }
  const std::optional<double> util = fraction(g.util_pct);
  const std::optional<double> sm_active = fraction(g.gpm.sm_active_pct);
  if (util) acc.busy_s += *util * dt;
  if (sm_active) {
    acc.sm_active_s += *sm_active * dt;
    acc.sm_measured_s += dt;
  }
  if (!g.processes) {
    acc.unattributed_s += dt;
    acc.unattributed_energy_j += j;
    return;
  }

  // The holders: processes with memory on the GPU (unknown counts as
  // some), one per owner.
  holders.clear();
  holder_owner.clear();
  if (!holder_of.empty()) holder_of.clear();
  for (const GpuProcess& gp : *g.processes) {
    if (gp.used_bytes && *gp.used_bytes == 0) continue;
    const OwnerIdx o = owner_index(s, gp.pid);
    const auto [i, added] = holder_index(o);
    if (added) {
      holder_owner.push_back(o);
      holders.push_back({static_cast<uint32_t>(i), uint64_t{0}, 0.0});
    }
    Holder& h = holders[i];
    // Saturating: a hostile trace's byte counts must not wrap the sum.
    if (h.mem)
      h.mem = gp.used_bytes ? std::optional(*gp.used_bytes > UINT64_MAX - *h.mem
                                                ? UINT64_MAX
                                                : *h.mem + *gp.used_bytes)
                            : std::nullopt;
    if (h.sm)
      h.sm = fraction(gp.sm_util_pct)
                 ? std::optional(*h.sm + *fraction(gp.sm_util_pct) * 100)
                 : std::nullopt;
  }
  if (holders.empty()) {
    acc.unheld_s += dt;
    acc.idle_energy_j += j;
    return;
  }
  split_interval(holders, split);
  acc.held_s += dt;
  acc.held_energy_j += j;

  const bool idle = util && *util * 100 < opt.idle_util_pct;
  const std::optional<uint64_t> mem_total = acc.mem_total_bytes;
  uint64_t gpu_mem = 0;
  bool gpu_mem_known = true;
  for (size_t i = 0; i < holders.size(); ++i) {
    const double hw = split.held[i], aw = split.activity[i];
    Usage u;
    u.held_s = hw * dt;
    if (util) u.busy_s = aw * *util * dt;
    if (sm_active) {
      u.sm_active_s = aw * *sm_active * dt;
      u.sm_measured_s = hw * dt;
    }
    if (idle) u.idle_held_s = hw * dt;
    if (e.joules) {
      u.energy_j = aw * j;
      (e.method == EnergyMethod::kCounter ? u.energy_counter_j
                                          : u.energy_power_j) = u.energy_j;
    }
    switch (split.activity_method) {
      case SplitMethod::kSm:
        u.split_sm_s = u.held_s;
        break;
      case SplitMethod::kMemory:
        u.split_memory_s = u.held_s;
        break;
      case SplitMethod::kEqual:
        u.split_equal_s = u.held_s;
        break;
    }
    if (holders[i].mem) {
      u.mem_peak_bytes = *holders[i].mem;
      gpu_mem = *holders[i].mem > UINT64_MAX - gpu_mem
                    ? UINT64_MAX
                    : gpu_mem + *holders[i].mem;
      if (mem_total && *mem_total > 0) {
        u.mem_frac_s = std::min(1.0, static_cast<double>(*holders[i].mem) /
                                         static_cast<double>(*mem_total)) *
                       dt;
        u.mem_time_s = dt;
      }
    } else {
      gpu_mem_known = false;
    }
    for (int t = 0; t < kTables; ++t) {
      GroupRow& row = tables[t].row(holder_owner[i].row[t]);
      row.usage.add(u);
      touch(row, s.t - dt, s.t, g.index);
    }
    total.add(u);
    // The GPU's own row: memory is the holders' sum, counted below.
    u.mem_frac_s = u.mem_time_s = 0;
    u.mem_peak_bytes = 0;
    st.row.usage.add(u);
  }
  touch(st.row, s.t - dt, s.t, g.index);
  if (gpu_mem_known) {
    st.row.usage.mem_peak_bytes =
        std::max(st.row.usage.mem_peak_bytes, gpu_mem);
    if (mem_total && *mem_total > 0) {
      st.row.usage.mem_frac_s +=
          std::min(1.0, static_cast<double>(gpu_mem) /
                            static_cast<double>(*mem_total)) *
          dt;
      st.row.usage.mem_time_s += dt;
    }
  }
}

void Accountant::Impl::attribute(
    const std::vector<Accountant::FindingSpan>& findings) {
  std::vector<uint32_t> rows;
  for (const auto& f : findings) {
    for (int t = 0; t < kTables; ++t) {
      // The distinct rows the finding's pids belong to.
      rows.clear();
      for (uint32_t pid : f.pids)
        if (auto it = owner_of_pid.find(pid); it != owner_of_pid.end())
          rows.push_back(it->second.row[t]);
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      for (uint32_t i : rows) {
        GroupRow& row = tables[t].row(i);
        const double span = row.last_t - row.first_t;
        const double seconds = std::max(
            0.0, std::min(f.end, row.last_t) - std::max(f.start, row.first_t));
        GroupFinding gf{f.id.substr(0, 64), f.severity.substr(0, 16), seconds,
                        span > 0 ? std::min(1.0, seconds / span) : 0.0};
        // The same id twice (two GPUs of one job): keep the longer.
        auto same = std::find_if(
            row.findings.begin(), row.findings.end(),
            [&gf](const GroupFinding& x) { return x.id == gf.id; });
        if (same != row.findings.end()) {
          if (gf.seconds > same->seconds) *same = gf;
        } else if (row.findings.size() < kFindingsPerGroup) {
          row.findings.push_back(std::move(gf));
        }
      }
    }
  }
  for (int t = 0; t < kTables; ++t)
    for (size_t i = 0; i < tables[t].size(); ++i) {
      auto& fs = tables[t].row(static_cast<uint32_t>(i)).findings;
      std::stable_sort(fs.begin(), fs.end(),
                       [](const GroupFinding& a, const GroupFinding& b) {
                         return a.seconds > b.seconds;
                       });
    }
}

AccountReport Accountant::Impl::finish() {
  AccountReport r;
  r.start = first_t;
  r.end = prev_t;
  r.samples = samples;
  r.gap_s = last_limit;
  for (GpuState& st : gpus) {
    if (!st.started) continue;
    st.acc.wall_s = st.acc.last_t - st.acc.first_t;
    r.gpus.push_back(st.acc);
    r.groups[static_cast<int>(Dimension::kGpu)].push_back(st.row);
  }
  auto& gpu_rows = r.groups[static_cast<int>(Dimension::kGpu)];
  std::stable_sort(gpu_rows.begin(), gpu_rows.end(),
                   [](const GroupRow& a, const GroupRow& b) {
                     return a.usage.held_s > b.usage.held_s;
                   });
  for (int t = 0; t < kTables; ++t) {
    r.groups_folded[t] = tables[t].folded();
    r.groups[t] = tables[t].take_sorted();
  }
  r.total = total;
  return r;
}

Accountant::Accountant(const TraceHeader& header, AccountOptions options)
    : impl_(std::make_unique<Impl>(header, options)) {}
Accountant::~Accountant() = default;
void Accountant::add(const Sample& sample, bool processes_as_before) {
  impl_->add(sample, processes_as_before);
}
void Accountant::attribute(const std::vector<FindingSpan>& findings) {
  impl_->attribute(findings);
}
void Accountant::each_group(
    Dimension d, const std::function<void(const GroupRow&)>& fn) const {
  const size_t t = static_cast<size_t>(d);
  if (t >= kTables) return;
  const GroupTable& table = impl_->tables[t];
  for (uint32_t i = 0; i < table.size(); ++i) fn(table.row(i));
}

AccountReport Accountant::finish() { return impl_->finish(); }

}  // namespace gd::accounting
