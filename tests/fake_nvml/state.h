// Runtime state of the fake NVML: init refcount, the loaded scenario and
// faults, device handles, and the prologue every API call runs.
//
// Thread safety: one mutex guards the refcount and the pointer to the loaded
// World; the World itself is immutable, and each call holds its own
// shared_ptr to it, so a call that hangs (fault) blocks nobody else, and a
// concurrent nvmlShutdown cannot pull data from under a running call.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "costs.h"
#include "fake_extra_api.h"
#include "faults.h"
#include "model/sample.h"
#include "scenario.h"

// The opaque type behind nvmlDevice_t: one static slot per header GPU, and
// per GPU one handle per MIG device index (`mig` >= 0).
struct nvmlDevice_st {
  unsigned slot;
  int mig;  // -1: the physical GPU
};

namespace fake_nvml {

inline constexpr unsigned kMaxDevices = 64;
// MIG devices per GPU (A100/H100: at most 7 instances).
inline constexpr unsigned kMaxMigDevices = 7;

struct World {
  Scenario scenario;
  Faults faults;
  std::chrono::steady_clock::time_point t0;
  // The wall clock at t0: NVML's field timestamps are wall-clock
  // microseconds, and a counter must match the instant its timestamp names.
  std::chrono::system_clock::time_point t0_wall;
  double speed = 1.0;  // scenario seconds per wall second (FAKE_NVML_SPEED)
  // Wall time each call takes (FAKE_NVML_COSTS; empty: every call is free).
  CallCosts costs;

  double now_s() const;  // scenario time since init
  // Wall-clock microseconds since the epoch at scenario time `scenario_s`.
  long long wall_us_at(double scenario_s) const;
  unsigned device_count() const;  // header GPUs: the valid handle slots
  // GPUs that nvmlDeviceGetCount lists now (gone_after_s faults removed).
  unsigned enumerated_count() const;
};

// nvmlInit*: loads FAKE_NVML_SCENARIO on the first reference.
nvmlReturn_t init(const char* function);
nvmlReturn_t shutdown();

nvmlDevice_t handle_for_slot(unsigned slot);
// The handle of MIG device `index` (0..kMaxMigDevices-1) of GPU `slot`.
nvmlDevice_t mig_handle_for(unsigned slot, unsigned index);

// The loaded World, or nullptr before nvmlInit / after the last nvmlShutdown.
// No faults apply (for argument checks that precede a call's prologue).
std::shared_ptr<const World> current_world();

// Prologue of a call that is not about one GPU: init check, faults.
class SystemCall {
 public:
  explicit SystemCall(const char* function);
  nvmlReturn_t status() const { return status_; }
  const World& world() const { return *world_; }

 private:
  std::shared_ptr<const World> world_;
  nvmlReturn_t status_ = NVML_SUCCESS;
};

// Prologue of a device call: init check, handle check, faults (sleep first,
// then missing symbol / forced return code), lost GPU. On status() ==
// NVML_SUCCESS, info() and sample() are the GPU's header facts and its part
// of the sample in effect now (all fields unset when the sample lacks it).
class DeviceCall {
 public:
  // Whether the function accepts MIG device handles (most do not: they
  // answer INVALID_ARGUMENT for one, as for any handle they do not know).
  enum class Mig { kReject, kAccept };
  DeviceCall(const char* function, nvmlDevice_t device, Mig mig = Mig::kReject);
  // For handle lookups, which name a GPU by its slot.
  DeviceCall(const char* function, unsigned slot);
  nvmlReturn_t status() const { return status_; }
  const gd::GpuInfo& info() const;
  const gd::GpuSample& sample() const { return *sample_; }
  unsigned slot() const { return slot_; }
  const World& world() const { return *world_; }
  // A MIG device handle: its instance in the sample now (the handle of a
  // MIG device index that no instance fills any more is INVALID_ARGUMENT).
  bool is_mig() const { return mig_ != nullptr; }
  const gd::MigInstance& mig() const { return *mig_; }
  // The GPU's MIG instances now (empty when MIG is off or unknown).
  const std::vector<gd::MigInstance>& mig_instances() const;

 private:
  void run(const char* function);
  std::shared_ptr<const World> world_;
  nvmlReturn_t status_ = NVML_SUCCESS;
  unsigned slot_ = 0;
  int mig_index_ = -1;
  const gd::GpuSample* sample_ = nullptr;
  // The sample with ended processes dropped, when the scenario asks.
  std::shared_ptr<const gd::GpuSample> adjusted_;
  const gd::MigInstance* mig_ = nullptr;
};

// Time-weighted average, over scenario seconds [t1, t2), of a value of GPU
// `gpu` that `value_of` picks from each sample (nullopt: the value is
// unknown somewhere in the interval). Follows the replay rule, looping
// included. With t1 == 0 and `integral` set, the integral instead (value x
// seconds), e.g. bytes moved from a rate.
using SampleValue =
    std::function<std::optional<double>(const gd::GpuSample& gpu_sample)>;
std::optional<double> scenario_average(const World& world, int gpu, double t1,
                                       double t2, const SampleValue& value_of,
                                       bool integral = false);

// Wall-clock microseconds (the CPU timestamps NVML puts on samples).
long long now_us();

// Copies `value` and its NUL into buf[length]; INSUFFICIENT_SIZE if it does
// not fit (NVML's rule for every string out-parameter).
nvmlReturn_t copy_string(const std::string& value, char* buf, unsigned length);

}  // namespace fake_nvml

// Answer of every generated stub (gen_stubs.py): UNINITIALIZED before init,
// the faults' say, else NOT_SUPPORTED.
extern "C" int fake_nvml_stub_call(const char* function);
