// rdma-errors: a port's error counters grow at a rate above a named
// threshold: symbol errors, link error recoveries, receive errors, local
// link integrity errors, excessive buffer overruns. One finding per port,
// with each counter's growth and rate; critical when a counter grows at
// its critical rate, a warning otherwise. Counters that carry old errors
// but stay flat are silent (only growth in the window counts; a counter
// that went down was cleared and starts a new baseline).
//
// The thresholds start from NVIDIA's NVSentinel, which publishes them for
// InfiniBand port counters: symbol errors above 10 per second are fatal,
// above 120 per hour (a bit error rate the link's forward error correction
// no longer hides) degraded. A few errors in a short window would read as
// a high hourly rate, so a warning also needs `min_count` of them.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/rules/rdma_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "rdma-errors";

// NVSentinel: symbol errors above 120 an hour degrade, above 10 a second
// are fatal. Receive errors (bad CRC, malformed packets) and excessive
// buffer overruns come from the same bad signal or from flow control gone
// wrong and are judged alike.
constexpr double kWarnPerHour = 120;
constexpr double kCriticalPerS = 10;
// At least this many new errors for a warning: 3 in a 1-minute window is
// 180/h, which says little.
constexpr double kMinCount = 10;
// Link error recoveries and local link integrity errors are each a retrain
// or an error burst past the port's own threshold (the counters are 8 and
// 4 bits wide): a few are a warning (kRecoveryMinCount in the window), one
// a minute for 3 or more is critical.
constexpr double kRecoveryMinCount = 2;
constexpr double kRecoveryCriticalPerMin = 1;
constexpr double kRecoveryCriticalMinCount = 3;

enum Kind { kSymbol, kRecovery, kRcv, kIntegrity, kOverrun, kKinds };
constexpr const char* kNames[kKinds] = {
    "symbol errors", "link error recoveries", "receive errors",
    "local link integrity errors", "excessive buffer overruns"};
const opt<uint64_t>& counter(const RdmaPort& p, int k) {
  switch (k) {
    case kSymbol:
      return p.symbol_error_total;
    case kRecovery:
      return p.link_error_recovery_total;
    case kRcv:
      return p.port_rcv_errors_total;
    case kIntegrity:
      return p.local_link_integrity_errors_total;
    default:
      return p.excessive_buffer_overrun_errors_total;
  }
}
bool is_recovery_kind(int k) { return k == kRecovery || k == kIntegrity; }

class RdmaErrorsRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    warn_per_h_ = config.get("rdma-errors.warn_per_h", kWarnPerHour);
    critical_per_s_ = config.get("rdma-errors.critical_per_s", kCriticalPerS);
    min_count_ = config.get("rdma-errors.min_count", kMinCount);
    recovery_min_ =
        config.get("rdma-errors.recovery_min_count", kRecoveryMinCount);
    recovery_critical_per_min_ = config.get(
        "rdma-errors.recovery_critical_per_min", kRecoveryCriticalPerMin);
    recovery_critical_min_ = config.get("rdma-errors.recovery_critical_count",
                                        kRecoveryCriticalMinCount);
  }

  void observe(const Sample& s, const SampleContext&) override {
    if (!s.host.rdma_ports) return;
    for (const RdmaPort& p : *s.host.rdma_ports) {
      auto it = ports_.find({p.device, p.port});
      if (it == ports_.end()) {
        if (ports_.size() >= kRdmaPortsMax) continue;
        it = ports_.emplace(std::make_pair(p.device, p.port), State{}).first;
      }
      for (int k = 0; k < kKinds; ++k)
        it->second.counters[static_cast<size_t>(k)].add(s.t, counter(p, k));
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [key, st] : ports_) {
      int worst = -1;  // 1 warning, 2 critical
      std::vector<std::string> parts;
      double start = 0, end = 0;
      for (int k = 0; k < kKinds; ++k) {
        const rdma::Growth& g = st.counters[static_cast<size_t>(k)];
        if (g.growth == 0) continue;
        // The rate over the window's readings (a second at least).
        const double span = std::max(g.span(), 1.0);
        const double n = static_cast<double>(g.growth);
        const double per_s = n / span;
        int level = 0;
        if (is_recovery_kind(k)) {
          if (n >= recovery_critical_min_ &&
              per_s * 60 >= recovery_critical_per_min_)
            level = 2;
          else if (n >= recovery_min_)
            level = 1;
        } else {
          if (per_s >= critical_per_s_ && g.grew_samples >= 2)
            level = 2;
          else if (n >= min_count_ && per_s * 3600 >= warn_per_h_)
            level = 1;
        }
        if (level == 0) continue;
        if (worst < 0 || g.first_growth_t < start) start = g.first_growth_t;
        end = std::max(end, g.last_growth_t);
        worst = std::max(worst, level);
        parts.push_back(fmt::format("{} +{} ({:.3g}/s, {:.0f}/h; total {})",
                                    kNames[k], g.growth, per_s, per_s * 3600,
                                    g.prev.value_or(0)));
      }
      if (worst < 0) continue;
      out.push_back(
          make_finding(key.first, key.second, worst, parts, start, end));
    }
    return out;
  }

 private:
  struct State {
    std::array<rdma::Growth, kKinds> counters{};
  };

  Finding make_finding(const std::string& device, int port, int level,
                       const std::vector<std::string>& parts, double start,
                       double end) const {
    const std::string name = rdma::port_name(device, port);
    Finding f;
    f.id = kId;
    f.severity = level >= 2 ? "critical" : "warning";
    f.gpus = rdma::gpus_near(*header_, device);
    f.start = start;
    f.end = end;
    f.title = fmt::format("RDMA port {} counts link errors", name);
    f.evidence = fmt::format("{} ({}); {}", fmt::join(parts, "; "),
                             format_range(start, end),
                             rdma::near_text(*header_, device));
    f.action = fmt::format(
        "Errors on the wire: packets are resent or dropped and every "
        "collective over {} slows or stalls. Symbol and receive errors point "
        "at the physical link: clean or reseat the connectors, replace the "
        "cable or transceiver, check the switch port's own counters "
        "(`perfquery` on both ends); buffer overruns at flow control "
        "(credits, the switch's buffer configuration). Clear the counters "
        "after the fix (`perfquery -R`) to see whether they stay flat.",
        name);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double warn_per_h_ = kWarnPerHour, critical_per_s_ = kCriticalPerS,
         min_count_ = kMinCount, recovery_min_ = kRecoveryMinCount,
         recovery_critical_per_min_ = kRecoveryCriticalPerMin,
         recovery_critical_min_ = kRecoveryCriticalMinCount;
  std::map<std::pair<std::string, int>, State> ports_;  // <= kRdmaPortsMax
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_rdma_errors_rule() {
  return std::make_unique<RdmaErrorsRule>();
}

}  // namespace gd
