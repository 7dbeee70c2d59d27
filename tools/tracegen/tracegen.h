// gd_tracegen: synthetic gpudoctor traces (trace-format.md) for tests and
// benchmarks. Each scenario models one situation -- a healthy DDP job, an
// input-bound loader, a leaking process, a zombie holding GPU memory, a GPU
// falling off the bus, ... -- with deterministic noise from a seeded PRNG,
// so the same options always give the same samples.
//
// Generation streams: one Sample at a time, nothing kept per sample, so a
// 24 h, 8-GPU, 1 Hz trace costs no more memory than a 10 s one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace gd::tracegen {

struct Options {
  int gpus = 1;
  double duration_s = 600;
  double interval_s = 1;
  int processes = 0;  // total process entries; 0 = the scenario's own layout
  uint64_t seed = 1;
  double start_t = 1732262400.0;  // 2024-11-22 08:00:00 UTC
};

struct ScenarioInfo {
  std::string name;
  std::string description;
  int min_gpus = 1;
  // Finding ids the scenario is built to trigger, and ids it is a
  // "must not fire" case for (findings.md).
  std::vector<std::string> fires;
  std::vector<std::string> silent;
};

// Every scenario, in a stable order.
const std::vector<ScenarioInfo>& scenarios();
// nullptr for an unknown name.
const ScenarioInfo* find_scenario(std::string_view name);

class Generator {
 public:
  // Throws std::invalid_argument for an unknown scenario, gpus below the
  // scenario's min_gpus, or a non-positive duration or interval.
  Generator(std::string_view scenario, const Options& options);
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  const TraceHeader& header() const;
  size_t sample_count() const;
  // Overwrites `out` with the next sample; false after the last one.
  bool next(Sample& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// All samples of a (small) scenario in memory, for tests.
std::vector<Sample> generate_all(std::string_view scenario,
                                 const Options& options,
                                 TraceHeader* header = nullptr);

}  // namespace gd::tracegen
