// What each NVML read that a sample makes costs on this machine's GPU 0,
// and what one whole DeviceReader sample costs: wall time (median) and CPU
// time of the calling thread (user + system: on a real driver most of it is
// the kernel side of the ioctl, or waiting on the GPU's firmware).
//
//   bench_nvml_calls [--lib libnvidia-ml.so.1] [--reps 20]
//
// Runs against the real driver where there is one, or the fake NVML of the
// tests (--lib path/to/fake/libnvidia-ml.so.1, FAKE_NVML_SCENARIO=...).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "nvml/device_reader.h"
#include "nvml/nvml_library.h"

namespace {

using gd::nvml::NvmlFunctions;

double now_us(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 +
         static_cast<double>(ts.tv_nsec) / 1e3;
}

struct Cost {
  double wall_median_us = 0, cpu_mean_us = 0;
  int rc = 0;
};

Cost measure(const std::function<int()>& call, int reps) {
  Cost c;
  c.rc = call();  // warm-up; its code is the one reported
  std::vector<double> wall;
  const double cpu0 = now_us(CLOCK_THREAD_CPUTIME_ID);
  for (int i = 0; i < reps; ++i) {
    const double t0 = now_us(CLOCK_MONOTONIC);
    call();
    wall.push_back(now_us(CLOCK_MONOTONIC) - t0);
  }
  c.cpu_mean_us = (now_us(CLOCK_THREAD_CPUTIME_ID) - cpu0) / reps;
  std::sort(wall.begin(), wall.end());
  c.wall_median_us = wall[wall.size() / 2];
  return c;
}

struct Row {
  std::string name;
  std::function<int()> call;
};

std::vector<Row> calls(const NvmlFunctions& f, nvmlDevice_t d) {
  static unsigned u1, u2, u3, u4;
  static unsigned long long ull;
  static std::vector<unsigned char> buf(1 << 16);
  void* b = buf.data();
  std::vector<Row> rows;
  auto add = [&](std::string name, auto fn, auto call) {
    if (fn) rows.push_back({std::move(name), call});
  };
  add("GetUtilizationRates", f.nvmlDeviceGetUtilizationRates, [&f, d, b] {
    return (int)f.nvmlDeviceGetUtilizationRates(d, (nvmlUtilization_t*)b);
  });
  add("GetMemoryInfo_v2", f.nvmlDeviceGetMemoryInfo_v2, [&f, d] {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;
    return (int)f.nvmlDeviceGetMemoryInfo_v2(d, &m);
  });
  add("GetTemperature(GPU)", f.nvmlDeviceGetTemperature, [&f, d] {
    return (int)f.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u1);
  });
  add("GetFieldValues(mem temp, recovery)", f.nvmlDeviceGetFieldValues,
      [&f, d] {
        nvmlFieldValue_t fv[2]{};
        fv[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
        fv[1].fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
        return (int)f.nvmlDeviceGetFieldValues(d, 2, fv);
      });
  add("GetMarginTemperature", f.nvmlDeviceGetMarginTemperature, [&f, d] {
    nvmlMarginTemperature_t m{};
    m.version = nvmlMarginTemperature_v1;
    return (int)f.nvmlDeviceGetMarginTemperature(d, &m);
  });
  add("GetPowerUsage", f.nvmlDeviceGetPowerUsage,
      [&f, d] { return (int)f.nvmlDeviceGetPowerUsage(d, &u1); });
  add("GetTotalEnergyConsumption", f.nvmlDeviceGetTotalEnergyConsumption,
      [&f, d] { return (int)f.nvmlDeviceGetTotalEnergyConsumption(d, &ull); });
  add("GetFanSpeed", f.nvmlDeviceGetFanSpeed,
      [&f, d] { return (int)f.nvmlDeviceGetFanSpeed(d, &u1); });
  add("GetClockInfo(SM)", f.nvmlDeviceGetClockInfo,
      [&f, d] { return (int)f.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &u1); });
  add("GetPerformanceState", f.nvmlDeviceGetPerformanceState, [&f, d] {
    nvmlPstates_t p;
    return (int)f.nvmlDeviceGetPerformanceState(d, &p);
  });
  add("GetCurrentClocksEventReasons", f.nvmlDeviceGetCurrentClocksEventReasons,
      [&f, d] {
        return (int)f.nvmlDeviceGetCurrentClocksEventReasons(d, &ull);
      });
  add("GetCurrPcieLinkGeneration", f.nvmlDeviceGetCurrPcieLinkGeneration,
      [&f, d] { return (int)f.nvmlDeviceGetCurrPcieLinkGeneration(d, &u1); });
  add("GetPcieThroughput(TX)", f.nvmlDeviceGetPcieThroughput, [&f, d] {
    return (int)f.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_TX_BYTES, &u1);
  });
  add("GetPcieReplayCounter", f.nvmlDeviceGetPcieReplayCounter,
      [&f, d] { return (int)f.nvmlDeviceGetPcieReplayCounter(d, &u1); });
  add("GetBAR1MemoryInfo", f.nvmlDeviceGetBAR1MemoryInfo, [&f, d, b] {
    return (int)f.nvmlDeviceGetBAR1MemoryInfo(d, (nvmlBAR1Memory_t*)b);
  });
  add("GetTotalEccErrors(uncorr, volatile)", f.nvmlDeviceGetTotalEccErrors,
      [&f, d] {
        return (int)f.nvmlDeviceGetTotalEccErrors(
            d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ull);
      });
  add("GetMemoryErrorCounter(SRAM)", f.nvmlDeviceGetMemoryErrorCounter,
      [&f, d] {
        return (int)f.nvmlDeviceGetMemoryErrorCounter(
            d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
            NVML_MEMORY_LOCATION_SRAM, &ull);
      });
  add("GetSramEccErrorStatus", f.nvmlDeviceGetSramEccErrorStatus, [&f, d] {
    nvmlEccSramErrorStatus_t s{};
    s.version = nvmlEccSramErrorStatus_v1;
    return (int)f.nvmlDeviceGetSramEccErrorStatus(d, &s);
  });
  add("GetRetiredPagesPendingStatus", f.nvmlDeviceGetRetiredPagesPendingStatus,
      [&f, d] {
        nvmlEnableState_t e;
        return (int)f.nvmlDeviceGetRetiredPagesPendingStatus(d, &e);
      });
  add("GetRemappedRows", f.nvmlDeviceGetRemappedRows, [&f, d] {
    return (int)f.nvmlDeviceGetRemappedRows(d, &u1, &u2, &u3, &u4);
  });
  add("GetRowRemapperHistogram", f.nvmlDeviceGetRowRemapperHistogram,
      [&f, d, b] {
        return (int)f.nvmlDeviceGetRowRemapperHistogram(
            d, (nvmlRowRemapperHistogramValues_t*)b);
      });
  add("GetEncoderUtilization", f.nvmlDeviceGetEncoderUtilization,
      [&f, d] { return (int)f.nvmlDeviceGetEncoderUtilization(d, &u1, &u2); });
  add("GetComputeRunningProcesses_v3",
      f.nvmlDeviceGetComputeRunningProcesses_v3, [&f, d, b] {
        unsigned n = 256;
        return (int)f.nvmlDeviceGetComputeRunningProcesses_v3(
            d, &n, (nvmlProcessInfo_t*)b);
      });
  add("GetProcessUtilization", f.nvmlDeviceGetProcessUtilization, [&f, d, b] {
    unsigned n = 256;
    return (int)f.nvmlDeviceGetProcessUtilization(
        d, (nvmlProcessUtilizationSample_t*)b, &n, 0);
  });
  add("GetGraphicsRunningProcesses_v3",
      f.nvmlDeviceGetGraphicsRunningProcesses_v3, [&f, d, b] {
        unsigned n = 256;
        return (int)f.nvmlDeviceGetGraphicsRunningProcesses_v3(
            d, &n, (nvmlProcessInfo_t*)b);
      });
  add("GetGpuFabricInfo", f.nvmlDeviceGetGpuFabricInfo, [&f, d] {
    nvmlGpuFabricInfo_t fabric{};
    return (int)f.nvmlDeviceGetGpuFabricInfo(d, &fabric);
  });
  static nvmlGpmSample_t first = nullptr, second = nullptr;
  if (f.nvmlGpmSampleAlloc && f.nvmlGpmSampleGet &&
      f.nvmlGpmSampleAlloc(&first) == NVML_SUCCESS &&
      f.nvmlGpmSampleAlloc(&second) == NVML_SUCCESS) {
    rows.push_back({"GpmSampleGet",
                    [&f, d] { return (int)f.nvmlGpmSampleGet(d, second); }});
    if (f.nvmlGpmMetricsGet && f.nvmlGpmSampleGet(d, first) == NVML_SUCCESS)
      rows.push_back({"GpmMetricsGet (8 metrics)", [&f] {
                        static nvmlGpmMetricsGet_t req;
                        std::memset(&req, 0, sizeof req);
                        req.version = NVML_GPM_METRICS_GET_VERSION;
                        req.sample1 = first;
                        req.sample2 = second;
                        const unsigned ids[] = {1, 2, 3, 5, 10, 11, 12, 13};
                        req.numMetrics = std::size(ids);
                        for (size_t i = 0; i < std::size(ids); ++i)
                          req.metrics[i].metricId = ids[i];
                        return (int)f.nvmlGpmMetricsGet(&req);
                      }});
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib = "libnvidia-ml.so.1";
  int reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--lib")) lib = argv[i + 1];
    if (!std::strcmp(argv[i], "--reps"))
      reps = std::max(1, std::atoi(argv[i + 1]));
  }
  std::string error;
  const double t0 = now_us(CLOCK_MONOTONIC),
               c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
  auto nvml = gd::nvml::NvmlLibrary::open(lib, &error);
  if (!nvml) {
    std::fprintf(stderr, "bench_nvml_calls: %s\n", error.c_str());
    return 1;
  }
  auto init = nvml->init();
  std::printf("%-40s %12.0f us wall %10.0f us CPU (%s)\n", "dlopen + nvmlInit",
              now_us(CLOCK_MONOTONIC) - t0,
              now_us(CLOCK_THREAD_CPUTIME_ID) - c0, init.status.c_str());
  if (init.status != "ok") return 1;
  const NvmlFunctions& f = nvml->fn();
  nvmlDevice_t d = nullptr;
  if (f.nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS) return 1;
  std::printf("%-40s %12s %13s %6s   (GPU 0, %d reps)\n", "call", "median wall",
              "mean CPU", "rc", reps);
  double wall_sum = 0, cpu_sum = 0;
  for (const Row& r : calls(f, d)) {
    Cost c = measure(r.call, reps);
    wall_sum += c.wall_median_us;
    cpu_sum += c.cpu_mean_us;
    std::printf("%-40s %9.1f us %10.1f us %6d\n", r.name.c_str(),
                c.wall_median_us, c.cpu_mean_us, c.rc);
  }
  std::printf("%-40s %9.1f us %10.1f us\n", "(sum of the above)", wall_sum,
              cpu_sum);
  // A whole sample as gpudoctor takes it: with every read (as the first
  // sample, and each one with --slow-reads 0s), and between the refreshes
  // of the costly reads (DeviceReader::kSlowReadInterval).
  std::vector<gd::Event> events;
  gd::nvml::DeviceReader every(*nvml, 0, "/sys", std::chrono::seconds(60),
                               std::chrono::milliseconds(0));
  every.read_info();
  Cost all = measure(
      [&] {
        every.read_sample(events);
        return 0;
      },
      reps);
  gd::nvml::DeviceReader between(*nvml, 0, "/sys");
  between.read_info();
  Cost cheap = measure(
      [&] {
        between.read_sample(events);
        return 0;
      },
      reps);
  std::printf("%-40s %9.1f us %10.1f us\n", "read_sample, every read",
              all.wall_median_us, all.cpu_mean_us);
  std::printf("%-40s %9.1f us %10.1f us\n",
              "read_sample, costly reads repeated", cheap.wall_median_us,
              cheap.cpu_mean_us);
  const double per =
      std::chrono::duration<double>(gd::nvml::DeviceReader::kSlowReadInterval)
          .count();
  std::printf("%-40s %9.1f us %10.1f us\n", "read_sample at 1 Hz (average)",
              (all.wall_median_us + (per - 1) * cheap.wall_median_us) / per,
              (all.cpu_mean_us + (per - 1) * cheap.cpu_mean_us) / per);
  return 0;
}
