// A fake-NVML scenario (trace-format.md, "Fake NVML scenarios"): the header's
// static GPU facts plus the GPU part of every sample, replayed against time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace fake_nvml {

class Scenario {
 public:
  // Reads the trace at `path` with the project's trace reader (plain or
  // .zst). Throws gd::TraceError / std::runtime_error on a bad file.
  static Scenario load(const std::string& path);

  // Builds one from parts (unit tests). `offsets_s` must start at 0 and rise.
  Scenario(gd::TraceHeader header, std::vector<double> offsets_s,
           std::vector<std::vector<gd::GpuSample>> gpus, bool loop);

  const gd::TraceHeader& header() const { return header_; }
  bool loop() const { return loop_; }
  void set_loop(bool loop) { loop_ = loop; }  // FAKE_NVML_LOOP=1
  // Header "ended_processes_free_memory": true: as the driver does, a
  // listed process that has ended (no /proc entry, or a zombie) is no
  // longer listed and its memory no longer counts as used.
  bool ended_processes_free_memory() const { return frees_; }
  void set_ended_processes_free_memory(bool on) { frees_ = on; }
  size_t sample_count() const { return offsets_.size(); }

  // Index of the sample in effect `s` seconds after start: the latest whose
  // offset from the first sample is <= s. With looping, time wraps after the
  // last sample has been shown for one (last) sample interval. nullopt when
  // the scenario has no samples.
  std::optional<size_t> sample_at(double s) const;

  // The GPU part for header GPU `gpu_index` (header gpus[].index) of sample
  // `sample`; nullptr when that sample does not mention the GPU.
  const gd::GpuSample* gpu(size_t sample, int gpu_index) const;

  // Loop period in seconds (see sample_at).
  double period_s() const;
  // Offset of sample `i` from the first sample, in seconds.
  double offset(size_t i) const { return offsets_[i]; }

 private:
  gd::TraceHeader header_;
  std::vector<double> offsets_;                   // per sample, from first
  std::vector<std::vector<gd::GpuSample>> gpus_;  // per sample
  bool loop_ = false;
  bool frees_ = false;
};

// Reads the header field "loop" straight from line 1 of a plain-text scenario
// (the trace reader keeps only the fields of the data model). False for a
// compressed file or when absent.
bool header_loop_flag(const std::string& path);
// The same for any boolean header field `name`.
bool header_flag(const std::string& path, const char* name);

// `gpu` as the driver would report it now when ended processes free their
// memory: the ended ones dropped, their bytes taken off mem_used_bytes.
gd::GpuSample without_ended_processes(const gd::GpuSample& gpu);

}  // namespace fake_nvml
