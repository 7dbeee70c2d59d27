// What the fake libnccl.so.2 models, from the environment. It is read at
// each ncclCommInitAll (a clique keeps what it read), so one process can make
// cliques under different settings.
//
// Environment:
//   FAKE_NCCL_BUS_GBPS   modelled bus bandwidth of a collective, GB/s (1e9
//                        bytes/s; default 240: 8 A100-SXM4 over NVLink, where
//                        nccl-tests' all_reduce_perf shows 230-250). An
//                        all-reduce of B bytes per rank over n > 1 ranks takes
//                        B * 2(n-1)/n / bus rate of modelled GPU time (nccl-
//                        tests' bus bandwidth definition, no fixed latency);
//                        on one rank it is a local copy at half the GPU's
//                        modelled memory rate (read + write).
//   FAKE_NCCL_TIMEOUT_S  how long a rank's part of a collective waits for the
//                        other ranks' parts (default 20 s); then it fails (see
//                        below) instead of hanging as a real NCCL kernel would
//   FAKE_NCCL_FAULTS     a JSON list of objects, each naming a GPU by its index
//                        in the fake NVML scenario (NVML's numbering, as
//                        FAKE_CUDA_FAULTS does; the CUDA ordinals differ):
//     {"gpu": 2, "speed": 0.5}        GPU 2's link runs at half speed: every
//          collective of a clique with GPU 2 takes as long as its slowest
//          rank's link allows (modelled time / the lowest speed)
//     {"gpu": 1, "wrong_results": 3}  the first 3 elements of GPU 1's receive
//          buffer come out wrong (1 added; a float that 1 does not change
//          gets its lowest bit flipped)
//     {"gpu": 0, "init_error": "ncclSystemError"}  ncclCommInitAll of a clique
//          with GPU 0 fails with that code (any ncclResult_t name but
//          ncclSuccess)
// A bad value of any of them (an unknown key, a bad number, not JSON) makes
// ncclCommInitAll fail with ncclInvalidArgument, saying why on stderr.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace fake_nccl {

struct GpuFaults {
  double speed = 1.0;
  int wrong_results = 0;
  std::optional<int> init_error;  // an ncclResult_t
};

struct Config {
  double bus_bytes_per_s = 240e9;
  double timeout_s = 20;
  std::vector<std::pair<int, GpuFaults>> faults;  // NVML index -> faults

  // The faults of NVML GPU `gpu` (all defaults when none).
  GpuFaults for_gpu(int gpu) const;
};

// The configuration the environment gives. Throws std::runtime_error naming
// the variable and what is wrong with it.
Config load_config();

// FAKE_NCCL_FAULTS's list into `config`; throws std::runtime_error.
void parse_faults(std::string_view json, Config& config);

// "ncclSystemError" -> 2; nullopt when unknown.
std::optional<int> result_by_name(std::string_view name);

}  // namespace fake_nccl
