// Runtime state of the fake NVML: init refcount, the loaded scenario and
// faults, device handles, and the prologue every API call runs.
//
// Thread safety: one mutex guards the refcount and the pointer to the loaded
// World; the World itself is immutable, and each call holds its own
// shared_ptr to it, so a call that hangs (fault) blocks nobody else, and a
// concurrent nvmlShutdown cannot pull data from under a running call.
#pragma once

#include <chrono>
#include <memory>

#include "fake_extra_api.h"
#include "faults.h"
#include "model/sample.h"
#include "scenario.h"

// The opaque type behind nvmlDevice_t: one static slot per header GPU.
struct nvmlDevice_st {
  unsigned slot;
};

namespace fake_nvml {

inline constexpr unsigned kMaxDevices = 64;

struct World {
  Scenario scenario;
  Faults faults;
  std::chrono::steady_clock::time_point t0;
  double speed = 1.0;  // scenario seconds per wall second (FAKE_NVML_SPEED)

  double now_s() const;           // scenario time since init
  unsigned device_count() const;  // header GPUs: the valid handle slots
  // GPUs that nvmlDeviceGetCount lists now (gone_after_s faults removed).
  unsigned enumerated_count() const;
};

// nvmlInit*: loads FAKE_NVML_SCENARIO on the first reference.
nvmlReturn_t init(const char* function);
nvmlReturn_t shutdown();

nvmlDevice_t handle_for_slot(unsigned slot);

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
  DeviceCall(const char* function, nvmlDevice_t device);
  // For handle lookups, which name a GPU by its slot.
  DeviceCall(const char* function, unsigned slot);
  nvmlReturn_t status() const { return status_; }
  const gd::GpuInfo& info() const;
  const gd::GpuSample& sample() const { return *sample_; }
  unsigned slot() const { return slot_; }
  const World& world() const { return *world_; }

 private:
  void run(const char* function);
  std::shared_ptr<const World> world_;
  nvmlReturn_t status_ = NVML_SUCCESS;
  unsigned slot_ = 0;
  const gd::GpuSample* sample_ = nullptr;
};

// Copies `value` and its NUL into buf[length]; INSUFFICIENT_SIZE if it does
// not fit (NVML's rule for every string out-parameter).
nvmlReturn_t copy_string(const std::string& value, char* buf, unsigned length);

}  // namespace fake_nvml

// Answer of every generated stub (gen_stubs.py): UNINITIALIZED before init,
// the faults' say, else NOT_SUPPORTED.
extern "C" int fake_nvml_stub_call(const char* function);
