// io-bound: the GPU keeps going idle while the host waits on storage (high
// iowait, disk busy): the data loaders are blocked reading, not computing.
// Silent when iowait is low (then it is input-bound or something else), and
// when the disk traffic is the host swapping: processes then wait on page
// faults, not on the dataset, and faster storage will not help where fewer
// workers or less host memory will (host-swapping names that cause).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"
#include "model/process_tree.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "io-bound";

// Same "starved" mark as input-bound, so the two rules split the starved
// samples between them.
constexpr double kStarvedUtilPct = 30;
constexpr double kMinStarvedFraction = 0.2;
// iowait is a share of all CPUs: 10% on a 64-CPU host is ~6 CPUs doing
// nothing but waiting for I/O.
constexpr double kIowaitPct = 10;
// Half the starved samples waiting on I/O: the mirror of input-bound's
// max_iowait_share.
constexpr double kMinIowaitShare = 0.5;
constexpr double kMinSamples = 30;
// Swap traffic that counts: host-swapping's own line (100 pages/s in+out),
// below which the kernel is only trimming cold pages.
constexpr double kSwapActivePagesPerS = 100;
// A waiting sample whose swap traffic is half the disk traffic or more is
// the host swapping, not the loaders reading.
constexpr double kSwapDiskShare = 0.5;
// /proc/vmstat counts swap in pages; 4 KiB on x86-64 and on most arm64
// kernels. The trace does not say, so a 64 KiB-page host under-counts swap
// bytes here (and io-bound then errs towards firing).
constexpr double kPageBytes = 4096;

struct PerGpu {
  size_t samples = 0, starved = 0;
  std::set<uint32_t> pids;  // GPU pids seen on it (bounded by processes)
};

class IoBoundRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader&, const Config& config) override {
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    starved_util_ = th("starved_util_pct", kStarvedUtilPct);
    min_starved_ = th("min_starved_fraction", kMinStarvedFraction);
    iowait_pct_ = th("iowait_pct", kIowaitPct);
    min_iowait_share_ = th("min_iowait_share", kMinIowaitShare);
    min_samples_ = th("min_samples", kMinSamples);
    swap_active_ = th("swap_active_pages_per_s", kSwapActivePagesPerS);
    swap_disk_share_ = th("swap_disk_share", kSwapDiskShare);
  }

  void observe(const Sample& s, const SampleContext&) override {
    bool any_in_use = false, any_starved = false;
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.util_pct || !g.processes ||
          g.processes->empty())
        continue;
      any_in_use = true;
      PerGpu& st = gpus_[g.index];
      ++st.samples;
      for (const GpuProcess& p : *g.processes) st.pids.insert(p.pid);
      if (*g.util_pct < starved_util_) {
        ++st.starved;
        any_starved = true;
      }
    }
    if (!any_in_use) return;
    ++in_use_samples_;
    if (!any_starved) return;
    ++starved_samples_;
    if (!s.host.cpu_iowait_pct || *s.host.cpu_iowait_pct < iowait_pct_) return;
    if (swapping(s.host)) return;
    io_.add(s.t);
    iowait_.add(*s.host.cpu_iowait_pct);
    if (s.host.disk_busy_pct) disk_busy_.add(*s.host.disk_busy_pct);
    if (s.host.disk_read_bytes_per_s)
      disk_read_.add(static_cast<double>(*s.host.disk_read_bytes_per_s));
    if (s.host.psi_io_some_pct) psi_io_.add(*s.host.psi_io_some_pct);
    size_t blocked = 0;
    for (const ProcessSample& p : s.processes)
      if (p.state == "D") ++blocked;
    blocked_.add(static_cast<double>(blocked));
  }

  std::vector<Finding> finish() override {
    if (static_cast<double>(in_use_samples_) < min_samples_ ||
        starved_samples_ == 0)
      return {};
    double starved_frac = static_cast<double>(starved_samples_) /
                          static_cast<double>(in_use_samples_);
    double io_share =
        static_cast<double>(io_.count) / static_cast<double>(starved_samples_);
    if (starved_frac < min_starved_ || io_share < min_iowait_share_) return {};

    Finding f;
    f.id = kId;
    f.severity = "warning";
    std::set<uint32_t> pids;
    std::string per_gpu;
    for (const auto& [index, st] : gpus_) {
      double frac =
          static_cast<double>(st.starved) / static_cast<double>(st.samples);
      if (frac < min_starved_) continue;
      f.gpus.push_back(index);
      pids.insert(st.pids.begin(), st.pids.end());
      per_gpu += fmt::format("{}GPU {} {}", per_gpu.empty() ? "" : ", ", index,
                             format_fraction(frac));
    }
    f.pids.assign(pids.begin(), pids.end());
    f.start = io_.first;
    f.end = io_.last;
    f.title = fmt::format("GPU {} waits for storage (I/O-bound input)",
                          join_ints(f.gpus));
    std::string disk;
    if (!disk_busy_.empty())
      disk += fmt::format(", disk busy {:.0f}%", disk_busy_.mean());
    if (!disk_read_.empty())
      disk += fmt::format(", reading {:.0f} MB/s", disk_read_.mean() / 1e6);
    if (!psi_io_.empty())
      disk += fmt::format(", io pressure {:.0f}%", psi_io_.mean());
    if (!blocked_.empty() && blocked_.mean() >= 0.5)
      disk += fmt::format(", {:.1f} processes in disk sleep (D) on average",
                          blocked_.mean());
    f.evidence = fmt::format(
        "GPU util below {:.0f}% in {} of {} samples ({}); in {} of those the "
        "host waited on storage: iowait {:.0f}% (peak {:.0f}%){} ({})",
        starved_util_, format_fraction(starved_frac), in_use_samples_, per_gpu,
        format_fraction(io_share), iowait_.mean(), iowait_.max, disk,
        format_range(io_.first, io_.last));
    bool disk_saturated = !disk_busy_.empty() && disk_busy_.mean() >= 80;
    f.action = fmt::format(
        "{}Stage the dataset on local NVMe or in the page cache (RAM), store "
        "it "
        "in large sequential shards (WebDataset, TFRecord, FFCV) instead of "
        "many small files, and raise read-ahead. More DataLoader workers only "
        "help while the disk has headroom.",
        disk_saturated
            ? fmt::format(
                  "The disk is at its limit ({:.0f}% busy): it cannot read "
                  "faster, so cut what is read or move it. ",
                  disk_busy_.mean())
            : std::string(
                  "Reads are slow rather than the disk full (network or "
                  "remote storage?): check its latency. "));
    return {f};
  }

  // GPUs seen waiting, but in too few samples to call it the disk.
  std::optional<std::string> not_judged() const override {
    if (starved_samples_ == 0 ||
        static_cast<double>(in_use_samples_) >= min_samples_)
      return std::nullopt;
    return needs_samples("a GPU in use", min_samples_, in_use_samples_);
  }

 private:
  // The host's disk traffic is mostly swap: active swap traffic that is at
  // least swap_disk_share of what the disks moved. With the disk rates
  // unknown, active swap traffic alone says so.
  bool swapping(const HostSample& h) const {
    double pages =
        h.swap_in_pages_per_s.value_or(0) + h.swap_out_pages_per_s.value_or(0);
    if (pages < swap_active_) return false;
    if (!h.disk_read_bytes_per_s && !h.disk_write_bytes_per_s) return true;
    double disk = static_cast<double>(h.disk_read_bytes_per_s.value_or(0) +
                                      h.disk_write_bytes_per_s.value_or(0));
    return pages * kPageBytes >= swap_disk_share_ * disk;
  }

  double starved_util_ = kStarvedUtilPct, min_starved_ = kMinStarvedFraction,
         iowait_pct_ = kIowaitPct, min_iowait_share_ = kMinIowaitShare,
         min_samples_ = kMinSamples, swap_active_ = kSwapActivePagesPerS,
         swap_disk_share_ = kSwapDiskShare;
  std::map<int, PerGpu> gpus_;
  size_t in_use_samples_ = 0, starved_samples_ = 0;
  Span io_;
  Stat iowait_, disk_busy_, disk_read_, psi_io_, blocked_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_io_bound_rule() {
  return std::make_unique<IoBoundRule>();
}

}  // namespace gd
