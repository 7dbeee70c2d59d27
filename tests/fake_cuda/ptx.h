// What the fake JIT reads from a PTX module: the ISA version, the target and
// every kernel (.entry) with its parameter types. A module it cannot read,
// or one for a newer target than the GPU, fails as the real JIT does (with
// a log line saying why).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fake_cuda {

struct PtxEntry {
  std::string name;
  std::vector<std::string> params;  // PTX types: "u64", "u32", "f32", ...
};

struct PtxModule {
  int version_major = 0, version_minor = 0;
  int target_sm = 0;  // 60 for sm_60
  std::vector<PtxEntry> entries;
};

// nullopt (and *log says why) when `text` is not a PTX module.
std::optional<PtxModule> parse_ptx(std::string_view text, std::string* log);

}  // namespace fake_cuda
