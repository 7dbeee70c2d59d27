#include "config.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "gpu_fault_list.h"

namespace fake_nccl {

namespace {

struct ResultName {
  int code;
  const char* name;
};

constexpr ResultName kResultNames[] = {
    {0, "ncclSuccess"},         {1, "ncclUnhandledCudaError"},
    {2, "ncclSystemError"},     {3, "ncclInternalError"},
    {4, "ncclInvalidArgument"}, {5, "ncclInvalidUsage"},
    {6, "ncclRemoteError"},     {7, "ncclInProgress"},
};

// A positive number of the environment (`fallback` when unset or empty).
double positive_env(const char* name, double fallback, double max) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end || !std::isfinite(v) || !(v > 0) || v > max)
    throw std::runtime_error(std::string("bad ") + name + "=" + text +
                             ": a number above 0, at most " +
                             std::to_string(static_cast<long long>(max)));
  return v;
}

}  // namespace

std::optional<int> result_by_name(std::string_view name) {
  for (const auto& r : kResultNames)
    if (name == r.name) return r.code;
  return std::nullopt;
}

GpuFaults Config::for_gpu(int gpu) const {
  for (const auto& [g, f] : faults)
    if (g == gpu) return f;
  return {};
}

void parse_faults(std::string_view text, Config& config) {
  fake_cuda::parse_gpu_fault_list(
      text, "FAKE_NCCL_FAULTS", config.faults,
      [](const std::string& key, const nlohmann::json& value, GpuFaults& f,
         const auto& bad) {
        if (key == "speed") {
          if (!value.is_number() || !(value > 0.0) || value > 100.0)
            throw bad("speed must be a number above 0, at most 100");
          f.speed = value;
        } else if (key == "wrong_results") {
          if (!value.is_number_integer() || value < 0 || value > 1 << 30)
            throw bad("wrong_results must be a whole number 0..2^30");
          f.wrong_results = value;
        } else if (key == "init_error") {
          auto code = value.is_string()
                          ? result_by_name(value.get<std::string>())
                          : std::nullopt;
          if (!code || *code == 0)
            throw bad(
                "init_error must name an ncclResult_t other than "
                "ncclSuccess");
          f.init_error = *code;
        } else {
          return false;
        }
        return true;
      });
}

Config load_config() {
  Config config;
  config.bus_bytes_per_s =
      positive_env("FAKE_NCCL_BUS_GBPS", config.bus_bytes_per_s / 1e9, 1e6) *
      1e9;
  config.timeout_s =
      positive_env("FAKE_NCCL_TIMEOUT_S", config.timeout_s, 86400);
  const char* faults = std::getenv("FAKE_NCCL_FAULTS");
  parse_faults(faults ? faults : "", config);
  return config;
}

}  // namespace fake_nccl
