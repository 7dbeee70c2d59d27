// gpudoctor burn: loads every selected GPU (compute, memory, PCIe tests, each
// on the GPU's own thread through the CUDA driver API) while the Sampler
// watches the node (NVML, host, kernel log) and the diagnosis runs over the
// burn window, then gives one verdict per GPU that says why.
//
// The module returns data (BurnReport); views/burn_view formats it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "burn/collective_verdict.h"
#include "burn/results.h"
#include "burn/watch.h"
#include "collect/sampler.h"
#include "diagnose/engine.h"

namespace gd::burn {

struct BurnOptions {
  double duration_s = 60;
  // The GPUs as --gpu names them (index, UUID, PCI address or device
  // file, model/gpu_lookup.h); empty = every GPU.
  std::vector<std::string> gpus;
  bool compute = true, memory = true, pcie = true;
  // The all-reduce across the GPUs through NCCL, after the tests above (the
  // last kCollectiveShare of the run) or alone.
  bool collective = false;
  std::string nccl_lib;          // "" = libnccl.so.2 from the linker's path
  double memory_fraction = 0.9;  // of the free memory the memtest covers
  bool force = false;            // run on GPUs that have processes
  std::string cuda_lib = "libcuda.so.1";
  std::string cublas_lib;   // "" = the system's libcublas.so.{13,12,11}
  std::string record_path;  // "" = no trace
  double interval_s = 1.0;  // NVML / host sampling
  SamplerOptions sampler;
  DiagnoseOptions diagnose;
};

// Why burn did not run. kind: "cannot_run" (no driver, no GPU, a GPU that
// is busy without --force: exit 3) or "usage" (a --gpu the node does not
// have: exit 2).
class BurnError : public std::runtime_error {
 public:
  BurnError(std::string kind, const std::string& what)
      : std::runtime_error(what), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

// What the live view shows, once per sample.
struct GpuTick {
  int gpu = 0;
  GpuLive live;
  GpuSample sample;  // the latest NVML reading (index only when none)
};
struct BurnTick {
  double elapsed_s = 0, duration_s = 0;
  std::vector<GpuTick> gpus;
};

struct BurnStart {
  TraceHeader header;
  std::vector<std::pair<int, cuda::DeviceFacts>>
      gpus;                    // NVML index, CUDA facts
  std::string driver_version;  // CUDA's, "12.2"
  std::string cublas;  // the libcublas loaded, or why none ("" = not asked)
  std::string nccl;    // the libnccl loaded and its version ("" = not asked)
};

struct Callbacks {
  std::function<void(const BurnStart&)> on_start;
  std::function<void(const BurnTick&)> on_tick;
};

struct GpuVerdict {
  int gpu = 0;  // NVML index (CUDA's ordinal is in `device`)
  std::string name, uuid, pci_bus_id;
  cuda::DeviceFacts device;
  std::string verdict;  // pass | warn | fail
  std::vector<std::string>
      reasons;                     // problems (warn/fail) or the summary (pass)
  std::vector<std::string> notes;  // figures besides the problems
  GpuRunResult run;
  GpuWatch watch;
  std::optional<double> throttled_pct;  // share of the run under slowdown
  std::optional<double> fp32_expected_gflops;  // lanes x 2 x max clock
};

struct BurnReport {
  TraceHeader header;
  std::vector<GpuVerdict> gpus;
  DiagnoseResult diagnosis;
  double duration_s = 0;     // asked for
  double ran_s = 0;          // wall time of the tests
  bool interrupted = false;  // Ctrl-C
  // --record: why the trace stopped being written (a full disk, say); the
  // burn itself goes on. Empty when the trace is complete or not asked for.
  std::string record_error;
  bool compute = true, memory = true, pcie = true;
  CollectiveResult collective;  // asked = false when not asked for
  CollectiveVerdict collective_verdict;
  std::string cublas;  // loaded library, or why none
  std::string driver_version;
  double started_at = 0;  // Unix time
};

// Runs the burn. `stop` ends it early (Ctrl-C): every GPU stops between two
// launches, frees its memory and the report covers what ran. Throws
// BurnError when it cannot start.
BurnReport run_burn(const BurnOptions& options, const std::atomic<bool>& stop,
                    const Callbacks& callbacks = {});

// 0 every GPU (and the all-reduce) passed, 1 a warning, 2 a failure, 3 could
// not run (also: an interrupted run where nothing failed, since the test did
// not complete).
int burn_exit_code(const BurnReport& report);

}  // namespace gd::burn
