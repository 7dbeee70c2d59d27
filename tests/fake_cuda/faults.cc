#include "faults.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gpu_fault_list.h"

namespace fake_cuda {

namespace {

struct ErrorEntry {
  int code;
  const char* name;
  const char* text;
};

// The CUresult values the fake can return or be told to inject, with the
// driver's names and (paraphrased) descriptions.
constexpr ErrorEntry kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE",
     "uncorrectable ECC error encountered"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE",
     "uncorrectable NVLink error detected during the execution"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT",
     "the launch timed out and was terminated"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "an illegal instruction was encountered"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorEntry* find_code(int code) {
  for (const auto& e : kErrors)
    if (e.code == code) return &e;
  return nullptr;
}

}  // namespace

std::optional<int> error_code_by_name(std::string_view name) {
  for (const auto& e : kErrors)
    if (name == e.name) return e.code;
  return std::nullopt;
}

const char* error_name(int code) {
  const ErrorEntry* e = find_code(code);
  return e ? e->name : nullptr;
}

const char* error_string(int code) {
  const ErrorEntry* e = find_code(code);
  return e ? e->text : nullptr;
}

Faults Faults::parse(std::string_view text) {
  Faults out;
  parse_gpu_fault_list(
      text, "FAKE_CUDA_FAULTS", out.gpus_,
      [](const std::string& key, const nlohmann::json& value, GpuFaults& f,
         const auto& bad) {
        if (key == "bitflips" || key == "compute_errors") {
          if (!value.is_number_integer() || value < 0 || value > 4096)
            throw bad(key + " must be a whole number 0..4096");
          (key == "bitflips" ? f.bitflips : f.compute_errors) = value;
        } else if (key == "speed") {
          if (!value.is_number() || !(value > 0.0) || value > 100.0)
            throw bad("speed must be a number above 0");
          f.speed = value;
        } else if (key == "error") {
          auto code = value.is_string()
                          ? error_code_by_name(value.get<std::string>())
                          : std::nullopt;
          if (!code || *code == 0)
            throw bad("error must name a CUDA_ERROR_* code");
          f.error = *code;
        } else if (key == "after_s") {
          if (!value.is_number() || value < 0)
            throw bad("after_s must be seconds >= 0");
          f.error_after_s = value;
        } else if (key == "hang_after_s") {
          if (!value.is_number() || value < 0)
            throw bad("hang_after_s must be seconds >= 0");
          f.hang_after_s = value.get<double>();
        } else if (key == "op_wall_ms") {
          if (!value.is_number() || value < 0 || value > 60000)
            throw bad("op_wall_ms must be milliseconds 0..60000");
          f.op_wall_ms = value;
        } else {
          return false;
        }
        return true;
      });
  return out;
}

GpuFaults Faults::for_gpu(int gpu) const {
  for (const auto& [g, f] : gpus_)
    if (g == gpu) return f;
  return {};
}

}  // namespace fake_cuda
