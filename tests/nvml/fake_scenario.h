// Scenario files for the fake libnvidia-ml.so.1 (tests/fake_nvml), written
// per test: a trace header with GPU facts and faults, then GPU samples.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nvml/gpu_source.h"

namespace gd_test {

using nlohmann::json;

// GPU facts with every field set (distinct, recognisable values per index).
json full_gpu_info(int index);
// One GPU's sample with every field set.
json full_gpu_sample(int index);

struct FakeScenario {
  json header;                // "gpus", "faults", ... (format/version preset)
  std::vector<json> samples;  // each {"t": ..., "gpus": [...]} (rest preset)

  // A scenario of `gpus` GPUs with full facts and one full sample.
  static FakeScenario with_gpus(int gpus);

  // Writes the file under the test temp dir and points FAKE_NVML_SCENARIO
  // at it. Returns the path.
  std::string install(const std::string& name) const;
};

// GpuSource options for the fake (the old-API variant lacks newer symbols).
gd::GpuSource::Options fake_options(bool old_api = false);

}  // namespace gd_test

namespace gd_test {

// EXPECTs that every field of `info` / `sample` equals the scenario's.
void expect_info_matches(const gd::GpuInfo& info, const json& want);
void expect_sample_matches(const gd::GpuSample& sample, const json& want);
// EXPECTs that no field of a GPU sample is set (only index/flags).
void expect_no_values(const gd::GpuSample& s);

}  // namespace gd_test
