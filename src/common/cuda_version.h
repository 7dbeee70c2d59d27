// CUDA versions: the text NVML reports for the driver ("12.4") and the
// CUDA runtime a process maps, read from the library's file name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

struct CudaVersion {
  int major = -1;
  int minor = -1;  // -1: the text names the major only ("libcudart.so.12")
};

// "12.4", "12.4.99", "12" -> numbers; nullopt on anything else.
std::optional<CudaVersion> parse_cuda_version(std::string_view text);

// The runtime version in a libcudart file name, every spelling:
// "libcudart.so.12", "libcudart.so.12.1.105" and pip wheels'
// "libcudart-d0da41ae.so.11.0". nullopt for other libraries, for an
// unversioned "libcudart.so" and for "libcudart_static".
std::optional<CudaVersion> cudart_version(std::string_view lib_name);

// "12.1" / "12": the version of the first libcudart among a process's
// mapped libraries (file names or paths); "" when none is mapped.
std::string cuda_runtime_version(const std::vector<std::string>& libs);

}  // namespace gd
