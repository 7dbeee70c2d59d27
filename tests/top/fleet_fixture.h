// A fleet made in memory for the tests of its views (top --prometheus's
// screen, serve's GET /api/v1/fleet): a node of two GPUs as a round of
// Prometheus reads read it, and the frame of a round judged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "monitor/fleet_feed.h"
#include "promsource/fleet_state.h"

namespace gd::fleet_test {

// When the round ended: a node's age counts back from it.
inline constexpr double kNow = 1732262400.0;

// `name` last seen `age` seconds before kNow: two H100s, busy and cool, GPU 1
// with `dbe` uncorrectable ECC errors.
inline promsource::FleetNode fleet_node(const std::string& name, double age,
                                        uint64_t dbe = 0) {
  promsource::FleetNode n;
  n.node = name;
  n.last_seen = kNow - age;
  n.header.host.hostname = name;
  for (int i = 0; i < 2; ++i) {
    GpuInfo info;
    info.index = i;
    info.name = "NVIDIA H100 80GB HBM3";
    info.memory_total_bytes = 80ull << 30;
    n.header.gpus.push_back(info);
    GpuSample g;
    g.index = i;
    g.util_pct = 90;
    g.mem_used_bytes = 40ull << 30;
    g.temp_c = 60;
    g.power_w = 500;
    g.ecc_dbe_volatile_total = i == 1 ? dbe : 0;
    n.sample.gpus.push_back(g);
  }
  n.sample.t = kNow;
  return n;
}

// The frame of a round of `nodes` ended at kNow, judged after `prev`'s.
inline monitor::FleetFrame fleet_frame_of(
    std::vector<promsource::FleetNode> nodes,
    const std::vector<monitor::FleetNodeState>& prev = {}) {
  promsource::FleetState st;
  st.t = kNow;
  st.nodes = std::move(nodes);
  monitor::FleetFrame f;
  f.seq = 7;
  f.source = "http://prometheus:9090";
  f.interval_s = 5;
  f.t = kNow;
  f.round_s = 0.25;
  f.nodes = monitor::merge_round(prev, std::move(st));
  return f;
}

}  // namespace gd::fleet_test
