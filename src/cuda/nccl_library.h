// libnccl.so.2 (NCCL, the collectives library) loaded with dlopen, as the
// driver is (cuda_library.h): a table of the functions burn's all-reduce
// test uses, resolved one by one, so that a missing library or symbol means
// "no collective test here", never a failure to start.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/nccl_api.h"

namespace gd::cuda {

struct NcclFunctions {
#define GD_NCCL_FN_MEMBER(name, params) name##_fn name = nullptr;
  GD_NCCL_FUNCTIONS(GD_NCCL_FN_MEMBER)
#undef GD_NCCL_FN_MEMBER
  ncclGetErrorString_fn ncclGetErrorString = nullptr;
};

// An NCCL call that failed: "ncclAllReduce: invalid argument (4)".
class NcclError : public std::runtime_error {
 public:
  NcclError(std::string call, ncclResult_t code, const std::string& text);
  ncclResult_t code() const { return code_; }

 private:
  ncclResult_t code_;
};

class NcclLibrary {
 public:
  // `path` "" loads libnccl.so.2 from the linker's search path. nullptr when
  // it does not load or lacks a function the test needs; *why says which.
  static std::unique_ptr<NcclLibrary> open(const std::string& path,
                                           std::string* why);
  // Never dlcloses: NCCL keeps proxy threads for the process's life.
  ~NcclLibrary() = default;
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  const NcclFunctions& fn() const { return fn_; }
  const std::string& name() const { return name_; }
  // "2.21.5" from ncclGetVersion, "" when it does not say.
  std::string version() const;
  // Throws NcclError when rc is not ncclSuccess.
  void check(ncclResult_t rc, const char* call) const;

 private:
  NcclLibrary() = default;
  NcclFunctions fn_;
  std::string name_;
};

// NCCL's version code as text: 22105 -> "2.21.5", 2804 -> "2.8.4".
std::string nccl_version_text(int code);

// GD_NCCL(lib, ncclAllReduce, ...): the call, checked.
#define GD_NCCL(lib, name, ...) (lib).check((lib).fn().name(__VA_ARGS__), #name)
#define GD_NCCL0(lib, name) (lib).check((lib).fn().name(), #name)

}  // namespace gd::cuda
