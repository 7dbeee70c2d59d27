#include "state.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "error_codes.h"

namespace fake_nvml {
namespace {

std::mutex g_mu;
int g_refcount = 0;                    // guarded by g_mu
std::shared_ptr<const World> g_world;  // guarded by g_mu
nvmlDevice_st g_devices[kMaxDevices];  // handles stay valid forever
nvmlDevice_st g_mig_devices[kMaxDevices][kMaxMigDevices];
const std::vector<gd::MigInstance> kNoInstances;

// Whether `device` points at one of the handles of `table`.
template <typename Table>
bool in_table(nvmlDevice_t device, const Table& table) {
  auto addr = reinterpret_cast<std::uintptr_t>(device);
  auto base = reinterpret_cast<std::uintptr_t>(&table);
  return device != nullptr && addr >= base && addr < base + sizeof(table) &&
         (addr - base) % sizeof(nvmlDevice_st) == 0;
}

const gd::GpuSample kNoSample{};

double env_speed() {
  const char* v = std::getenv("FAKE_NVML_SPEED");
  if (!v || !*v) return 1.0;
  char* end = nullptr;
  double speed = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(speed > 0)) {
    std::fprintf(stderr, "fake-nvml: ignoring bad FAKE_NVML_SPEED=%s\n", v);
    return 1.0;
  }
  return speed;
}

bool env_loop() {
  const char* v = std::getenv("FAKE_NVML_LOOP");
  return v && std::strcmp(v, "1") == 0;
}

// The header's nvml_status says how a real NVML would have failed to start.
nvmlReturn_t init_code_for_status(const std::string& status) {
  if (status == gd::kNvmlDriverMismatch)
    return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
  if (status == gd::kNvmlNoPermission) return NVML_ERROR_NO_PERMISSION;
  if (status == gd::kNvmlNoDriver) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (status == gd::kNvmlError) return NVML_ERROR_UNKNOWN;
  return NVML_SUCCESS;
}

void sleep_s(double s) {
  if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Builds a World from the environment, or says why nvmlInit fails.
nvmlReturn_t load_world(std::shared_ptr<World>& out) {
  const char* path = std::getenv("FAKE_NVML_SCENARIO");
  if (!path || !*path) {
    std::fprintf(stderr, "fake-nvml: FAKE_NVML_SCENARIO is not set\n");
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  try {
    Scenario scenario = Scenario::load(path);
    Faults faults = Faults::parse(scenario.header().faults_json);
    if (env_loop()) scenario.set_loop(true);
    if (scenario.header().gpus.size() > kMaxDevices) {
      std::fprintf(stderr, "fake-nvml: %s: more than %u GPUs\n", path,
                   kMaxDevices);
      return NVML_ERROR_UNKNOWN;
    }
    CallCosts costs;
    if (const char* file = std::getenv("FAKE_NVML_COSTS"); file && *file)
      costs = CallCosts::load(file);
    out = std::make_shared<World>(World{std::move(scenario), std::move(faults),
                                        std::chrono::steady_clock::now(),
                                        std::chrono::system_clock::now(),
                                        env_speed(), std::move(costs)});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake-nvml: cannot load scenario %s: %s\n", path,
                 e.what());
    return NVML_ERROR_UNKNOWN;
  }
  return NVML_SUCCESS;
}

}  // namespace

double World::now_s() const {
  std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
  return wall.count() * speed;
}

long long World::wall_us_at(double scenario_s) const {
  const auto since_t0 = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(scenario_s / speed));
  return std::chrono::duration_cast<std::chrono::microseconds>(
             (t0_wall + since_t0).time_since_epoch())
      .count();
}

unsigned World::device_count() const {
  return static_cast<unsigned>(scenario.header().gpus.size());
}

unsigned World::enumerated_count() const {
  const unsigned gone = faults.gone_count(now_s());
  return gone < device_count() ? device_count() - gone : 0;
}

nvmlReturn_t init(const char* function) {
  {
    std::lock_guard lock(g_mu);
    if (g_refcount > 0) {
      ++g_refcount;
      return NVML_SUCCESS;
    }
  }
  // First reference: load outside the lock, so a hang fault on nvmlInit
  // does not block other threads.
  std::shared_ptr<World> world;
  if (nvmlReturn_t rc = load_world(world); rc != NVML_SUCCESS) return rc;
  if (auto code = world->faults.init_return())
    return static_cast<nvmlReturn_t>(*code);
  if (nvmlReturn_t rc =
          init_code_for_status(world->scenario.header().nvml_status);
      rc != NVML_SUCCESS) {
    return rc;
  }
  FaultDecision d = world->faults.decide(function, -1, 0);
  sleep_s(d.sleep_s);
  if (d.return_code) return static_cast<nvmlReturn_t>(*d.return_code);
  // The real library's dlopen + nvmlInit (libcuda is loaded here).
  spend_wall_us(world->costs.wall_us(function));

  std::lock_guard lock(g_mu);
  if (g_refcount++ == 0) {
    world->t0 = std::chrono::steady_clock::now();  // replay starts now
    world->t0_wall = std::chrono::system_clock::now();
    g_world = std::move(world);
  }
  return NVML_SUCCESS;
}

nvmlReturn_t shutdown() {
  std::lock_guard lock(g_mu);
  if (g_refcount == 0) return NVML_ERROR_UNINITIALIZED;
  if (--g_refcount == 0) g_world.reset();
  return NVML_SUCCESS;
}

std::shared_ptr<const World> current_world() {
  std::lock_guard lock(g_mu);
  return g_world;
}

nvmlDevice_t handle_for_slot(unsigned slot) {
  g_devices[slot].slot = slot;
  g_devices[slot].mig = -1;
  return &g_devices[slot];
}

nvmlDevice_t mig_handle_for(unsigned slot, unsigned index) {
  nvmlDevice_st& h = g_mig_devices[slot][index];
  h.slot = slot;
  h.mig = static_cast<int>(index);
  return &h;
}

long long now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

SystemCall::SystemCall(const char* function) : world_(current_world()) {
  if (!world_) {
    status_ = NVML_ERROR_UNINITIALIZED;
    return;
  }
  FaultDecision d = world_->faults.decide(function, -1, world_->now_s());
  if (d.return_code && *d.return_code == kFunctionNotFound) {
    status_ = NVML_ERROR_FUNCTION_NOT_FOUND;
    return;
  }
  sleep_s(d.sleep_s);
  spend_wall_us(world_->costs.wall_us(function));
  if (d.return_code) status_ = static_cast<nvmlReturn_t>(*d.return_code);
}

DeviceCall::DeviceCall(const char* function, nvmlDevice_t device, Mig mig)
    : world_(current_world()) {
  if (!world_) {
    status_ = NVML_ERROR_UNINITIALIZED;
    return;
  }
  // A handle is valid only if it points at one of our slots of a GPU that
  // this scenario has (or, where accepted, at a MIG device handle of one).
  const bool physical = in_table(device, g_devices);
  const bool mig_handle =
      mig == Mig::kAccept && in_table(device, g_mig_devices);
  if ((!physical && !mig_handle) || device->slot >= world_->device_count()) {
    status_ = NVML_ERROR_INVALID_ARGUMENT;
    return;
  }
  slot_ = device->slot;
  if (mig_handle) mig_index_ = device->mig;
  run(function);
  if (status_ != NVML_SUCCESS || mig_index_ < 0) return;
  const auto& instances = mig_instances();
  if (static_cast<size_t>(mig_index_) >= instances.size()) {
    status_ = NVML_ERROR_INVALID_ARGUMENT;  // that instance was destroyed
    return;
  }
  mig_ = &instances[static_cast<size_t>(mig_index_)];
}

const std::vector<gd::MigInstance>& DeviceCall::mig_instances() const {
  if (!info().mig_enabled.value_or(false) || !sample_->mig_instances)
    return kNoInstances;
  return *sample_->mig_instances;
}

std::optional<double> scenario_average(const World& world, int gpu, double t1,
                                       double t2, const SampleValue& value_of,
                                       bool integral) {
  const Scenario& sc = world.scenario;
  if (!(t2 > t1) || sc.sample_count() == 0) return std::nullopt;
  const double period = sc.period_s();
  double sum = 0, t = t1;
  // A value that holds over the whole interval is its average exactly.
  std::optional<double> same;
  bool constant = true;
  // Each step covers one sample's stretch of time; bounded, whatever the
  // scenario or the interval.
  for (int steps = 0; t < t2 && steps < 1000000; ++steps) {
    auto idx = sc.sample_at(t);
    if (!idx) return std::nullopt;
    const gd::GpuSample* g = sc.gpu(*idx, gpu);
    std::optional<double> v;
    if (g && !g->lost && !g->stale) v = value_of(*g);
    if (!v) return std::nullopt;
    if (same && *same != *v) constant = false;
    same = v;
    double base = 0, local = std::max(t, 0.0);
    if (sc.loop() && period > 0) {
      base = std::floor(local / period) * period;
      local -= base;
    }
    double end = *idx + 1 < sc.sample_count() ? base + sc.offset(*idx + 1)
                 : sc.loop()                  ? base + period
                                              : t2;
    if (end <= t) end = t2;  // guard against a zero-length stretch
    const double until = std::min(end, t2);
    sum += *v * (until - t);
    t = until;
  }
  if (integral) return sum;
  if (constant && same) return same;
  return sum / (t2 - t1);
}

DeviceCall::DeviceCall(const char* function, unsigned slot)
    : world_(current_world()) {
  if (!world_) {
    status_ = NVML_ERROR_UNINITIALIZED;
    return;
  }
  if (slot >= world_->device_count()) {
    status_ = NVML_ERROR_INVALID_ARGUMENT;
    return;
  }
  slot_ = slot;
  run(function);
}

void DeviceCall::run(const char* function) {
  const int gpu = info().index;
  const Faults& faults = world_->faults;
  FaultDecision d = faults.decide(function, gpu, world_->now_s());
  if (d.return_code && *d.return_code == kFunctionNotFound) {
    status_ = NVML_ERROR_FUNCTION_NOT_FOUND;
    return;
  }
  sleep_s(d.sleep_s);
  spend_wall_us(world_->costs.wall_us(function));
  // Time moves on while a call hangs: read the clock after the sleep.
  const double now = world_->now_s();
  auto idx = world_->scenario.sample_at(now);
  const gd::GpuSample* s = idx ? world_->scenario.gpu(*idx, gpu) : nullptr;
  sample_ = s ? s : &kNoSample;
  if (s && world_->scenario.ended_processes_free_memory()) {
    adjusted_ =
        std::make_shared<const gd::GpuSample>(without_ended_processes(*s));
    sample_ = adjusted_.get();
  }
  auto lost_after = faults.lost_after_s(gpu);
  auto gone_after = faults.gone_after_s(gpu);
  if (sample_->lost || (lost_after && now >= *lost_after) ||
      (gone_after && now >= *gone_after)) {
    status_ = NVML_ERROR_GPU_IS_LOST;
    return;
  }
  if (d.return_code) status_ = static_cast<nvmlReturn_t>(*d.return_code);
}

const gd::GpuInfo& DeviceCall::info() const {
  return world_->scenario.header().gpus[slot_];
}

nvmlReturn_t copy_string(const std::string& value, char* buf, unsigned length) {
  if (buf == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace fake_nvml

extern "C" int fake_nvml_stub_call(const char* function) {
  fake_nvml::SystemCall call(function);
  if (call.status() != NVML_SUCCESS) return call.status();
  return NVML_ERROR_NOT_SUPPORTED;
}
