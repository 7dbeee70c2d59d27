// rdma-port-down: an InfiniBand or RoCE port that was up (ACTIVE) went down
// during the window, or its link_downed counter grew (the link dropped and
// came back between two samples). Critical while it is down at the end of
// the window, a warning once it came back. A port that was down for the
// whole window and never up is a port nobody cabled or uses: silent, unless
// the site says every port is expected up (`expect_all_ports`), which is
// how the "0 LinkUp out of 18" false alarms of fixed port-count checks are
// avoided.
#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/rules/rdma_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "rdma-port-down";
// Any new link_downed is a link that dropped: NVSentinel treats every
// increment as fatal, since each one failed the collectives that crossed
// the port at that moment. 1 = the first one counts.
constexpr double kMinLinkDownedCount = 1;
// 1: every port of the header is expected up, so one down for the whole
// window is a finding too. Off by default: unused ports are normal.
constexpr double kExpectAllPorts = 0;

class RdmaPortDownRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    min_downed_ =
        config.get("rdma-port-down.min_link_downed_count", kMinLinkDownedCount);
    expect_all_ =
        config.get("rdma-port-down.expect_all_ports", kExpectAllPorts) >= 1;
  }

  void observe(const Sample& s, const SampleContext&) override {
    if (!s.host.rdma_ports) return;
    for (const RdmaPort& p : *s.host.rdma_ports) {
      auto it = ports_.find({p.device, p.port});
      if (it == ports_.end()) {
        if (ports_.size() >= kRdmaPortsMax) continue;
        it = ports_.emplace(std::make_pair(p.device, p.port), State{}).first;
      }
      State& st = it->second;
      st.downed.add(s.t, p.link_downed_total);
      if (p.state.empty()) continue;
      const bool up = p.state == "ACTIVE";
      if (up) {
        st.was_up = true;
        if (st.down_now) st.came_back_t = s.t;
      } else {
        st.down_samples.add(s.t);
        if (st.was_up && !st.went_down_t) st.went_down_t = s.t;
        st.last_down_state = p.state;
        st.last_down_phys = p.phys_state;
      }
      st.down_now = !up;
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [key, st] : ports_) {
      const bool went_down = st.went_down_t.has_value();
      const bool downed = static_cast<double>(st.downed.growth) >= min_downed_;
      const bool never_up = !st.was_up && st.down_now;
      if (!went_down && !downed && !(never_up && expect_all_)) continue;
      out.push_back(make_finding(key.first, key.second, st));
    }
    return out;
  }

 private:
  struct State {
    bool was_up = false, down_now = false;
    opt<double> went_down_t, came_back_t;
    Span down_samples;
    std::string last_down_state, last_down_phys;
    rdma::Growth downed;
  };

  Finding make_finding(const std::string& device, int port,
                       const State& st) const {
    const std::string name = rdma::port_name(device, port);
    Finding f;
    f.id = kId;
    f.severity = st.down_now ? "critical" : "warning";
    f.gpus = rdma::gpus_near(*header_, device);
    const std::string state =
        st.last_down_phys.empty()
            ? st.last_down_state
            : fmt::format("{} / {}", st.last_down_state, st.last_down_phys);
    std::vector<std::string> parts;
    if (st.went_down_t) {
      f.start = *st.went_down_t;
      f.end = st.down_now ? st.down_samples.last
                          : st.came_back_t.value_or(*st.went_down_t);
      parts.push_back(fmt::format("was ACTIVE, then {} from {}", state,
                                  format_time(*st.went_down_t)));
      if (!st.down_now && st.came_back_t)
        parts.push_back(
            fmt::format("ACTIVE again from {}", format_time(*st.came_back_t)));
      else if (st.down_now)
        parts.push_back("still down at the end of the window");
    } else if (!st.was_up) {
      f.start = st.down_samples.first;
      f.end = st.down_samples.last;
      parts.push_back(fmt::format(
          "{} for the whole window ({}), and the site expects every port up",
          state, format_range(f.start, f.end)));
    } else {
      f.start = st.downed.first_growth_t;
      f.end = st.downed.last_growth_t;
    }
    if (st.downed.growth > 0)
      parts.push_back(fmt::format(
          "link_downed grew by {} ({})", st.downed.growth,
          format_range(st.downed.first_growth_t, st.downed.last_growth_t)));
    parts.push_back(rdma::near_text(*header_, device));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    if (st.down_now) {
      f.title = fmt::format("RDMA port {} is down ({})", name, state);
      f.action = fmt::format(
          "Jobs that use {} fail or fall back to slower paths. Check the "
          "cable and the switch port (`ibstat {} {}`, `ibportstate`, the "
          "switch's log), reseat or replace the cable or transceiver, and "
          "drain the node from multi-node jobs until the port is ACTIVE.",
          name, device, port);
    } else {
      f.title = fmt::format("RDMA port {} went down and came back", name);
      f.action = fmt::format(
          "The link dropped: every collective crossing {} at that moment "
          "failed or stalled. A link that drops once usually drops again: "
          "check the cable, transceiver and switch port (`ibstat {} {}`, "
          "`perfquery`, the switch's log) and replace what is marginal.",
          name, device, port);
    }
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double min_downed_ = kMinLinkDownedCount;
  bool expect_all_ = false;
  std::map<std::pair<std::string, int>, State> ports_;  // <= kRdmaPortsMax
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_rdma_port_down_rule() {
  return std::make_unique<RdmaPortDownRule>();
}

}  // namespace gd
