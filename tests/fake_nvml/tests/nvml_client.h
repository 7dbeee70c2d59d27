// Test-side NVML client: dlopen()s a fake libnvidia-ml.so.1 by path (never
// linked) and resolves functions by name, as a real NVML client does. Types
// and prototypes come from the project's nvml_api.h (tests/nvml checks it
// against a bindgen translation of the real nvml.h) plus fake_extra_api.h;
// the prototypes are only used for their types, never called directly.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_extra_api.h"

namespace fake_nvml_test {

class NvmlClient {
 public:
  explicit NvmlClient(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  }
  ~NvmlClient() {
    if (handle_) dlclose(handle_);
  }
  NvmlClient(const NvmlClient&) = delete;
  NvmlClient& operator=(const NvmlClient&) = delete;

  void* symbol(const char* name) const { return dlsym(handle_, name); }

  // The function `name` as type Fn; fails the test if it is not exported.
  template <typename Fn>
  Fn fn(const char* name) const {
    void* p = symbol(name);
    if (!p) throw std::runtime_error(std::string("missing symbol ") + name);
    return reinterpret_cast<Fn>(p);
  }

 private:
  void* handle_ = nullptr;
};

// Resolves NAME with the type of its declared prototype.
#define NVML_FN(client, name) (client).fn<decltype(&name)>(#name)

// Sets FAKE_NVML_* for one test and restores the previous values after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Writes a scenario (header + samples as JSON objects) to a file in the
// test's temporary directory and returns its path.
// The folder goes when the test process exits (ctest runs each test in a
// process of its own: one folder each).
inline std::string write_scenario(const std::string& file_name,
                                  const nlohmann::json& header,
                                  const std::vector<nlohmann::json>& samples) {
  struct ScenarioDir {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("fake_nvml_test_" + std::to_string(getpid()));
    ScenarioDir() { std::filesystem::create_directories(path); }
    ~ScenarioDir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const ScenarioDir dir;
  auto path = dir.path / file_name;
  std::ofstream out(path);
  out << header.dump() << "\n";
  for (const auto& s : samples) out << s.dump() << "\n";
  return path.string();
}

// A minimal valid header with `gpus` GPUs (index i, bus 0x10+i).
inline nlohmann::json basic_header(int gpus) {
  nlohmann::json h = {{"format", "gpudoctor-trace"},
                      {"version", 1},
                      {"host", {{"hostname", "testhost"}}},
                      {"nvml_status", "ok"},
                      {"driver",
                       {{"driver_version", "550.54.15"},
                        {"cuda_driver_version", "12.4"},
                        {"nvml_version", "12.550.54.15"}}},
                      {"gpus", nlohmann::json::array()}};
  for (int i = 0; i < gpus; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x10 + i);
    h["gpus"].push_back({{"index", i},
                         {"uuid", "GPU-test-" + std::to_string(i)},
                         {"name", "NVIDIA H100 80GB HBM3"},
                         {"pci_bus_id", bus},
                         {"memory_total_bytes", 85520809984ULL}});
  }
  return h;
}

// A sample at time t whose GPUs all show utilisation `util`.
inline nlohmann::json util_sample(double t, int gpus, double util) {
  nlohmann::json s = {{"t", t}, {"gpus", nlohmann::json::array()}};
  for (int i = 0; i < gpus; ++i) {
    s["gpus"].push_back({{"index", i},
                         {"util_pct", util},
                         {"mem_util_pct", util / 2},
                         {"mem_used_bytes", 1000000000ULL * (i + 1)},
                         {"temp_c", 40 + i},
                         {"processes", nlohmann::json::array()}});
  }
  return s;
}

inline std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

}  // namespace fake_nvml_test
