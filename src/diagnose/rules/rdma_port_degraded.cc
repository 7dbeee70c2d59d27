// rdma-port-degraded: a port is ACTIVE below the rate of its peers (ports
// of the same device model and link layer on this host) or below the rate
// the site expects (`expected_rate_gbps`). A link that trained at half its
// rate (a lane or a cable pair gone, a transceiver of a lower class) halves
// every collective that crosses it, and NCCL's rings run at the pace of
// their slowest link. Silent for a port that is down (rdma-port-down's) and
// when the ports differ in model or link layer.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/rdma_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "rdma-port-degraded";
// Rates are discrete steps (NDR 400, HDR 200, 100, 50 ...): anything below
// 95% of the peers' is a lower step, never rounding.
constexpr double kMaxRateRatio = 0.95;
// 0: no site expectation, compare with the peers only.
constexpr double kExpectedRateGbps = 0;
// A port re-trains within seconds after a flap; degraded in most of the
// samples it was ACTIVE, and in at least 3, is how it runs.
constexpr double kMinFraction = 0.5;
constexpr double kMinSamples = 3;

class RdmaPortDegradedRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    ratio_ = config.get("rdma-port-degraded.max_rate_ratio", kMaxRateRatio);
    expected_ =
        config.get("rdma-port-degraded.expected_rate_gbps", kExpectedRateGbps);
    min_fraction_ = config.get("rdma-port-degraded.min_fraction", kMinFraction);
    min_samples_ = config.get("rdma-port-degraded.min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    if (!s.host.rdma_ports) return;
    const auto& ports = *s.host.rdma_ports;
    for (const RdmaPort& p : ports) {
      if (p.state != "ACTIVE" || !p.rate_gbps) continue;
      auto it = ports_.find({p.device, p.port});
      if (it == ports_.end()) {
        if (ports_.size() >= kRdmaPortsMax) continue;
        it = ports_.emplace(std::make_pair(p.device, p.port), State{}).first;
      }
      State& st = it->second;
      ++st.active;
      // The best rate of an ACTIVE peer now: same model and link layer.
      const std::string group = group_of(p.device, p.port);
      double peers = 0;
      if (!group.empty())
        for (const RdmaPort& q : ports)
          if (&q != &p && q.state == "ACTIVE" && q.rate_gbps &&
              group_of(q.device, q.port) == group)
            peers = std::max(peers, *q.rate_gbps);
      const double want = std::max(peers, expected_);
      if (want <= 0 || *p.rate_gbps >= ratio_ * want) continue;
      st.degraded.add(s.t);
      st.rate.add(*p.rate_gbps);
      st.want.add(want);
      if (peers > 0 && *p.rate_gbps < ratio_ * peers) st.below_peers = true;
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [key, st] : ports_) {
      const double n = static_cast<double>(st.degraded.count);
      if (n < min_samples_ ||
          n < min_fraction_ * static_cast<double>(st.active))
        continue;
      out.push_back(make_finding(key.first, key.second, st));
    }
    return out;
  }

  std::optional<std::string> not_judged() const override {
    size_t most = 0;
    for (const auto& [key, st] : ports_)
      if (st.degraded.count > 0 &&
          static_cast<double>(st.degraded.count) < min_samples_)
        most = std::max(most, st.degraded.count);
    if (most == 0) return std::nullopt;
    return needs_samples("an RDMA port active below its rate", min_samples_,
                         most);
  }

 private:
  struct State {
    size_t active = 0;
    Span degraded;
    Stat rate, want;
    bool below_peers = false;
  };

  // "MT4129/InfiniBand"; "" when the model is unknown (no peers then).
  std::string group_of(const std::string& device, int port) const {
    const RdmaDevice* d = rdma::find_device(*header_, device);
    const RdmaPortInfo* p = rdma::find_port_info(*header_, device, port);
    if (!d || !p || d->model.empty()) return "";
    return d->model + "/" + p->link_layer;
  }

  Finding make_finding(const std::string& device, int port,
                       const State& st) const {
    const std::string name = rdma::port_name(device, port);
    const double fraction =
        static_cast<double>(st.degraded.count) / static_cast<double>(st.active);
    Finding f;
    f.id = kId;
    f.severity = "warning";
    f.gpus = rdma::gpus_near(*header_, device);
    f.start = st.degraded.first;
    f.end = st.degraded.last;
    const double share = st.want.max > 0 ? st.rate.min / st.want.max : 0;
    f.title = fmt::format("RDMA port {} runs at {:g} Gb/s instead of {:g}",
                          name, st.rate.min, st.want.max);
    std::vector<std::string> parts;
    parts.push_back(fmt::format(
        "ACTIVE at {:g} Gb/s, {} of the {:g} Gb/s {} in {} of {} samples, {}",
        st.rate.min, format_fraction(share), st.want.max,
        st.below_peers ? "of its peers (same model and link layer)"
                       : "the site expects",
        format_fraction(fraction), st.active,
        format_range(st.degraded.first, st.degraded.last)));
    if (const RdmaPortInfo* info = rdma::find_port_info(*header_, device, port);
        info && info->max_rate_gbps)
      parts.push_back(
          fmt::format("{:g} Gb/s when the trace began", *info->max_rate_gbps));
    parts.push_back(rdma::near_text(*header_, device));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    f.action = fmt::format(
        "Every collective that crosses {} runs at {} of its speed. The link "
        "trained at a lower width or speed: check `ibstat {} {}` (Rate, "
        "width), the cable and transceiver class, then reseat or replace "
        "the cable, and bounce the port on the switch so it trains again.",
        name, format_fraction(share), device, port);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double ratio_ = kMaxRateRatio, expected_ = kExpectedRateGbps;
  double min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  std::map<std::pair<std::string, int>, State> ports_;  // <= kRdmaPortsMax
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_rdma_port_degraded_rule() {
  return std::make_unique<RdmaPortDegradedRule>();
}

}  // namespace gd
