#include "store/downsample.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "store/numeric_fields.h"

namespace gd::store {
namespace {

double round_decimals(double v) {
  constexpr double kScale = 1000;  // 10^kAverageDecimals
  static_assert(kAverageDecimals == 3);
  return std::round(v * kScale) / kScale;
}

// Accumulates one numeric field over a bucket.
struct Acc {
  long double sum = 0;
  size_t n = 0;
  bool any_true = false;
  long double last = 0;
};

// A counter ("..._total") keeps the bucket's last value: its mean would be a
// count that was never reported, and a rule that asks "did it grow?" must see
// the same growth in the minute tier as in the raw samples.
bool is_counter(const char* name) {
  const std::string_view n(name), suffix("_total");
  return n.size() > suffix.size() &&
         n.substr(n.size() - suffix.size()) == suffix;
}

template <typename S>
void accumulate(const S& s, const std::vector<NumericField<S>>& fields,
                std::vector<Acc>& acc) {
  for (size_t f = 0; f < fields.size(); ++f) {
    std::visit(
        [&](const auto& member) {
          const auto& v = field_value(s, member);
          if (!v) return;
          using T = typename std::decay_t<decltype(v)>::value_type;
          if constexpr (std::is_same_v<T, bool>) acc[f].any_true |= *v;
          acc[f].sum += static_cast<long double>(*v);
          acc[f].last = static_cast<long double>(*v);
          ++acc[f].n;
        },
        fields[f].member);
  }
}

template <typename S>
void store_averages(S& s, const std::vector<NumericField<S>>& fields,
                    const std::vector<Acc>& acc) {
  for (size_t f = 0; f < fields.size(); ++f) {
    std::visit(
        [&](const auto& member) {
          auto& v = field_value(s, member);
          using T = typename std::decay_t<decltype(v)>::value_type;
          const Acc& a = acc[f];
          if (a.n == 0) {
            v.reset();
            return;
          }
          long double mean = is_counter(fields[f].name) ? a.last : a.sum / a.n;
          if constexpr (std::is_same_v<T, bool>) {
            v = a.any_true;
          } else if constexpr (std::is_same_v<T, double>) {
            v = round_decimals(static_cast<double>(mean));
          } else {
            v = static_cast<T>(std::llround(mean));
          }
        },
        fields[f].member);
  }
}

// Each process's CPU% averaged over the bucket's samples that looked (one
// that was not in a list counts as 0 there: it was below the busiest), the
// busiest kOtherCpuTopMax kept, named as last seen. nullopt when no sample
// of the bucket looked.
std::optional<std::vector<OtherCpuProcess>> average_other_cpu(
    const std::vector<Sample>& in, size_t begin, size_t end) {
  std::map<uint32_t, std::pair<OtherCpuProcess, long double>> by_pid;
  size_t looked = 0;
  for (size_t i = begin; i < end; ++i) {
    if (!in[i].host.other_cpu_top) continue;
    ++looked;
    for (const auto& p : *in[i].host.other_cpu_top) {
      auto& [last, sum] = by_pid[p.pid];
      last = p;
      sum += p.cpu_pct;
    }
  }
  if (looked == 0) return std::nullopt;
  std::vector<OtherCpuProcess> out;
  for (auto& [pid, entry] : by_pid) {
    entry.first.cpu_pct = round_decimals(
        static_cast<double>(entry.second / static_cast<long double>(looked)));
    out.push_back(std::move(entry.first));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.cpu_pct > b.cpu_pct;
  });
  if (out.size() > kOtherCpuTopMax) out.resize(kOtherCpuTopMax);
  return out;
}

Sample average_bucket(const std::vector<Sample>& in, size_t begin, size_t end) {
  const Sample& last = in[end - 1];
  Sample out;
  out.t = last.t;
  out.processes = last.processes;

  // GPUs: every index seen in the bucket, flags and process lists from its
  // latest appearance.
  std::map<int, std::vector<Acc>> gpu_acc;
  std::map<int, GpuSample> latest;
  std::map<int, std::vector<std::string>> reasons;
  std::map<int, bool> reasons_known;
  std::map<int, std::vector<std::string>> read_errors;
  std::vector<int> order;
  std::vector<Acc> host_acc(host_fields().size());
  std::map<uint32_t, Acc> cpu;
  for (size_t i = begin; i < end; ++i) {
    const Sample& s = in[i];
    for (const auto& g : s.gpus) {
      auto [it, fresh] = gpu_acc.try_emplace(g.index, gpu_fields().size());
      if (fresh) order.push_back(g.index);
      accumulate(g, gpu_fields(), it->second);
      latest[g.index] = g;
      auto& errors = read_errors[g.index];
      for (const auto& field : g.read_errors)
        if (std::find(errors.begin(), errors.end(), field) == errors.end())
          errors.push_back(field);
      if (g.clock_event_reasons) {
        reasons_known[g.index] = true;
        auto& r = reasons[g.index];
        for (const auto& reason : *g.clock_event_reasons)
          if (std::find(r.begin(), r.end(), reason) == r.end())
            r.push_back(reason);
      }
    }
    accumulate(s.host, host_fields(), host_acc);
    for (const auto& p : s.processes)
      if (p.cpu_pct) {
        cpu[p.pid].sum += *p.cpu_pct;
        ++cpu[p.pid].n;
      }
    out.events.insert(out.events.end(), s.events.begin(), s.events.end());
    if (s.device_holders) out.device_holders = s.device_holders;
  }
  for (int index : order) {
    GpuSample g = latest[index];
    // A GPU that ends the bucket lost or stale has no values (trace rule).
    if (!g.lost && !g.stale) store_averages(g, gpu_fields(), gpu_acc[index]);
    if (reasons_known[index]) g.clock_event_reasons = reasons[index];
    g.read_errors = read_errors[index];
    out.gpus.push_back(std::move(g));
  }
  store_averages(out.host, host_fields(), host_acc);
  out.host.other_cpu_top = average_other_cpu(in, begin, end);
  // The RDMA ports as the bucket's last sample saw them: their counters
  // are totals, so the last reading loses none of their growth.
  for (size_t i = end; i > begin; --i)
    if (in[i - 1].host.rdma_ports) {
      out.host.rdma_ports = in[i - 1].host.rdma_ports;
      break;
    }
  for (auto& p : out.processes) {
    auto it = cpu.find(p.pid);
    if (it != cpu.end() && it->second.n)
      p.cpu_pct =
          round_decimals(static_cast<double>(it->second.sum / it->second.n));
  }
  return out;
}

}  // namespace

std::vector<Sample> downsample(const std::vector<Sample>& samples,
                               double step) {
  std::vector<Sample> out;
  size_t begin = 0;
  while (begin < samples.size()) {
    double bucket = std::floor(samples[begin].t / step);
    size_t end = begin + 1;
    while (end < samples.size() && std::floor(samples[end].t / step) == bucket)
      ++end;
    out.push_back(average_bucket(samples, begin, end));
    begin = end;
  }
  return out;
}

}  // namespace gd::store
