// DeviceReader (device_reader.h): one sample's reads -- utilisation,
// temperatures, power, clocks and throttle reasons, PCIe, the slow reads
// and the field values.
#include <cstring>
#include <thread>

#include "nvml/device_reader.h"
#include "nvml/nvml_util.h"

namespace gd::nvml {
namespace {

// NVML reports PCIe throughput in KB/s; KB is taken as 1024 bytes, as NVML
// uses "KB" for binary kilobytes elsewhere (memory sizes).
constexpr uint64_t kBytesPerNvmlKilobyte = 1024;

}  // namespace

GpuSample DeviceReader::read_sample(std::vector<Event>& events) {
  events_ = &events;
  lost_now_ = false;
  GpuSample s;
  s.index = index_;
  read_errors_ = &s.read_errors;
  if (acquire_handle()) read_values(s);
  read_errors_ = nullptr;
  if (lost_now_) {
    if (!lost_reported_) {
      Event e;
      e.kind = "gpu_lost";
      e.gpu = index_;
      e.text =
          "GPU " + std::to_string(index_) + ": NVML reports the GPU is lost";
      events.push_back(std::move(e));
      lost_reported_ = true;
    }
    GpuSample lost;
    lost.index = index_;
    lost.lost = true;
    events_ = nullptr;
    return lost;
  }
  lost_reported_ = false;  // answering again: a later loss is a new event
  events_ = nullptr;
  return s;
}

template <typename Fn, typename... Args>
std::optional<unsigned> DeviceReader::read_uint(Fn fn, std::string_view name,
                                                const char* field,
                                                Args... args) {
  // Every read is skipped once the GPU has reported itself lost.
  if (!fn || lost_now_) return std::nullopt;
  unsigned u = 0;
  if (read_ok(fn(dev_, args..., &u), name, {field})) return u;
  return std::nullopt;
}

void DeviceReader::read_values(GpuSample& s) {
  if (f_.nvmlDeviceGetUtilizationRates) {
    nvmlUtilization_t util{};
    if (read_ok(f_.nvmlDeviceGetUtilizationRates(dev_, &util),
                "nvmlDeviceGetUtilizationRates",
                {"util_pct", "mem_util_pct"})) {
      s.util_pct = util.gpu;
      s.mem_util_pct = util.memory;
    }
  }
  if (lost_now_) return;  // the first call tells: don't wait on the rest
  slow_now_ = slow_due();
  // The PCIe counters block 20 ms in the driver while using almost no CPU:
  // they are watched beside every other read of this sample (which adds up
  // to ~9 ms on an H200), so a sample that makes every read takes ~21 ms
  // instead of ~30. Joined before the sample is handed out.
  if (slow_now_) pcie_.start(f_.nvmlDeviceGetPcieThroughput, dev_);
  read_other_values(s);
  pcie_.join();
  if (slow_now_ && pcie_.started()) finish_pcie_throughput(pcie_, s);
}

void DeviceReader::read_other_values(GpuSample& s) {
  MemoryInfo mem;
  nvmlReturn_t rc = read_memory(mem);
  if (read_ok(rc, "nvmlDeviceGetMemoryInfo",
              {"mem_used_bytes", "mem_reserved_bytes"})) {
    s.mem_used_bytes = mem.used;
    s.mem_reserved_bytes = mem.reserved;
  }

  if (auto v =
          read_uint(f_.nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature",
                    "temp_c", NVML_TEMPERATURE_GPU)) {
    s.temp_c = static_cast<int>(*v);
  }
  read_field_values(s);
  read_slow_values(s);
  if (auto mw = read_uint(f_.nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage",
                          "power_w")) {
    s.power_w = *mw / 1000.0;
  }
  if (fan_supported_ && f_.nvmlDeviceGetFanSpeed && !lost_now_) {
    unsigned pct = 0;
    const nvmlReturn_t fan_rc = f_.nvmlDeviceGetFanSpeed(dev_, &pct);
    if (fan_rc == NVML_ERROR_NOT_SUPPORTED) fan_supported_ = false;
    if (read_ok(fan_rc, "nvmlDeviceGetFanSpeed", {"fan_pct"})) s.fan_pct = pct;
  }
  if (auto v = read_uint(f_.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo",
                         "sm_clock_mhz", NVML_CLOCK_SM)) {
    s.sm_clock_mhz = static_cast<int>(*v);
  }
  if (auto v = read_uint(f_.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo",
                         "mem_clock_mhz", NVML_CLOCK_MEM)) {
    s.mem_clock_mhz = static_cast<int>(*v);
  }
  if (f_.nvmlDeviceGetPerformanceState && !lost_now_) {
    nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
    if (read_ok(f_.nvmlDeviceGetPerformanceState(dev_, &p),
                "nvmlDeviceGetPerformanceState", {"pstate"}) &&
        p >= NVML_PSTATE_0 && p <= NVML_PSTATE_15) {
      s.pstate = static_cast<int>(p);
    }
  }
  if (!lost_now_) {
    unsigned long long reasons = 0;
    rc = first_available(
        clock_reasons_variant_,
        [&] {
          return call_if(f_.nvmlDeviceGetCurrentClocksEventReasons, dev_,
                         &reasons);
        },
        [&] {
          return call_if(f_.nvmlDeviceGetCurrentClocksThrottleReasons, dev_,
                         &reasons);
        });
    if (read_ok(rc, "nvmlDeviceGetCurrentClocksEventReasons",
                {"clock_event_reasons"})) {
      s.clock_event_reasons = clock_event_reason_names(reasons);
    }
  }
  if (auto v = read_uint(f_.nvmlDeviceGetCurrPcieLinkGeneration,
                         "nvmlDeviceGetCurrPcieLinkGeneration", "pcie_gen")) {
    s.pcie_gen = static_cast<int>(*v);
  }
  if (auto v = read_uint(f_.nvmlDeviceGetCurrPcieLinkWidth,
                         "nvmlDeviceGetCurrPcieLinkWidth", "pcie_width")) {
    s.pcie_width = static_cast<int>(*v);
  }
  read_memory_health(s);
  if (lost_now_) return;
  read_engine_utilization(s);
  read_nvlinks(s);
  read_fabric(s);
  if (lost_now_) return;
  if (mig_enabled_) s.mig_instances = read_mig_instances(true);
  if (gpm_supported_ && !lost_now_) read_gpm(gpm_gpu_, nullptr, s.gpm, true);
  if (lost_now_) return;
  s.processes = read_processes();
  if (!s.processes && read_errors_ && !lost_now_ &&
      is_failed_read(last_process_rc_)) {
    read_errors_->emplace_back("processes");
  }
  if (s.processes && !lost_now_) read_process_utilization(*s.processes);
}

bool DeviceReader::slow_due() const {
  return !slow_read_at_ ||
         std::chrono::steady_clock::now() - *slow_read_at_ >= slow_interval_;
}

void DeviceReader::read_slow_values(GpuSample& s) {
  SlowValues& v = slow_;
  if (slow_now_ && !lost_now_) {
    slow_read_at_ = std::chrono::steady_clock::now();
    v = SlowValues{};
    // Collected on their own, so that the samples until the next read
    // repeat these fields' errors with their values.
    std::vector<std::string>* sample_errors = read_errors_;
    read_errors_ = &v.read_errors;
    if (f_.nvmlDeviceGetMarginTemperature && !lost_now_) {
      nvmlMarginTemperature_t margin{};
      margin.version = nvmlMarginTemperature_v1;
      if (read_ok(f_.nvmlDeviceGetMarginTemperature(dev_, &margin),
                  "nvmlDeviceGetMarginTemperature", {"temp_limit_margin_c"}))
        v.temp_limit_margin_c = margin.marginTemperature;
    }
    if (f_.nvmlDeviceGetTotalEnergyConsumption && !lost_now_) {
      unsigned long long mj = 0;
      if (read_ok(f_.nvmlDeviceGetTotalEnergyConsumption(dev_, &mj),
                  "nvmlDeviceGetTotalEnergyConsumption", {"energy_mj_total"}))
        v.energy_mj_total = mj;
    }
    if (auto n =
            read_uint(f_.nvmlDeviceGetPcieReplayCounter,
                      "nvmlDeviceGetPcieReplayCounter", "pcie_replay_total"))
      v.pcie_replay_total = *n;
    if (f_.nvmlDeviceGetBAR1MemoryInfo && !lost_now_) {
      nvmlBAR1Memory_t bar1{};
      if (read_ok(f_.nvmlDeviceGetBAR1MemoryInfo(dev_, &bar1),
                  "nvmlDeviceGetBAR1MemoryInfo", {"bar1_used_bytes"}))
        v.bar1_used_bytes = bar1.bar1Used;
    }
    read_errors_ = sample_errors;
  }
  s.temp_limit_margin_c = v.temp_limit_margin_c;
  s.energy_mj_total = v.energy_mj_total;
  s.pcie_tx_bytes_per_s = v.pcie_tx_bytes_per_s;
  s.pcie_rx_bytes_per_s = v.pcie_rx_bytes_per_s;
  s.pcie_replay_total = v.pcie_replay_total;
  s.bar1_used_bytes = v.bar1_used_bytes;
  if (read_errors_)
    read_errors_->insert(read_errors_->end(), v.read_errors.begin(),
                         v.read_errors.end());
}

// Each direction is a byte counter the driver watches for 20 ms, blocking
// the caller (measured on an H100: 20.8 ms wall, 0.7 ms CPU): each is read
// on a thread of its own, at once, while the worker makes the sample's
// other reads. Only the NVML call runs there; its answer is checked on the
// worker after the join. If the driver hangs, the worker is abandoned with
// the helpers, as for any other read.
void DeviceReader::PcieThroughputRead::start(PcieFn fn, nvmlDevice_t dev) {
  started_ = fn != nullptr;
  if (!fn) return;
  {
    std::lock_guard lock(mu_);
    fn_ = fn;
    dev_ = dev;
    pending_ = 2;
    ++round_;
  }
  if (!helpers_[0].joinable()) {
    helpers_[0] = std::thread([this] { watch(0); });
    helpers_[1] = std::thread([this] { watch(1); });
  } else {
    wake_.notify_all();
  }
}

void DeviceReader::PcieThroughputRead::watch(int direction) {
  std::unique_lock lock(mu_);
  uint64_t seen = 0;
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || round_ != seen; });
    if (stop_) return;
    seen = round_;
    const PcieFn fn = fn_;
    const nvmlDevice_t dev = dev_;
    lock.unlock();
    unsigned kb = 0;
    const nvmlReturn_t rc = fn(
        dev, direction == 0 ? NVML_PCIE_UTIL_TX_BYTES : NVML_PCIE_UTIL_RX_BYTES,
        &kb);
    lock.lock();
    rc_[direction] = rc;
    kb_[direction] = kb;
    if (--pending_ == 0) done_.notify_one();
  }
}

void DeviceReader::PcieThroughputRead::join() {
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

DeviceReader::PcieThroughputRead::~PcieThroughputRead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : helpers_)
    if (t.joinable()) t.join();
}

void DeviceReader::finish_pcie_throughput(const PcieThroughputRead& pcie,
                                          GpuSample& s) {
  if (lost_now_) return;
  // Kept with the other costly reads' values and errors, for the samples
  // until the next refresh.
  SlowValues& v = slow_;
  std::vector<std::string>* sample_errors = read_errors_;
  const size_t known_errors = v.read_errors.size();
  read_errors_ = &v.read_errors;
  if (read_ok(pcie.tx_rc(), "nvmlDeviceGetPcieThroughput",
              {"pcie_tx_bytes_per_s"}))
    v.pcie_tx_bytes_per_s = uint64_t{pcie.tx_kb()} * kBytesPerNvmlKilobyte;
  if (!lost_now_ && read_ok(pcie.rx_rc(), "nvmlDeviceGetPcieThroughput",
                            {"pcie_rx_bytes_per_s"}))
    v.pcie_rx_bytes_per_s = uint64_t{pcie.rx_kb()} * kBytesPerNvmlKilobyte;
  read_errors_ = sample_errors;
  s.pcie_tx_bytes_per_s = v.pcie_tx_bytes_per_s;
  s.pcie_rx_bytes_per_s = v.pcie_rx_bytes_per_s;
  if (read_errors_)
    read_errors_->insert(
        read_errors_->end(),
        v.read_errors.begin() + static_cast<std::ptrdiff_t>(known_errors),
        v.read_errors.end());
}

// nvmlDeviceGetFieldValues, one call for the fields read that way.
void DeviceReader::read_field_values(GpuSample& s) {
  if (!f_.nvmlDeviceGetFieldValues || lost_now_) return;
  nvmlFieldValue_t fv[2];
  std::memset(fv, 0, sizeof fv);
  fv[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
  fv[1].fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
  if (!read_ok(f_.nvmlDeviceGetFieldValues(dev_, 2, fv),
               "nvmlDeviceGetFieldValues", {"mem_temp_c", "recovery_action"})) {
    return;
  }
  if (read_ok(fv[0].nvmlReturn,
              "nvmlDeviceGetFieldValues(NVML_FI_DEV_MEMORY_TEMP)",
              {"mem_temp_c"})) {
    if (auto t = field_as_double(fv[0])) s.mem_temp_c = static_cast<int>(*t);
  }
  if (read_ok(fv[1].nvmlReturn,
              "nvmlDeviceGetFieldValues(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)",
              {"recovery_action"})) {
    if (auto a = field_as_double(fv[1]); a && *a >= 0) {
      s.recovery_action =
          recovery_action_name(static_cast<unsigned long long>(*a));
    }
  }
}

}  // namespace gd::nvml
