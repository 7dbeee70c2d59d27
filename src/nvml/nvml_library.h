// libnvidia-ml.so.1 loaded with dlopen: a table of the NVML functions the
// project uses (nvml_api.h), resolved one by one so that a symbol an older
// driver lacks leaves only that entry empty, never a failed load.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "nvml/nvml_api.h"

namespace gd::nvml {

// One pointer per function of GD_NVML_FUNCTIONS, nullptr when the library
// does not export it.
struct NvmlFunctions {
#define GD_NVML_FN_MEMBER(name, params) name##_fn name = nullptr;
  GD_NVML_FUNCTIONS(GD_NVML_FN_MEMBER)
#undef GD_NVML_FN_MEMBER
  nvmlErrorString_fn nvmlErrorString = nullptr;
};

// Outcome of opening + initialising NVML, in the header's nvml_status terms.
struct InitOutcome {
  std::string status;  // ok | no_driver | driver_library_mismatch |
                       // insufficient_permissions | error
  std::string error;   // human-readable reason ("" when ok)
};

class NvmlLibrary {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL). On failure returns nullptr and sets
  // *error to a message naming the path and dlerror(). `hidden` names
  // symbols to treat as absent (tests of the fallback chains).
  static std::unique_ptr<NvmlLibrary> open(
      const std::string& path, std::string* error,
      const std::set<std::string>& hidden = {});
  ~NvmlLibrary();  // nvmlShutdown (if initialised) + dlclose, unless leaked
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& fn() const { return fn_; }

  // Version of the file that was loaded, from its real name
  // (libnvidia-ml.so.535.104.05 -> "535.104.05"); "" when the name carries
  // no driver version. Known before nvmlInit, so also when it fails.
  const std::string& library_version() const { return library_version_; }

  // nvmlInit_v2, else nvmlInit, mapped to nvml_status.
  InitOutcome init();

  // nvmlErrorString text, or "NVML error N" when the library has none.
  std::string error_string(nvmlReturn_t code) const;

  // Never shut down or unload: a thread may still be stuck inside the
  // library, and unloading code under it would crash the process.
  void leak() { leaked_ = true; }

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  bool initialised_ = false;
  bool leaked_ = false;
  std::string library_version_;
  NvmlFunctions fn_;
};

// "libnvidia-ml.so.535.104.05" (a path or a file name) -> "535.104.05";
// "" for names without a dotted driver version (libnvidia-ml.so.1).
std::string library_version_from_file_name(const std::string& path);

// nvmlInit's return code -> nvml_status vocabulary (trace-format.md).
const char* init_status_for(nvmlReturn_t code);

}  // namespace gd::nvml
