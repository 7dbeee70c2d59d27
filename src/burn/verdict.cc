#include "burn/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "burn/figures.h"
#include "common/bytes_text.h"
#include "diagnose/xid_catalog.h"

namespace gd::burn {

// Why these values:
// - 10% below identical peers: boards of one model in one node differ by a
//   few percent (silicon, cooling position); 10% is a board that clocks or
//   computes worse than its neighbours, which gpu-burn's OK/FAULTY misses.
//   Bandwidths vary more between runs (shared host paths): 15%.
// - 70% of the model's FP32 peak: the FMA kernel reaches 90%+ of SMs x lanes
//   x 2 x max clock on a healthy board; a power-capped board under full load
//   stays above ~75%. Below 70% something holds it back.
// - Slowdown for 5% of the run: a healthy board under full load is power
//   capped, not thermally or HW slowed; a few percent is a transient.
// - 60% of the link's usable rate: pinned copies reach ~80% of raw on a
//   healthy link (the usable figure); 60% of that is a link that is shared,
//   degraded or retrying.

namespace {

struct Judgement {
  int level = 0;  // 0 pass, 1 warn, 2 fail
  std::vector<std::string> problems;
  std::set<std::string> topics;  // what burn's own reasons already cover
  void add(int lvl, std::string text, const char* topic = "") {
    level = std::max(level, lvl);
    problems.push_back(std::move(text));
    if (*topic) topics.insert(topic);
  }
};

std::string hex(uint64_t v) { return fmt::format("0x{:x}", v); }

std::string list_addresses(const MemoryResult& m) {
  std::string out;
  const size_t shown = std::min<size_t>(m.bad_addresses.size(), 4);
  for (size_t i = 0; i < shown; ++i)
    out += (i ? ", " : "") + hex(m.bad_addresses[i]);
  if (m.bad_address_count > shown)
    out += fmt::format(" and {} more", m.bad_address_count - shown);
  return out;
}

// What the ECC and row-remap counters did over the run, for tying memory
// errors to them ("DBE +1, SBE +4, rows remapped +1, remap pending").
std::vector<std::string> counter_moves(const GpuWatch& w) {
  std::vector<std::string> out;
  if (auto d = w.dbe_delta(); d && *d > 0)
    out.push_back(fmt::format("DBE +{}", *d));
  if (auto s = w.sbe_delta(); s && *s > 0)
    out.push_back(fmt::format("SBE +{}", *s));
  if (auto r = w.remapped_delta(); r && *r > 0)
    out.push_back(fmt::format("rows remapped +{}", *r));
  if (w.remap_pending) out.push_back("remap pending");
  if (w.remap_failure) out.push_back("remap FAILED");
  if (w.retired_pending) out.push_back("page retirement pending");
  return out;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Identical peers: same model name and memory size.
bool identical(const GpuVerdict& a, const GpuVerdict& b) {
  return a.name == b.name && a.device.total_bytes == b.device.total_bytes;
}

template <typename Get>
std::vector<double> peer_values(const std::vector<GpuVerdict>& all,
                                const GpuVerdict& self, Get get) {
  std::vector<double> out;
  for (const auto& g : all)
    if (&g != &self && identical(g, self))
      if (auto v = get(g)) out.push_back(*v);
  return out;
}

std::string peers_word(size_t n) {
  return fmt::format("{} identical peer{}", n, n == 1 ? "" : "s");
}

std::string phase_text(const std::string& phase) {
  return phase.empty() ? "setup" : phase;
}

void judge_gpu(GpuVerdict& v, const std::vector<GpuVerdict>& all,
               const std::vector<Finding>& findings, const BurnReport& report) {
  Judgement j;
  const GpuRunResult& r = v.run;
  const GpuWatch& w = v.watch;
  const auto moves = counter_moves(w);

  // ---- the GPU stopped working ----
  if (!r.fatal_error.empty())
    j.add(2,
          fmt::format("{} during {} at {:.1f} s: the GPU stopped working",
                      r.fatal_error, phase_text(r.fatal_phase), r.fatal_at_s),
          "cuda");
  if (r.hung)
    j.add(2,
          fmt::format("stopped responding during {}: work queued on the GPU "
                      "never finished",
                      phase_text(r.hung_phase)),
          "hang");
  if (w.lost)
    j.add(2, "lost during the run (fell off the bus or stopped answering NVML)",
          "lost");

  // ---- wrong results ----
  if (r.compute.errors > 0) {
    std::string kernels;
    std::set<std::string> seen;
    for (const auto& e : r.compute.first_errors)
      if (seen.insert(e.kernel).second)
        kernels += (kernels.empty() ? "" : ", ") + e.kernel;
    j.add(2,
          fmt::format("{} compute error{}: {} of {} results differ from the "
                      "reference ({})",
                      r.compute.errors, r.compute.errors == 1 ? "" : "s",
                      r.compute.errors, r.compute.checked, kernels),
          "compute");
  }
  if (r.memory.bad_address_count > 0) {
    std::string tie = moves.empty()
                          ? "ECC counters did not move (errors ECC did not see)"
                          : "ECC/remap counters moved: " + join(moves, ", ");
    j.add(2,
          fmt::format("{} memory error{} at {} ({} wrong reads); {}",
                      r.memory.bad_address_count,
                      r.memory.bad_address_count == 1 ? "" : "s",
                      list_addresses(r.memory), r.memory.mismatches, tie),
          "memory");
  }
  if (r.copy.mismatches > 0)
    j.add(2,
          fmt::format(
              "{} copy round trip{} came back different (host -> GPU -> host)",
              r.copy.mismatches, r.copy.mismatches == 1 ? "" : "s"),
          "copy");

  // ---- memory health counters ----
  if (r.memory.bad_address_count == 0) {
    if (auto d = w.dbe_delta(); d && *d > 0)
      j.add(2,
            fmt::format("uncorrectable ECC errors during the run: {}",
                        join(moves, ", ")),
            "ecc");
    else if (w.remap_failure)
      j.add(2, "row remapping failed: " + join(moves, ", "), "ecc");
    else if (auto s = w.sbe_delta();
             (s && *s > 0) || w.remap_pending || w.retired_pending)
      j.add(1, "memory corrected errors under load: " + join(moves, ", "),
            "ecc");
  }

  // ---- Xids ----
  for (const auto& x : w.xids) {
    const std::string sev = xid_severity(x.code, x.text);
    const XidInfo* info = find_xid(x.code);
    const std::string what =
        info ? fmt::format("Xid {} ({})", x.code, info->mnemonic)
             : fmt::format("Xid {}", x.code);
    if (sev == "critical")
      j.add(2, what + " during the run", "xid");
    else if (sev == "warning")
      j.add(1, what + " during the run", "xid");
  }
  if (w.xid_count > w.xids.size())
    j.add(1, fmt::format("{} more Xid events", w.xid_count - w.xids.size()),
          "xid");

  // ---- slow, hot, throttled ----
  v.throttled_pct = w.throttled_pct();
  if (auto share = w.share_pct(w.thermal_samples);
      share && *share >= kSlowdownSharePct)
    j.add(1,
          fmt::format("thermal slowdown {:.0f}% of the run at {} C", *share,
                      w.thermal_temp_c.value_or(w.peak_temp_c.value_or(0))),
          "thermal");
  if (auto share = w.share_pct(w.hw_slowdown_samples);
      share && *share >= kSlowdownSharePct)
    j.add(
        1,
        fmt::format(
            "hardware slowdown (HW slowdown / power brake) {:.0f}% of the run: "
            "check power supplies and cables",
            *share),
        "thermal");

  const double clock_mhz =
      v.device.clock_khz > 0 ? v.device.clock_khz / 1e3 : 0;
  v.fp32_expected_gflops = fp32_peak_gflops(
      v.device.cc_major, v.device.cc_minor, v.device.sm_count, clock_mhz);
  auto fp32_of = [](const GpuVerdict& g) { return g.run.compute.gflops_fp32; };
  if (auto fp32 = r.compute.gflops_fp32) {
    auto peers = peer_values(all, v, fp32_of);
    if (!peers.empty()) {
      const double m = median(peers);
      const double slower = 100 * (1 - *fp32 / m);
      if (slower > kPeerSlowerPct)
        j.add(1,
              fmt::format("{:.0f}% slower than its {} ({} FP32 vs {})", slower,
                          peers_word(peers.size()), flops_text(*fp32),
                          flops_text(m)),
              "slow");
    }
    if (v.fp32_expected_gflops &&
        *fp32 < *v.fp32_expected_gflops * kPeakFloorPct / 100)
      j.add(1,
            fmt::format(
                "FP32 {} is {:.0f}% of this model's {} peak at {:.0f} MHz",
                flops_text(*fp32), 100 * *fp32 / *v.fp32_expected_gflops,
                flops_text(*v.fp32_expected_gflops), clock_mhz),
            "slow");
  }
  auto mem_of = [](const GpuVerdict& g) { return g.run.memory.bytes_per_s; };
  if (auto bw = r.memory.bytes_per_s) {
    auto peers = peer_values(all, v, mem_of);
    if (!peers.empty()) {
      const double m = median(peers), slower = 100 * (1 - *bw / m);
      if (slower > kPeerSlowerBandwidthPct)
        j.add(
            1,
            fmt::format("memory {:.0f}% slower than its {} ({} vs {})", slower,
                        peers_word(peers.size()), rate_text(*bw), rate_text(m)),
            "slow");
    }
  }

  // ---- the link ----
  const GpuInfo* info = nullptr;
  for (const auto& g : report.header.gpus)
    if (g.index == v.gpu) info = &g;
  const auto copy_rate = [](const GpuVerdict& g) -> std::optional<double> {
    if (!g.run.copy.h2d_bytes_per_s || !g.run.copy.d2h_bytes_per_s)
      return std::nullopt;
    return std::min(*g.run.copy.h2d_bytes_per_s, *g.run.copy.d2h_bytes_per_s);
  };
  const auto rate = copy_rate(v);
  if (w.pcie_gen && w.pcie_width && info && info->pcie_max_gen &&
      info->pcie_max_width &&
      (*w.pcie_gen < *info->pcie_max_gen ||
       *w.pcie_width < *info->pcie_max_width)) {
    std::string text =
        fmt::format("PCIe Gen{} x{} under load (max Gen{} x{})", *w.pcie_gen,
                    *w.pcie_width, *info->pcie_max_gen, *info->pcie_max_width);
    if (auto full =
            pcie_usable_bytes_per_s(*info->pcie_max_gen, *info->pcie_max_width);
        full && rate)
      text += fmt::format(": {} of ~{}", rate_text(*rate), rate_text(*full));
    j.add(1, text, "link");
  } else if (rate && w.pcie_gen && w.pcie_width) {
    if (auto usable = pcie_usable_bytes_per_s(*w.pcie_gen, *w.pcie_width);
        usable && *rate < *usable * kLinkFloorPct / 100)
      j.add(1,
            fmt::format(
                "PCIe copies {} ({:.0f}% of the ~{} a Gen{} x{} link carries)",
                rate_text(*rate), 100 * *rate / *usable, rate_text(*usable),
                *w.pcie_gen, *w.pcie_width),
            "link");
  }
  if (rate && !j.topics.count("link")) {
    auto peers = peer_values(all, v, copy_rate);
    if (!peers.empty()) {
      const double m = median(peers), slower = 100 * (1 - *rate / m);
      if (slower > kPeerSlowerBandwidthPct)
        j.add(1,
              fmt::format("PCIe copies {:.0f}% slower than its {} ({} vs {})",
                          slower, peers_word(peers.size()), rate_text(*rate),
                          rate_text(m)),
              "link");
    }
  }
  if (w.pcie_replays_first && w.pcie_replays_last &&
      *w.pcie_replays_last > *w.pcie_replays_first)
    j.add(1,
          fmt::format("PCIe replays +{} under load",
                      *w.pcie_replays_last - *w.pcie_replays_first),
          "link");
  if (w.aer_events > 0)
    j.add(1,
          fmt::format("{} PCIe AER error{} in the kernel log", w.aer_events,
                      w.aer_events == 1 ? "" : "s"),
          "link");
  if (w.stale_samples > 0)
    j.add(1, fmt::format("NVML did not answer in time in {} sample{}",
                         w.stale_samples, w.stale_samples == 1 ? "" : "s"));

  // ---- the diagnosis rules ----
  // Findings whose subject burn's own reasons already state add no line.
  static const std::map<std::string, std::string> kCovered = {
      {"thermal-throttling", "thermal"}, {"thermal-outlier", "thermal"},
      {"power-brake", "thermal"},        {"pcie-link-degraded", "link"},
      {"pcie-aer-errors", "link"},       {"xid-error", "xid"},
      {"ecc-uncorrectable", "ecc"},      {"gpu-lost", "lost"}};
  for (const auto& f : findings) {
    if (std::find(f.gpus.begin(), f.gpus.end(), v.gpu) == f.gpus.end())
      continue;
    const int lvl = f.severity == "critical"  ? 2
                    : f.severity == "warning" ? 1
                                              : 0;
    if (!lvl) continue;
    auto it = kCovered.find(f.id);
    const bool covered = it != kCovered.end() &&
                         (j.topics.count(it->second) ||
                          (it->second == "ecc" && j.topics.count("memory")));
    if (covered) {
      j.level = std::max(j.level, lvl);
    } else {
      j.add(lvl, "finding " + f.id + ": " + f.title);
    }
  }

  // ---- the figures (the pass summary; notes beside problems) ----
  std::vector<std::string> figures;
  if (auto fp32 = r.compute.gflops_fp32) {
    auto peers = peer_values(all, v, fp32_of);
    std::string s = flops_text(*fp32) + " FP32";
    std::vector<std::string> paren;
    if (!peers.empty()) {
      auto [lo, hi] = std::minmax_element(peers.begin(), peers.end());
      paren.push_back(*lo == *hi ? fmt::format("peers {:.1f}", *lo / 1000)
                                 : fmt::format("peers {:.1f}-{:.1f}",
                                               *lo / 1000, *hi / 1000));
    }
    if (v.fp32_expected_gflops)
      paren.push_back(fmt::format("{:.0f}% of the {} peak",
                                  100 * *fp32 / *v.fp32_expected_gflops,
                                  flops_text(*v.fp32_expected_gflops)));
    if (!paren.empty()) s += " (" + join(paren, "; ") + ")";
    figures.push_back(s);
  }
  if (auto fp64 = r.compute.gflops_fp64)
    figures.push_back(flops_text(*fp64) + " FP64");
  if (auto t = r.compute.gflops_tensor)
    figures.push_back(flops_text(*t) + " tensor GEMM (FP16)");
  if (r.compute.ran && !r.compute.tensor_note.empty())
    figures.push_back("no tensor-core GEMM: " + r.compute.tensor_note);
  if (r.memory.ran && r.memory.bytes_per_s)
    figures.push_back(fmt::format(
        "memtest {} pattern{} over {} at {}", r.memory.patterns.size(),
        r.memory.patterns.size() == 1 ? "" : "s",
        human_bytes(r.memory.bytes_tested), rate_text(*r.memory.bytes_per_s)));
  if (r.copy.h2d_bytes_per_s && r.copy.d2h_bytes_per_s) {
    std::string s =
        fmt::format("H2D {}, D2H {}", rate_text(*r.copy.h2d_bytes_per_s),
                    rate_text(*r.copy.d2h_bytes_per_s));
    if (w.pcie_gen && w.pcie_width)
      s += fmt::format(" on Gen{} x{}", *w.pcie_gen, *w.pcie_width);
    figures.push_back(s);
  }
  if (w.peak_temp_c)
    figures.push_back(fmt::format("peak {} C", *w.peak_temp_c));
  if (w.samples > 0) {
    if (w.any_event_samples == 0)
      figures.push_back("no clock events");
    else if (w.power_cap_samples > 0)
      figures.push_back(fmt::format("power-capped {:.0f}% of the run",
                                    *w.share_pct(w.power_cap_samples)));
  }

  v.verdict = j.level == 2 ? "fail" : j.level == 1 ? "warn" : "pass";
  if (j.level == 0) {
    v.reasons = figures;
  } else {
    v.reasons = j.problems;
    v.notes = figures;
  }
}

}  // namespace

void judge(std::vector<GpuVerdict>& gpus, const std::vector<Finding>& findings,
           const BurnReport& context) {
  for (auto& g : gpus) judge_gpu(g, gpus, findings, context);
}

}  // namespace gd::burn
