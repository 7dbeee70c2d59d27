#include "config.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

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
  if (text.empty()) return;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("FAKE_NCCL_FAULTS is not JSON: ") +
                             e.what());
  }
  if (!doc.is_array())
    throw std::runtime_error("FAKE_NCCL_FAULTS must be a JSON list");
  for (const auto& entry : doc) {
    const std::string shown = entry.dump();
    auto bad = [&shown](const std::string& why) {
      return std::runtime_error("FAKE_NCCL_FAULTS entry " + shown + ": " + why);
    };
    if (!entry.is_object()) throw bad("not an object");
    if (!entry.contains("gpu") || !entry["gpu"].is_number_integer() ||
        entry["gpu"] < 0)
      throw bad("needs \"gpu\": an NVML index");
    const int gpu = entry["gpu"];
    GpuFaults* f = nullptr;
    for (auto& [g, faults] : config.faults)
      if (g == gpu) f = &faults;
    if (!f) f = &config.faults.emplace_back(gpu, GpuFaults{}).second;
    for (const auto& [key, value] : entry.items()) {
      if (key == "gpu") continue;
      if (key == "speed") {
        if (!value.is_number() || !(value > 0.0) || value > 100.0)
          throw bad("speed must be a number above 0, at most 100");
        f->speed = value;
      } else if (key == "wrong_results") {
        if (!value.is_number_integer() || value < 0 || value > 1 << 30)
          throw bad("wrong_results must be a whole number 0..2^30");
        f->wrong_results = value;
      } else if (key == "init_error") {
        auto code = value.is_string() ? result_by_name(value.get<std::string>())
                                      : std::nullopt;
        if (!code || *code == 0)
          throw bad(
              "init_error must name an ncclResult_t other than "
              "ncclSuccess");
        f->init_error = *code;
      } else {
        throw bad("unknown key \"" + key + "\"");
      }
    }
  }
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
