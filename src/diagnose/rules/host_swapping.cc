// host-swapping: the host is actively paging to and from swap. Swap that is
// merely used (pages parked there long ago) is harmless and not a finding;
// only traffic is.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "host-swapping";

// 100 pages/s (~0.4 MB/s with 4 KiB pages) in+out: below that it is the
// kernel trimming cold pages; above it, processes wait on swap.
constexpr double kActivePagesPerS = 100;
// Active in a tenth of the window: repeated, not one burst at start-up.
constexpr double kMinFraction = 0.1;
constexpr double kMinSamples = 3;
// Processes named in the evidence (largest resident set first).
constexpr size_t kTopProcesses = 3;

class HostSwappingRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    mem_total_ = header.host.mem_total_bytes;
    active_ = workload::threshold(config, kId, "active_pages_per_s",
                                  kActivePagesPerS);
    min_fraction_ =
        workload::threshold(config, kId, "min_fraction", kMinFraction);
    min_samples_ = workload::threshold(config, kId, "min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    const HostSample& h = s.host;
    if (!h.swap_in_pages_per_s && !h.swap_out_pages_per_s) return;
    ++known_;
    double in = h.swap_in_pages_per_s.value_or(0);
    double out = h.swap_out_pages_per_s.value_or(0);
    if (in + out < active_) return;
    active_span_.add(s.t);
    in_.add(in);
    out_.add(out);
    if (h.swap_used_bytes)
      swap_used_.add(static_cast<double>(*h.swap_used_bytes));
    if (h.mem_available_bytes)
      avail_.add(static_cast<double>(*h.mem_available_bytes));
    if (in + out > peak_) {
      // Who held the memory at the worst moment (bounded: top few).
      peak_ = in + out;
      top_.clear();
      for (const ProcessSample& p : s.processes)
        if (p.rss_bytes) top_.push_back({p.pid, p.name, *p.rss_bytes});
      std::sort(top_.begin(), top_.end(),
                [](const Top& a, const Top& b) { return a.rss > b.rss; });
      if (top_.size() > kTopProcesses) top_.resize(kTopProcesses);
    }
  }

  std::vector<Finding> finish() override {
    if (known_ == 0 || static_cast<double>(active_span_.count) < min_samples_)
      return {};
    double frac =
        static_cast<double>(active_span_.count) / static_cast<double>(known_);
    if (frac < min_fraction_) return {};
    Finding f;
    f.id = kId;
    f.severity = "warning";
    f.start = active_span_.first;
    f.end = active_span_.last;
    f.title = "The host is swapping";
    std::string mem;
    if (!swap_used_.empty())
      mem += fmt::format("; swap used up to {}",
                         gib_text(static_cast<uint64_t>(swap_used_.max)));
    if (!avail_.empty())
      mem += fmt::format("; available memory down to {}{}",
                         gib_text(static_cast<uint64_t>(avail_.min)),
                         mem_total_ ? " of " + gib_text(*mem_total_) : "");
    std::string top;
    for (const Top& t : top_) {
      f.pids.push_back(t.pid);
      top += fmt::format("{}pid {} ({}) {}", top.empty() ? "" : ", ", t.pid,
                         t.name, gib_text(t.rss));
    }
    f.evidence = fmt::format(
        "swap traffic above {:.0f} pages/s in {} of {} samples ({}): swap-in "
        "{:.0f} pages/s, swap-out {:.0f} pages/s on average (peaks {:.0f} / "
        "{:.0f}){}{}",
        active_, format_fraction(frac), known_,
        format_range(active_span_.first, active_span_.last), in_.mean(),
        out_.mean(), in_.max, out_.max, mem,
        top.empty() ? "" : "; largest resident sets: " + top);
    f.action = fmt::format(
        "Processes stall on page faults, and pinned-memory transfers to the "
        "GPU slow down. Cut host memory use{}: fewer or lighter DataLoader "
        "workers (each may copy a dataset held in Python lists -- use numpy "
        "arrays or shared memory), a smaller prefetch_factor, no in-RAM "
        "dataset caching; or add RAM. On dedicated training nodes consider "
        "disabling swap so an out-of-memory is explicit rather than slow.",
        top_.empty()
            ? ""
            : fmt::format(" (largest: pid {} {})", top_[0].pid, top_[0].name));
    return {f};
  }

  // Swapping seen, but in fewer samples than a finding needs.
  std::optional<std::string> not_judged() const override {
    if (active_span_.count == 0 ||
        static_cast<double>(active_span_.count) >= min_samples_)
      return std::nullopt;
    return needs_samples("active swapping", min_samples_, active_span_.count);
  }

 private:
  struct Top {
    uint32_t pid;
    std::string name;
    uint64_t rss;
  };
  std::optional<uint64_t> mem_total_;
  double active_ = kActivePagesPerS, min_fraction_ = kMinFraction,
         min_samples_ = kMinSamples;
  size_t known_ = 0;
  Span active_span_;
  Stat in_, out_, swap_used_, avail_;
  double peak_ = 0;
  std::vector<Top> top_;  // at most kTopProcesses
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_host_swapping_rule() {
  return std::make_unique<HostSwappingRule>();
}

}  // namespace gd
