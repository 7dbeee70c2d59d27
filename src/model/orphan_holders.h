// Who probably holds GPU memory whose owner is gone. The driver frees a
// CUDA context's memory only when the last file descriptor on the device
// closes, so when a CUDA process exits after forking (a data-loader worker,
// a multiprocessing child, a shell spawned from a notebook), the child that
// inherited /dev/nvidia* keeps the memory, and NVML keeps listing the dead
// parent. Such a child holds the per-GPU node and nvidia-uvm without NVML
// listing it anywhere, and, being a copy of the parent, maps its CUDA
// libraries (libcudart, libcublas, libnccl, ...). A monitoring client that
// only uses NVML (another gpudoctor, nvidia-smi, DCGM, a node exporter)
// holds the same device files on a real driver (580: nvidia-uvm and
// nvidia-caps too, as libnvidia-ml loads libcuda), but maps no CUDA library
// other than the driver's own libcuda: it is never proposed.
//
// Shared by every consumer that names the holder: who and kill (a /proc
// snapshot), ps, serve's API and diagnose (a sample's device_holders).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd {

// True when `devices` (file names under /dev: "nvidia0", "nvidia-uvm")
// are those a holder of GPU `gpu`'s memory must have: nvidia-uvm and either
// /dev/nvidia<gpu> or no per-GPU node at all (the GPU cannot be told then).
// Necessary, not sufficient: NVML clients hold them too (see above). The
// minor is taken to be the NVML index, as on every host without a custom
// device map.
bool may_hold_cuda_memory(const std::vector<std::string>& devices, int gpu);

// True when `libs` (ProcessSample::libs) are known and hold nothing but
// the driver's own library (libcuda.so.*): an NVML client's, not a CUDA
// program's address space.
bool maps_only_the_driver(const std::vector<std::string>& libs);

// A process that holds NVIDIA device files and that NVML lists on no GPU.
struct HolderCandidate {
  // pid, ppid, user, name, cmdline, cgroup, start_time, libs (empty: not
  // known)
  ProcessSample proc;
  std::vector<std::string> devices;
};

// A process NVML lists on the GPU whose memory no live process accounts
// for (a zombie, or a pid /proc does not have), as last seen alive where
// that is known.
struct VanishedOwner {
  uint32_t pid = 0;
  std::optional<ProcessSample> last_seen;  // name, user, cgroup, start_time
  std::optional<double> gone_at;           // first seen dead (Unix s)
};

struct ProbableHolder {
  uint32_t pid = 0;
  bool this_gpu = false;  // holds /dev/nvidia<gpu> itself
  int score = 0;          // higher: more likely; for ordering only
  // Facts that make it likely, one short clause each: "holds nvidia0 (GPU
  // 0) and nvidia-uvm", "re-parented to pid 1", "same user as pid 4242".
  std::vector<std::string> evidence;
};

// At most this many are proposed for one GPU.
inline constexpr size_t kMaxProbableHolders = 8;

// The candidates that may hold GPU `gpu`'s orphaned memory, most likely
// first (this GPU's node, then likeness to a vanished owner: same cgroup,
// command, user; started while the owner ran; re-parented). `now` (Unix s)
// words the start times.
std::vector<ProbableHolder> rank_probable_holders(
    int gpu, std::span<const HolderCandidate> candidates,
    std::span<const VanishedOwner> owners, double now);

class ProcessTree;

// Memory beyond the listed processes' by more than this is not a driver
// reservation (a few hundred MiB): somebody holds it.
inline constexpr uint64_t kOrphanMarginBytes = 1ull << 30;

// The sample's device holders that NVML lists on no GPU, each with its
// entry of processes[] (only the pid when it has none).
std::vector<HolderCandidate> holder_candidates(const Sample& s,
                                               const ProcessTree& tree);

// One sample's view (its device_holders and processes[]): for each GPU
// whose memory no live listed process accounts for (a listed pid is a
// zombie, or missing from processes[] when `pids_visible`; or used exceeds
// listed by kOrphanMarginBytes), the probable holders, ranked. Empty when
// the sample did not look at device files.
struct GpuOrphanHolders {
  int gpu = 0;
  std::vector<uint32_t> dead_owners;  // listed, zombie or gone
  std::vector<ProbableHolder> holders;
};
std::vector<GpuOrphanHolders> probable_holders_in(const Sample& s,
                                                  const ProcessTree& tree,
                                                  bool pids_visible);

// The advice for them: "end ... `gpudoctor kill 4321 4400`".
std::string end_holders_advice(int gpu,
                               std::span<const ProbableHolder> holders);

}  // namespace gd
