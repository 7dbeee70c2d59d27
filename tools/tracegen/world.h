// The model behind every scenario: a host with GPUs and processes, one
// current Sample that each step mutates in place (strings are built once),
// and a seeded PRNG. Scenarios build a layout in setup and override the
// healthy baseline in each step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/sample.h"
#include "tracegen/tracegen.h"

namespace gd::tracegen {

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;

// xoshiro256** seeded through splitmix64: fast, deterministic everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();  // [0, 1)
  double normal() {  // ~N(0,1): sum of 4 uniforms
    return (uniform() + uniform() + uniform() + uniform() - 2.0) * 1.7320508;
  }
  bool chance(double p) { return uniform() < p; }

 private:
  uint64_t s_[4];
};

struct Step {
  size_t i = 0;
  double t = 0;     // Unix time
  double x = 0;     // seconds since the first sample
  double frac = 0;  // x / duration, 0..1
};

struct ProcSpec {
  uint32_t pid = 0, ppid = 1;
  std::string user = "alice", name = "python", cmdline = "python train.py";
  std::string state = "S";
  double cpu = 1, cpu_noise = 0.5;  // cpu_pct mean and spread
  int threads = 1;
  uint64_t rss = 1ull << 30;
  std::vector<std::string> libs;
};

inline ProcSpec make_proc(uint32_t pid, uint32_t ppid, std::string user,
                          std::string name, std::string cmdline,
                          std::string state, double cpu, double cpu_noise = 0.5,
                          int threads = 1, uint64_t rss = 1ull << 30) {
  ProcSpec p;
  p.pid = pid, p.ppid = ppid, p.user = std::move(user),
  p.name = std::move(name);
  p.cmdline = std::move(cmdline), p.state = std::move(state);
  p.cpu = cpu, p.cpu_noise = cpu_noise, p.threads = threads, p.rss = rss;
  return p;
}

struct TrainingJob {
  uint32_t launcher = 0;        // the pid that groups the ranks, 0 for one GPU
  std::vector<uint32_t> ranks;  // one per GPU, in GPU order
  std::vector<std::vector<uint32_t>> workers;  // per rank
};

struct JobSpec {
  std::vector<int> gpus;
  int workers_per_rank = 4;  // -1: spread Options::processes over ranks
  uint32_t base_pid = 8000;
  uint32_t parent_pid = 6900;  // the shell the job was started from
  std::string user = "alice";
  std::string script = "train.py";
  double mem_fraction = 0.6;  // of each GPU's memory, held by the rank
  double worker_cpu = 30;     // % of one CPU per worker
  double main_cpu = 100;
  bool launcher = true;  // a launcher when more than one GPU
  // Which launcher starts the ranks: torchrun, mpirun, deepspeed,
  // accelerate or srun (Slurm: ranks are children of slurmstepd).
  std::string launcher_kind = "torchrun";
  // False: the launcher has no entry in processes[], as in traces that
  // older versions recorded (GPU processes and their descendants only).
  bool launcher_visible = true;
};

class World {
 public:
  explicit World(const Options& options);

  Options opt;
  Rng rng;
  TraceHeader header;
  Sample s;  // the current sample, mutated in place every step

  // Host CPU used by processes that are not in processes[] (cores).
  double background_cores = 1.5;
  double driver_reserve_bytes = 512 * kMiB;

  void add_gpus(int n);
  size_t add_proc(const ProcSpec& spec);
  ProcessSample* proc(uint32_t pid);
  void set_cpu(uint32_t pid, double mean, double noise);
  void put_on_gpu(int g, uint32_t pid, uint64_t bytes,
                  const char* type = "compute");
  GpuProcess* gpu_proc(int g, uint32_t pid);
  uint64_t gpu_total(int g) const;
  TrainingJob add_training_job(const JobSpec& spec);
  // Adds the launcher process(es) of a multi-GPU job (unless hidden) and
  // returns the pid the ranks are children of.
  uint32_t add_launcher(const JobSpec& spec, uint32_t pid, uint32_t& next_pid);

  // ---- per step --------------------------------------------------------
  void begin_step(const Step& st);
  // Utilisation and everything that follows from it (clocks, power, temp,
  // PCIe traffic, reasons); util < 1 idles the GPU (P-state, PCIe gen 1).
  void gpu_activity(int g, double util);
  // mem_used = driver reservation + what the listed processes hold.
  void gpu_memory(int g);
  void jitter_cpu();
  // Host CPU and memory from the processes plus background.
  void host_baseline();
  // The healthy step: every GPU with a process at ~95%, idle otherwise.
  void healthy_step(const Step& st);
  void lose_gpu(int g);
  // After the scenario's step: what follows from the values it set (the
  // T.Limit margin from the temperature a scenario may have overridden).
  void end_step();

  double busy_util() { return std::clamp(95 + 2 * rng.normal(), 0.0, 100.0); }

  // ---- datacenter GPUs: Hopper, NVLink, MIG ------------------------------
  // GPU g becomes an H100 SXM5 80GB: Hopper (so its samples carry GPM
  // activity and per-process utilisation), 18 NVLink 4 links, registered in
  // its NVSwitch fabric.
  void make_h100(int g);
  // MIG on GPU g with one GPU instance (and one compute instance filling
  // it) per profile name, with the given GPU instance ids.
  void enable_mig(
      int g, const std::vector<std::pair<uint32_t, std::string>>& instances);
  // The MIG instance `gi` of GPU g (nullptr if there is none).
  MigInstance* mig(int g, uint32_t gi);

 private:
  struct Thermal {
    double temp = 38, power = 60;
    double energy_mj = 1e9;
  };
  std::vector<Thermal> thermal_;
  std::vector<double> cpu_mean_, cpu_noise_;  // per s.processes index
};

}  // namespace gd::tracegen
