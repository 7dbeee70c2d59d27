// The faults list both fakes read from the environment (FAKE_CUDA_FAULTS,
// FAKE_NCCL_FAULTS): a JSON list of objects, each naming a GPU by its NVML
// index ("gpu") with the fake's own keys beside it; a GPU named twice gets
// both entries' keys. Header-only: the fake libnccl parses its list with it
// without linking the fake libcuda's engine.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fake_cuda {

// What a key handler throws: "VAR entry {...}: why".
using FaultError = std::runtime_error;

// Parses `text` (empty: no faults) into `out`. For every key but "gpu",
// calls on_key(key, value, faults, bad), where bad(why) makes the error to
// throw for that entry; on_key returns false for a key it does not know.
// Throws std::runtime_error naming `var` and the entry.
template <typename Faults, typename OnKey>
void parse_gpu_fault_list(std::string_view text, const std::string& var,
                          std::vector<std::pair<int, Faults>>& out,
                          OnKey on_key) {
  if (text.empty()) return;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw FaultError(var + " is not JSON: " + e.what());
  }
  if (!doc.is_array()) throw FaultError(var + " must be a JSON list");
  for (const auto& entry : doc) {
    const std::string shown = entry.dump();
    auto bad = [&](const std::string& why) {
      return FaultError(var + " entry " + shown + ": " + why);
    };
    if (!entry.is_object()) throw bad("not an object");
    if (!entry.contains("gpu") || !entry["gpu"].is_number_integer() ||
        entry["gpu"] < 0)
      throw bad("needs \"gpu\": an NVML index");
    const int gpu = entry["gpu"];
    Faults* f = nullptr;
    for (auto& [g, faults] : out)
      if (g == gpu) f = &faults;
    if (!f) f = &out.emplace_back(gpu, Faults{}).second;
    for (const auto& [key, value] : entry.items()) {
      if (key == "gpu") continue;
      if (!on_key(key, value, *f, bad))
        throw bad("unknown key \"" + key + "\"");
    }
  }
}

}  // namespace fake_cuda
