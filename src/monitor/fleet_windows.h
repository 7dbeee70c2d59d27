// The fleet's window rules: each node's last 10 minutes of scrapes judged
// by diagnose's rules, as the fleet's rounds find them.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "monitor/fleet_frame.h"
#include "promsource/fleet_state.h"

namespace gd::monitor {

// Each node's distinct samples (one per scrape: a round that finds the same
// newest sample adds nothing) over the last kFleetWindowS, at most
// kFleetWindowSamples, so that the window rules of diagnose (thermal
// throttling, power capping, a PCIe link below its maximum, memory
// pressure, ...) judge a fleet too, as `diagnose --prometheus --duration
// 10m` would. A window is top's own (WindowDiagnosis): each scrape kept as
// a compressed trace line (a node of 8 GPUs from dcgm-exporter's series:
// ~0.4 KB a scrape, ~16 KB for 10 minutes at 15 s), judged again only when
// it has a new scrape, and then within the fleet's CPU budget
// (kFleetWindowCpuBudget: each node has its share of it, so that 2,048
// nodes cost no more than 64). Their warnings and critical findings are
// added to each node's check findings (not twice for one id and GPUs),
// what they could not judge to its not-judged list.
inline constexpr double kFleetWindowS = 600;
// One scrape every 5 s for 10 minutes (a round finds at most one): a node
// scraped, and a fleet refreshed, more often than every kFleetWindowStepS
// keeps a scrape every kFleetWindowStepS at most, so its window still spans
// 10 minutes.
inline constexpr size_t kFleetWindowSamples = 120;
inline constexpr double kFleetWindowStepS =
    kFleetWindowS / static_cast<double>(kFleetWindowSamples);
// The share of a core all nodes' window rules may take on average: after a
// node's scrapes changed what the rules key on, and while they did not
// (only the window's sliding can change the findings then). A node's
// findings are then at most WindowOptions' max_every_s (30 s) and
// quiet_max_every_s (60 s) behind its scrapes.
inline constexpr double kFleetWindowCpuBudget = 0.02;
inline constexpr double kFleetWindowQuietCpuBudget = 0.005;

class FleetWindows {
 public:
  FleetWindows();
  ~FleetWindows();
  // Adds each listed node's sample to its window and its window's findings
  // to node.judged; forgets the nodes not listed.
  void judge(std::vector<FleetNodeState>& nodes);
  // Each node's window from the fleet's last minutes (read once at start,
  // promsource/fleet_history.h), a slice at a time from the oldest: from
  // begin_fill() on, a node's first slice replaces what its window held,
  // the next add their newer scrapes; each window filled is judged whole
  // at the next judge().
  void begin_fill() { ++fill_; }
  void fill(std::vector<promsource::NodeHistory>&& slice);
  // Samples held, all nodes together (tests, bounds), and their bytes.
  size_t samples() const;
  size_t bytes() const;

 private:
  struct Window;
  std::map<std::string, std::unique_ptr<Window>> windows_;
  unsigned fill_ = 0;  // begin_fill()'s count
};

}  // namespace gd::monitor
