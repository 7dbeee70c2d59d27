// What every scenario file shares: the Scenario interface, the catalogue
// entry, and the small layout helpers.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "tracegen/tracegen.h"
#include "tracegen/world.h"

namespace gd::tracegen {

class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual void setup(World& w) = 0;
  virtual void step(World& w, const Step& st) { w.healthy_step(st); }
  // Last touch on the emitted copy (e.g. knock out fields), leaving the
  // world's own state intact for the next step.
  virtual void post(World&, Sample&, const Step&) {}
};

struct Entry {
  ScenarioInfo info;
  std::function<std::unique_ptr<Scenario>()> make;
};

template <typename T, typename... A>
std::function<std::unique_ptr<Scenario>()> make(A... args) {
  return [=] { return std::unique_ptr<Scenario>(new T(args...)); };
}

inline std::vector<int> all_gpus(const World& w) {
  std::vector<int> g(w.header.gpus.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<int>(i);
  return g;
}

// The healthy DDP job every scenario starts from. With --processes N the
// workers are spread so that the job has N process entries.
inline JobSpec default_job(const World& w, std::vector<int> gpus) {
  JobSpec spec;
  spec.gpus = std::move(gpus);
  spec.workers_per_rank = w.opt.processes > 0 ? -1 : 4;
  return spec;
}

inline int last_gpu(const World& w) {
  return static_cast<int>(w.header.gpus.size()) - 1;
}

// `entries` followed by the datacenter scenarios (MIG, NVLink, GPM;
// scenarios_datacenter.cc), then the fabric ones.
std::vector<Entry> with_datacenter_entries(std::vector<Entry> entries);
// `entries` followed by the fabric scenarios (InfiniBand / RoCE ports;
// scenarios_fabric.cc).
std::vector<Entry> with_fabric_entries(std::vector<Entry> entries);

}  // namespace gd::tracegen
