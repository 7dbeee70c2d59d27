// The scenario catalogue and the streaming Generator.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "tracegen/scenario_base.h"
#include "tracegen/tracegen.h"
#include "tracegen/world.h"

namespace gd::tracegen {
namespace {

std::vector<int> all_but_last(const World& w) {
  std::vector<int> g = all_gpus(w);
  g.pop_back();
  return g;
}

double clamp_pct(double v) { return std::clamp(v, 0.0, 100.0); }

// ---- healthy and input pipeline --------------------------------------------

struct Healthy : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
};

// GPU busy 3 s, starved 2 s (a ~5 s cycle); every loader worker pegged.
// The host is sized so the job alone saturates it.
struct InputBound : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    if (spec.workers_per_rank >= 0) spec.workers_per_rank = 6;
    spec.worker_cpu = 99;
    TrainingJob job = w.add_training_job(spec);
    double cores = w.background_cores + 0.3;
    for (size_t r = 0; r < job.ranks.size(); ++r) {
      cores += 1.0 + 0.99 * static_cast<double>(job.workers[r].size());
      for (uint32_t pid : job.workers[r]) w.proc(pid)->state = "R";
      w.set_cpu(job.ranks[r], 100, 1);
    }
    for (size_t r = 0; r < job.workers.size(); ++r)
      for (uint32_t pid : job.workers[r]) w.set_cpu(pid, 99, 0.6);
    w.header.host.cpu_count = static_cast<int>(std::ceil(cores));
  }
  void step(World& w, const Step& st) override {
    w.begin_step(st);
    bool busy = std::fmod(st.x, 5.0) < 3.0;
    for (int g : all_gpus(w)) {
      w.gpu_activity(g, busy ? 97 + w.rng.normal()
                             : clamp_pct(3 + 1.5 * w.rng.normal()) + 1);
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
  }
};

// The real 8-GPU case: util never drops below ~50% but swings 3 s at ~98% /
// 2 s at ~60% (a ~5 s cycle) while every rank's 4 loader workers are pegged.
// The host has idle CPUs: more workers fix it.
struct InputBoundOscillating : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    TrainingJob job = w.add_training_job(default_job(w, all_gpus(w)));
    for (const auto& ws : job.workers)
      for (uint32_t pid : ws) {
        w.proc(pid)->state = "R";
        w.set_cpu(pid, 99, 0.6);
      }
    for (uint32_t r : job.ranks) w.set_cpu(r, 100, 1);
  }
  void step(World& w, const Step& st) override {
    w.begin_step(st);
    bool busy = std::fmod(st.x, 5.0) < 3.0;
    for (int g : all_gpus(w)) {
      w.gpu_activity(g, busy ? 98 + w.rng.normal() : 60 + 4 * w.rng.normal());
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
  }
};

// Its look-alike: a training loop with an eval pass every 30 s. Util drops
// from ~95% to ~62% for 10 s each time, just as regularly, but the loader
// workers sleep at ~30% CPU: they keep up, the eval steps are lighter.
struct TrainEvalCycle : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    if (std::fmod(st.x, 30.0) >= 20.0)
      for (int g : all_gpus(w)) w.gpu_activity(g, 62 + 4 * w.rng.normal());
  }
};

// GPU starved 6 s of every 10 s while the loaders sit in disk sleep.
struct IoBound : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    spec.worker_cpu = 12;
    TrainingJob job = w.add_training_job(spec);
    for (const auto& ws : job.workers)
      for (uint32_t pid : ws) w.proc(pid)->state = "D";
    for (uint32_t r : job.ranks) w.set_cpu(r, 40, 5);
  }
  void step(World& w, const Step& st) override {
    w.begin_step(st);
    bool busy = std::fmod(st.x, 10.0) < 4.0;
    for (int g : all_gpus(w)) {
      w.gpu_activity(g, busy ? 95 + w.rng.normal()
                             : clamp_pct(4 + 2 * w.rng.normal()) + 1);
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
    HostSample& h = w.s.host;
    h.cpu_iowait_pct = std::round(clamp_pct(35 + 4 * w.rng.normal()) * 10) / 10;
    h.disk_busy_pct =
        std::round(clamp_pct(97 + 1.5 * w.rng.normal()) * 10) / 10;
    h.disk_read_bytes_per_s =
        static_cast<uint64_t>(180e6 + 15e6 * w.rng.normal());
  }
};

// ---- host memory ----------------------------------------------------------

struct Swapping : Scenario {
  bool active;
  explicit Swapping(bool active_) : active(active_) {}
  void setup(World& w) override {
    w.header.host.mem_total_bytes = 256ull << 30;
    w.header.host.swap_total_bytes = 64ull << 30;
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    TrainingJob job = w.add_training_job(spec);
    if (active)
      for (const auto& ws : job.workers)
        for (uint32_t pid : ws) w.proc(pid)->rss_bytes = 40ull << 30;
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    HostSample& h = w.s.host;
    if (active) {
      for (int g : all_gpus(w)) w.gpu_activity(g, 82 + 5 * w.rng.normal());
      h.swap_in_pages_per_s =
          std::round(std::max(0.0, 800 + 200 * w.rng.normal()));
      h.swap_out_pages_per_s =
          std::round(std::max(0.0, 1200 + 300 * w.rng.normal()));
      h.swap_used_bytes = static_cast<uint64_t>((8 + 12 * st.frac) * kGiB);
      h.mem_available_bytes =
          static_cast<uint64_t>((1.5 + 0.3 * w.rng.normal()) * kGiB);
    } else {
      // Parked in swap long ago; no traffic now.
      h.swap_used_bytes = 12ull << 30;
      h.swap_in_pages_per_s = w.rng.chance(0.02) ? 0.4 : 0.0;
      h.swap_out_pages_per_s = 0.0;
    }
  }
};

// A swap storm that looks I/O-bound: the loader workers' resident sets add
// up to more than the host's 256 GiB (300 GiB, 24 GiB a worker at least),
// the host pages ~25k in / 15k out pages/s (~160 MB/s, nearly all the disk
// traffic), the disk is ~95% busy, iowait ~30%, the workers sit in D on
// page faults and the GPUs starve 6 s of every 10. The cause is host
// memory, not storage.
struct SwapStorm : Scenario {
  void setup(World& w) override {
    w.header.host.mem_total_bytes = 256ull << 30;
    w.header.host.swap_total_bytes = 64ull << 30;
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    spec.worker_cpu = 8;
    TrainingJob job = w.add_training_job(spec);
    size_t workers = 0;
    for (const auto& ws : job.workers) workers += ws.size();
    for (const auto& ws : job.workers)
      for (uint32_t pid : ws) {
        w.proc(pid)->state = "D";
        w.proc(pid)->rss_bytes = static_cast<uint64_t>(
            std::max(24 * kGiB, 300 * kGiB / static_cast<double>(workers)));
      }
    for (uint32_t r : job.ranks) w.set_cpu(r, 40, 5);
  }
  void step(World& w, const Step& st) override {
    w.begin_step(st);
    bool busy = std::fmod(st.x, 10.0) < 4.0;
    for (int g : all_gpus(w)) {
      w.gpu_activity(g, busy ? 95 + w.rng.normal()
                             : clamp_pct(4 + 2 * w.rng.normal()) + 1);
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
    HostSample& h = w.s.host;
    double in = std::round(std::max(0.0, 25000 + 3000 * w.rng.normal()));
    double out = std::round(std::max(0.0, 15000 + 2000 * w.rng.normal()));
    h.swap_in_pages_per_s = in;
    h.swap_out_pages_per_s = out;
    h.swap_used_bytes = static_cast<uint64_t>((30 + 20 * st.frac) * kGiB);
    h.mem_available_bytes =
        static_cast<uint64_t>((1.2 + 0.2 * w.rng.normal()) * kGiB);
    // The dataset itself is small and cached: the disks move swap pages.
    h.disk_read_bytes_per_s = static_cast<uint64_t>(in * 4096 + 8e6);
    h.disk_write_bytes_per_s = static_cast<uint64_t>(out * 4096 + 2e6);
    h.disk_busy_pct =
        std::round(clamp_pct(95 + 1.5 * w.rng.normal()) * 10) / 10;
    h.cpu_iowait_pct = std::round(clamp_pct(30 + 4 * w.rng.normal()) * 10) / 10;
  }
};

// ---- GPU memory -----------------------------------------------------------

// Rank 0's memory follows a curve; the rest of the job is healthy.
struct MemoryCurve : Scenario {
  enum Kind { kLeak, kCaching, kStep, kPressure } kind;
  uint32_t pid = 0;
  double blip = 0;  // pending allocator blip to give back next step
  explicit MemoryCurve(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    pid = w.add_training_job(default_job(w, all_gpus(w))).ranks[0];
  }
  double bytes(World& w, const Step& st) {
    double total = static_cast<double>(w.gpu_total(0));
    constexpr double kSegment = 20 * kMiB;  // a large caching-allocator segment
    switch (kind) {
      case kLeak: {
        // Leaks ~64 MiB/min, or 30% of the card over the trace if slower,
        // grabbed one segment at a time.
        double rate = std::min(64 * kMiB / 60,
                               0.3 * total / std::max(1.0, w.opt.duration_s));
        return 20 * kGiB + std::floor(rate * st.x / kSegment) * kSegment;
      }
      case kCaching: {
        double ramp = std::max(30.0, 0.03 * w.opt.duration_s);
        double full = 0.85 * total;
        if (st.x < ramp)
          return 2 * kGiB +
                 std::floor((full - 2 * kGiB) * st.x / ramp / (2 * kGiB)) * 2 *
                     kGiB;
        return full;
      }
      case kStep:
        return st.frac < 0.4 ? 30 * kGiB : 50 * kGiB;
      case kPressure:
        return 0.95 * total - w.driver_reserve_bytes;
    }
    return 0;
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    double b = bytes(w, st);
    // Allocator noise: now and then a segment is taken and given back.
    if (blip > 0) {
      blip = 0;
    } else if (w.rng.chance(0.01)) {
      blip = 20 * kMiB;
      b += blip;
    }
    w.gpu_proc(0, pid)->used_bytes = static_cast<uint64_t>(b);
    w.gpu_memory(0);
  }
};

// Memory held on the last GPU by something that is not a live process.
struct Orphan : Scenario {
  enum Kind { kZombie, kMissing, kUnaccounted } kind;
  explicit Orphan(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    if (w.opt.gpus > 1) w.add_training_job(default_job(w, all_but_last(w)));
    int g = last_gpu(w);
    if (kind == kZombie) {
      w.add_proc(make_proc(9000, 6900, "alice", "python",
                           "python launcher.py --restart-on-failure", "S", 0.5,
                           0.2, 3, 400ull << 20));
      w.add_proc(make_proc(9100, 9000, "alice", "python", "", "Z", 0, 0, 1, 0));
      w.put_on_gpu(g, 9100, 18ull << 30);
    } else if (kind == kMissing) {
      size_t i = w.add_proc(make_proc(9200, 1, "", "", "", "missing", 0));
      ProcessSample& p = w.s.processes[i];
      p.ppid.reset(), p.cpu_pct.reset(), p.threads.reset(), p.rss_bytes.reset();
      p.start_time.reset();
      w.put_on_gpu(g, 9200, 12ull << 30);
    }
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    int g = last_gpu(w);
    w.gpu_activity(g, 0);
    if (kind == kUnaccounted) w.s.gpus[g].mem_used_bytes = 22ull << 30;
  }
};

// A CUDA process (pid 9300) forks a child (9301) that inherits the device
// files and exits at 10% of the trace; NVML keeps listing 9300 with its
// memory until the child ends. The recorder looks at the device files: the
// child holds the GPU's node and nvidia-uvm, a monitoring agent (950, NVML
// only) holds nvidiactl and the node.
struct ForkedChildHolder : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    if (w.opt.gpus > 1) w.add_training_job(default_job(w, all_but_last(w)));
    w.add_proc(make_proc(950, 1, "nobody", "dcgm-exporter",
                         "/usr/bin/dcgm-exporter", "S", 0.4, 0.1, 6,
                         90ull << 20));
    w.add_proc(make_proc(9300, 6900, "alice", "python",
                         "python prepare.py --cache /data/cache", "S", 60, 5, 8,
                         3ull << 30));
    w.add_proc(make_proc(9301, 9300, "alice", "python",
                         "python prepare.py --cache /data/cache", "S", 0.1, 0.1,
                         1, 900ull << 20));
    // Forked half an hour after its parent started.
    if (auto* owner = w.proc(9300); owner && owner->start_time)
      w.proc(9301)->start_time = *owner->start_time + 1800;
    w.put_on_gpu(last_gpu(w), 9300, 6758ull << 20);
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    const int g = last_gpu(w);
    w.gpu_activity(g, 0);
    const std::string node = "nvidia" + std::to_string(g);
    std::vector<DeviceHolder> holders = {{950, {node, "nvidiactl"}}};
    if (st.frac >= 0.1) {
      ProcessSample* owner = w.proc(9300);
      owner->state = "missing";
      owner->ppid.reset(), owner->cpu_pct.reset(), owner->threads.reset();
      owner->rss_bytes.reset(), owner->start_time.reset();
      owner->user.clear(), owner->name.clear(), owner->cmdline.clear();
      w.proc(9301)->ppid = 1;  // re-parented when its parent exited
    } else {
      holders.push_back({9300, {node, "nvidia-uvm", "nvidiactl"}});
    }
    holders.push_back({9301, {node, "nvidia-uvm", "nvidiactl"}});
    std::sort(holders.begin(), holders.end(),
              [](const DeviceHolder& a, const DeviceHolder& b) {
                return a.pid < b.pid;
              });
    w.s.device_holders = std::move(holders);
  }
};

// Collector inside a container: NVML's host pids are "missing" here.
struct ContainerNamespace : Scenario {
  void setup(World& w) override {
    w.header.host.pid_namespace = "container";
    w.add_gpus(w.opt.gpus);
    for (int g : all_gpus(w)) {
      uint32_t pid = 2345678 + static_cast<uint32_t>(g) * 31;
      size_t i = w.add_proc(make_proc(pid, 1, "", "", "", "missing", 0));
      ProcessSample& p = w.s.processes[i];
      p.ppid.reset(), p.cpu_pct.reset(), p.threads.reset(), p.rss_bytes.reset();
      p.start_time.reset();
      w.put_on_gpu(g, pid, 40ull << 30);
    }
  }
};

// A Jupyter kernel holds a model on GPU 0 and computes nothing.
struct IdleAllocated : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_proc(make_proc(4200, 4100, "alice", "jupyter-lab",
                         "/usr/bin/python3 /usr/local/bin/jupyter-lab", "S",
                         0.5, 0.3, 8, 600ull << 20));
    ProcSpec kernel =
        make_proc(4242, 4200, "alice", "python",
                  "/usr/bin/python3 -m ipykernel_launcher -f "
                  "/home/alice/.local/share/jupyter/runtime/kernel-1.json",
                  "S", 0.2, 0.1, 24, 6ull << 30);
    kernel.libs = {"libcudart.so.12.1.105"};
    w.add_proc(kernel);
    w.put_on_gpu(0, 4242, 10ull << 30);
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    w.gpu_activity(0, w.rng.chance(0.005) ? 2 : 0);
  }
};

// Nothing runs: only the driver's reservation, PCIe down-trained to gen 1.
struct IdleGpu : Scenario {
  void setup(World& w) override { w.add_gpus(w.opt.gpus); }
};

// ---- multi-GPU layout -----------------------------------------------------

// Rank 0 does more than the others. The ranks are grouped into one job by
// their launcher (which may be absent from processes[], as in traces that
// older versions recorded: they listed no ancestors).
struct DdpImbalance : Scenario {
  std::string launcher;
  bool visible;
  explicit DdpImbalance(std::string launcher_ = "torchrun",
                        bool visible_ = true)
      : launcher(std::move(launcher_)), visible(visible_) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    spec.launcher_kind = launcher;
    spec.launcher_visible = visible;
    w.add_training_job(spec);
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    for (int g : all_gpus(w))
      w.gpu_activity(
          g, g == 0 ? 96 + 1.5 * w.rng.normal() : 22 + 4 * w.rng.normal());
  }
};

// Two unrelated single-GPU jobs from two shells: one busy, one light. With
// `one_shell` both were started from the same (listed) tmux shell: a shell
// says nothing about which job a process belongs to.
struct UnrelatedJobs : Scenario {
  bool one_shell;
  explicit UnrelatedJobs(bool one_shell_ = false) : one_shell(one_shell_) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    JobSpec a = default_job(w, {0});
    a.parent_pid = 6001;
    JobSpec b = default_job(w, {1});
    b.parent_pid = one_shell ? 6001 : 6002, b.base_pid = 8500,
    b.script = "finetune.py";
    if (one_shell)
      w.add_proc(make_proc(6001, 6000, "alice", "bash", "-bash", "S", 0, 0, 1,
                           8ull << 20));
    else
      b.user = "bob";
    b.mem_fraction = 0.2;
    if (a.workers_per_rank < 0) a.workers_per_rank = b.workers_per_rank = 2;
    w.add_training_job(a);
    w.add_training_job(b);
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    w.gpu_activity(1, 20 + 4 * w.rng.normal());
  }
};

// Every rank also opened a context on GPU 0 (a common DDP slip): one job.
struct DdpStrayContexts : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    TrainingJob job = w.add_training_job(default_job(w, all_gpus(w)));
    for (size_t r = 1; r < job.ranks.size(); ++r)
      w.put_on_gpu(0, job.ranks[r], 500ull << 20);
  }
};

// Three users' jobs on GPU 0 in the default compute mode.
struct SharedGpu : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    const char* users[] = {"alice", "bob", "carol"};
    for (int j = 0; j < 3; ++j) {
      JobSpec spec = default_job(w, {0});
      spec.workers_per_rank = 2;
      spec.parent_pid = 6001 + static_cast<uint32_t>(j);
      spec.base_pid = 8000 + 100 * static_cast<uint32_t>(j);
      spec.user = users[j];
      spec.mem_fraction = 0.25 - 0.05 * j;
      w.add_training_job(spec);
    }
  }
};

// ---- host CPU -------------------------------------------------------------

struct CpuContention : Scenario {
  bool steal;
  explicit CpuContention(bool steal_) : steal(steal_) {}
  void setup(World& w) override {
    if (steal) w.header.host.cpu_count = 32;
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    spec.worker_cpu = 35;
    spec.main_cpu = 60;
    TrainingJob job = w.add_training_job(spec);
    for (const auto& ws : job.workers)
      for (uint32_t pid : ws) w.proc(pid)->state = "R";
    if (!steal) {
      int cpus = w.header.host.cpu_count.value_or(128);
      ProcSpec other =
          make_proc(7777, 7700, "bob", "ffmpeg",
                    "ffmpeg -i raw/ -c:v libx265 -preset slow out.mkv", "R",
                    cpus * 0.93 * 100, 150, cpus, 8ull << 30);
      w.add_proc(other);
    }
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    for (int g : all_gpus(w))
      w.gpu_activity(g, (steal ? 50 : 45) + 10 * w.rng.normal());
    if (steal) {
      w.s.host.cpu_steal_pct =
          std::round(clamp_pct(25 + 4 * w.rng.normal()) * 10) / 10;
      w.s.host.cpu_util_pct =
          std::round(clamp_pct(70 + 3 * w.rng.normal()) * 10) / 10;
    }
  }
};

// Issue 25's host: 48 busy processes of another user on 16 CPUs. They are
// no GPU job's relatives, so only host.other_cpu_top (the collector's
// busiest 8 per sample, a different 8 each time) names them; the shell the
// job was started from is in processes[] (an ancestor, to group the job)
// and busy enough that a rule reading processes[] would blame it.
struct OtherWork : Scenario {
  static constexpr int kOthers = 48;
  static constexpr uint32_t kFirstPid = 5100;
  bool recorded;  // false: a trace from before other_cpu_top
  explicit OtherWork(bool recorded_) : recorded(recorded_) {}
  void setup(World& w) override {
    w.header.host.cpu_count = 16;
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    spec.worker_cpu = 20;
    spec.main_cpu = 60;
    w.add_training_job(spec);
    w.add_proc(make_proc(spec.parent_pid, 6800, spec.user, "bash", "-bash", "S",
                         60, 5));
    w.background_cores = kOthers * 0.31;  // ~31% of a CPU each
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    for (int g : all_gpus(w)) w.gpu_activity(g, 45 + 10 * w.rng.normal());
    if (!recorded) return;
    std::vector<OtherCpuProcess> all;
    for (int i = 0; i < kOthers; ++i)
      all.push_back({kFirstPid + static_cast<uint32_t>(i), "yes", "bob",
                     std::nullopt,
                     std::round((31 + 3 * w.rng.normal()) * 10) / 10});
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.cpu_pct > b.cpu_pct;
    });
    all.resize(kOtherCpuTopMax);
    w.s.host.other_cpu_top = std::move(all);
  }
};

// ---- GPU health (rules of the GPU-health engineer) -------------------------

struct Clocks : Scenario {
  enum Kind {
    kThermal,
    kHotNoThrottle,
    kPowerBrake,
    kPowerCap,
    kPowerCapNearMax
  } kind;
  explicit Clocks(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    GpuSample& g = w.s.gpus[0];
    auto& reasons = *g.clock_event_reasons;
    switch (kind) {
      case kThermal:
        g.temp_c = 88 + static_cast<int>(std::lround(w.rng.uniform() * 2));
        if (w.rng.chance(0.9)) {
          reasons.push_back("sw_thermal_slowdown");
          g.sm_clock_mhz = 1050 + static_cast<int>(40 * w.rng.normal());
        }
        break;
      case kHotNoThrottle:
        g.temp_c = 84 + static_cast<int>(std::lround(w.rng.uniform()));
        break;
      case kPowerBrake:
        if (st.frac >= 0.3 && st.frac < 0.6) {
          reasons.push_back("hw_slowdown");
          reasons.push_back("hw_power_brake_slowdown");
          g.sm_clock_mhz = 600 + static_cast<int>(20 * w.rng.normal());
          g.power_w = std::round((150 + 5 * w.rng.normal()) * 10) / 10;
        }
        break;
      case kPowerCap:
        reasons.push_back("sw_power_cap");
        g.sm_clock_mhz = 1100 + static_cast<int>(30 * w.rng.normal());
        g.power_w = std::round((399 + w.rng.normal()) * 10) / 10;
        break;
      case kPowerCapNearMax:
        reasons.push_back("sw_power_cap");
        g.sm_clock_mhz = 1395;
        g.power_w = std::round((399 + w.rng.normal()) * 10) / 10;
        break;
    }
  }
};

struct Pcie : Scenario {
  bool under_load;
  explicit Pcie(bool load) : under_load(load) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    if (under_load)
      w.add_training_job(default_job(w, all_gpus(w)));
    else if (w.opt.gpus > 1)
      w.add_training_job(default_job(w, all_but_last(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    if (under_load) {
      w.s.gpus[0].pcie_gen = 3;
      w.s.gpus[0].pcie_width = 8;
    }
  }
};

struct Ecc : Scenario {
  bool dbe;
  uint64_t sbe = 0;
  explicit Ecc(bool d) : dbe(d) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    GpuSample& g = w.s.gpus[0];
    if (!dbe) {
      if (w.rng.chance(w.opt.interval_s / 60)) ++sbe;
      g.ecc_sbe_volatile_total = sbe;
      return;
    }
    bool after = st.frac >= 0.5;
    g.ecc_dbe_volatile_total = after ? 2 : 0;
    g.retired_pages_pending = after;
    g.remapped_rows_pending = after;
    if (after && st.frac - w.opt.interval_s / w.opt.duration_s < 0.5) {
      Event e;
      e.kind = "xid";
      e.gpu = 0;
      e.code = 48;
      e.text = fmt::format(
          "NVRM: Xid (PCI:0000:{}): 48, pid=0, An uncorrectable double bit "
          "error (DBE) has been detected on GPU in the framebuffer at "
          "partition 6, subpartition 0.",
          w.header.gpus[0].pci_bus_id.substr(9, 7));
      w.s.events.push_back(e);
    }
  }
};

struct Xids : Scenario {
  uint32_t pid = 0;
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    pid = w.add_training_job(default_job(w, all_gpus(w))).ranks[0];
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    double prev = st.frac - w.opt.interval_s / w.opt.duration_s;
    std::string bus = w.header.gpus[0].pci_bus_id.substr(9, 7);
    auto at = [&](double f) { return st.frac >= f && prev < f; };
    auto xid = [&](int code, std::optional<uint32_t> p,
                   const std::string& what) {
      Event e;
      e.kind = "xid", e.gpu = 0, e.code = code, e.pid = p;
      e.text = fmt::format("NVRM: Xid (PCI:0000:{}): {}, {}", bus, code, what);
      w.s.events.push_back(e);
    };
    if (at(0.2))
      xid(13, pid,
          fmt::format("pid={}, name=python, Graphics SM Warp Exception on (GPC "
                      "0, TPC 1, SM 0): Out Of Range Address",
                      pid));
    if (at(0.4))
      xid(31, pid,
          fmt::format(
              "pid={}, name=python, Ch 00000008, intr 00000000. MMU Fault: "
              "ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_3456f000. Fault "
              "is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
              pid));
    if (at(0.7))
      xid(119, std::nullopt,
          "pid=0, name=, Timeout after 6s of waiting for RPC response from "
          "GPU0 GSP!");
  }
};

// GPU 0 collects correctable errors; half-way the driver records a row for
// remapping (Xid 63) with no uncorrectable error: a pending remap.
struct RemapPending : Scenario {
  uint64_t sbe = 0;
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    GpuSample& g = w.s.gpus[0];
    if (w.rng.chance(w.opt.interval_s / 60)) ++sbe;
    g.ecc_sbe_volatile_total = sbe;
    bool after = st.frac >= 0.5;
    g.remapped_rows_pending = after;
    if (after && st.frac - w.opt.interval_s / w.opt.duration_s < 0.5) {
      Event e;
      e.kind = "xid", e.gpu = 0, e.code = 63;
      e.text = fmt::format(
          "NVRM: Xid (PCI:0000:{}): 63, pid='<unknown>', name=<unknown>, Row "
          "Remapper: New row marked for remapping, reset gpu to activate.",
          w.header.gpus[0].pci_bus_id.substr(9, 7));
      w.s.events.push_back(e);
    }
  }
};

// At 60% every GPU of the host logs a GSP RPC timeout (Xid 119), one after
// the other: one driver, not N failing boards.
struct GspTimeouts : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    double prev = st.frac - w.opt.interval_s / w.opt.duration_s;
    if (!(st.frac >= 0.6 && prev < 0.6)) return;
    for (const auto& info : w.header.gpus) {
      Event e;
      e.kind = "xid", e.gpu = info.index, e.code = 119;
      e.text = fmt::format(
          "NVRM: Xid (PCI:0000:{}): 119, pid=0, name=, Timeout after 45s of "
          "waiting for RPC response from GPU{} GSP! Expected function 76 "
          "(GSP_RM_CONTROL) (0x20801702 0x4).",
          info.pci_bus_id.substr(9, 7), info.index);
      w.s.events.push_back(e);
    }
  }
};

// The last GPU falls off the bus half-way; the job's other ranks hang.
struct GpuLost : Scenario {
  bool gone = false;
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    int g = last_gpu(w);
    if (st.frac >= 0.5 && !gone) {
      gone = true;
      w.lose_gpu(g);
      w.healthy_step(st);
      Event lost;
      lost.kind = "gpu_lost", lost.gpu = g, lost.text = "GPU is lost";
      Event xid;
      xid.kind = "xid", xid.gpu = g, xid.code = 79;
      xid.text = fmt::format(
          "NVRM: Xid (PCI:0000:{}): 79, pid=0, GPU has fallen off the bus.",
          w.header.gpus[g].pci_bus_id.substr(9, 7));
      w.s.events.push_back(xid);
      w.s.events.push_back(lost);
    } else {
      w.healthy_step(st);
    }
    if (gone)
      for (int o : all_gpus(w))
        if (o != g) w.gpu_activity(o, 0);
  }
};

struct HeaderOnly : Scenario {
  enum Kind { kDriverMismatch, kPersistenceOff, kCudaMismatch, kOomKill } kind;
  explicit HeaderOnly(Kind k) : kind(k) {}
  void setup(World& w) override {
    if (kind == kDriverMismatch) {
      w.header.nvml_status = kNvmlDriverMismatch;
      w.header.driver.reset();
      return;
    }
    w.add_gpus(w.opt.gpus);
    TrainingJob job = w.add_training_job(default_job(w, all_gpus(w)));
    if (kind == kPersistenceOff)
      for (GpuInfo& g : w.header.gpus) g.persistence_mode = false;
    if (kind == kCudaMismatch)
      w.proc(job.ranks[0])->libs = {"libcudart.so.12.4.127",
                                    "libcublas.so.12.4.5.8",
                                    "libnccl.so.2.20.5"};
    victim = job.workers.empty() || job.workers[0].empty() ? job.ranks[0]
                                                           : job.workers[0][0];
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    double prev = st.frac - w.opt.interval_s / w.opt.duration_s;
    if (kind == kOomKill && st.frac >= 0.6 && prev < 0.6) {
      Event e;
      e.kind = "oom_kill", e.pid = victim;
      e.text = fmt::format(
          "Out of memory: Killed process {} (pt_data_worker) "
          "total-vm:52428800kB, anon-rss:41943040kB, file-rss:0kB, "
          "shmem-rss:0kB, UID:1000 pgtables:90000kB oom_score_adj:0",
          victim);
      w.s.events.push_back(e);
    }
  }
  uint32_t victim = 0;
};

// A healthy job whose collector could not read a third of the fields.
struct MissingFields : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
    w.header.gpus[0].memory_total_bytes.reset();
    for (GpuInfo& g : w.header.gpus)
      g.pcie_max_gen.reset(), g.pcie_max_width.reset();
    w.header.host.cpu_count.reset();
  }
  void post(World& w, Sample& out, const Step&) override {
    auto drop = [&](auto& field, double p = 0.3) {
      if (w.rng.chance(p)) field.reset();
    };
    for (GpuSample& g : out.gpus) {
      drop(g.util_pct), drop(g.mem_util_pct), drop(g.mem_used_bytes),
          drop(g.temp_c);
      drop(g.mem_temp_c), drop(g.power_w), drop(g.energy_mj_total),
          drop(g.sm_clock_mhz);
      drop(g.mem_clock_mhz), drop(g.pstate), drop(g.clock_event_reasons),
          drop(g.pcie_gen);
      drop(g.pcie_width), drop(g.pcie_tx_bytes_per_s),
          drop(g.pcie_rx_bytes_per_s);
      drop(g.ecc_sbe_volatile_total), drop(g.ecc_dbe_volatile_total);
      drop(g.retired_pages_pending), drop(g.remapped_rows_pending);
      drop(g.remapped_rows_failure), drop(g.pcie_replay_total);
      if (g.processes)
        for (GpuProcess& p : *g.processes) drop(p.used_bytes, 0.2);
      drop(g.processes, 0.2);
    }
    HostSample& h = out.host;
    drop(h.cpu_util_pct), drop(h.cpu_iowait_pct), drop(h.cpu_steal_pct),
        drop(h.load1);
    drop(h.mem_available_bytes), drop(h.swap_used_bytes),
        drop(h.swap_in_pages_per_s);
    drop(h.swap_out_pages_per_s), drop(h.disk_read_bytes_per_s);
    drop(h.disk_write_bytes_per_s), drop(h.disk_busy_pct);
    for (ProcessSample& p : out.processes) {
      drop(p.cpu_pct), drop(p.ppid, 0.1), drop(p.threads), drop(p.rss_bytes);
    }
  }
};

// ---- memory wear, recovery action, thermal outliers, failed reads ----------

// True in the one step where the trace crosses `f` (0..1) of its duration.
bool crossed(const World& w, const Step& st, double f) {
  return st.frac >= f && st.frac - w.opt.interval_s / w.opt.duration_s < f;
}

// GPU 0's memory wears out: correctable remaps 2 -> 6 over the trace, one
// uncorrectable remap at 70%, and a bank falls to `low` spare rows at 60%.
// The other GPUs report their remapper counts as healthy.
struct RowsRemapping : Scenario {
  bool growing;
  explicit RowsRemapping(bool g) : growing(g) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    for (GpuSample& g : w.s.gpus) {
      if (g.lost) continue;
      g.remapped_rows_correctable_total = 0;
      g.remapped_rows_uncorrectable_total = 0;
      g.row_remap_histogram = RowRemapHistogram{640, 0, 0, 0, 0};
    }
    GpuSample& g = w.s.gpus[0];
    if (growing) {
      uint64_t rows = 2 + static_cast<uint64_t>(std::floor(st.frac * 5));
      g.remapped_rows_correctable_total = rows;
      g.remapped_rows_uncorrectable_total = st.frac >= 0.7 ? 1 : 0;
      g.row_remap_histogram = st.frac >= 0.6
                                  ? RowRemapHistogram{632, 5, 1, 1, 0}
                                  : RowRemapHistogram{634, 5, 1, 0, 0};
      return;
    }
    // One correctable remap half-way, pending until a reset; plenty of
    // spare rows left.
    bool after = st.frac >= 0.5;
    g.remapped_rows_correctable_total = after ? 1 : 0;
    g.remapped_rows_pending = after;
    g.row_remap_histogram = after ? RowRemapHistogram{639, 1, 0, 0, 0}
                                  : RowRemapHistogram{640, 0, 0, 0, 0};
  }
};

// Every GPU reports its recovery action. With `reset`, GPU 0's changes to
// GPU Reset Required half-way, announced by Xid 154; otherwise it stays
// None while GPU 0 logs an application fault (Xid 13).
struct RecoveryActionScenario : Scenario {
  bool reset;
  uint32_t pid = 0;
  explicit RecoveryActionScenario(bool r) : reset(r) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    pid = w.add_training_job(default_job(w, all_gpus(w))).ranks[0];
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    for (GpuSample& g : w.s.gpus) g.recovery_action = kRecoveryNone;
    std::string bus = w.header.gpus[0].pci_bus_id.substr(9, 7);
    if (reset && st.frac >= 0.5)
      w.s.gpus[0].recovery_action = kRecoveryGpuReset;
    if (!crossed(w, st, 0.5)) return;
    Event e;
    e.kind = "xid", e.gpu = 0;
    if (reset) {
      e.code = 154;
      e.text = fmt::format(
          "NVRM: Xid (PCI:0000:{}): 154, GPU recovery action changed from "
          "0x0 (None) to 0x1 (GPU Reset Required)",
          bus);
    } else {
      e.code = 13, e.pid = pid;
      e.text = fmt::format(
          "NVRM: Xid (PCI:0000:{}): 13, pid={}, name=python, Graphics SM "
          "Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
          bus, pid);
    }
    w.s.events.push_back(e);
  }
};

// Every GPU runs the same job; the last one runs 16 C hotter than the
// others. kMixedModels: the last one is another model (an H100), so it is
// no peer of the A100s. kDifferentLoad: the last GPU runs at ~95% while the
// others idle along at ~40%, and it is hotter because it works harder.
struct ThermalOutlier : Scenario {
  enum Kind { kOutlier, kMixedModels, kDifferentLoad } kind;
  explicit ThermalOutlier(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    if (kind == kMixedModels) {
      GpuInfo& g = w.header.gpus[static_cast<size_t>(last_gpu(w))];
      g.name = "NVIDIA H100 80GB HBM3";
      g.temp_slowdown_c = 90;
    }
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    if (kind != kDifferentLoad) return w.healthy_step(st);
    w.begin_step(st);
    for (int g : all_gpus(w)) {
      w.gpu_activity(
          g, g == last_gpu(w) ? w.busy_util() : 40 + 2 * w.rng.normal());
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
  }
  void post(World& w, Sample& out, const Step&) override {
    for (GpuSample& g : out.gpus) {
      if (!g.temp_c) continue;
      if (kind != kDifferentLoad && g.index == last_gpu(w)) *g.temp_c += 16;
      const GpuInfo& info = w.header.gpus[static_cast<size_t>(g.index)];
      g.temp_limit_margin_c = info.temp_slowdown_c.value_or(89) - *g.temp_c;
    }
  }
};

// A healthy GPU whose reads fail now and then: temperature and power read
// ERR! at 30% and 70%, one reading misses its deadline (stale) at 40%, and
// NVML says "GPU is lost" for one sample at 60%, answering again the next.
struct TransientReadErrors : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void post(World& w, Sample& out, const Step& st) override {
    GpuSample& g = out.gpus[static_cast<size_t>(last_gpu(w))];
    if (crossed(w, st, 0.3) || crossed(w, st, 0.7)) {
      g.temp_c.reset(), g.power_w.reset();
      g.read_errors = {"temp_c", "power_w"};
    } else if (crossed(w, st, 0.4)) {
      GpuSample stale;
      stale.index = g.index, stale.stale = true;
      g = stale;
    } else if (crossed(w, st, 0.6)) {
      GpuSample lost;
      lost.index = g.index, lost.lost = true;
      g = lost;
      Event e;
      e.kind = "gpu_lost", e.gpu = lost.index;
      e.text = fmt::format("GPU {}: NVML reports the GPU is lost", lost.index);
      out.events.push_back(e);
    }
  }
};

// ---- enumeration, PCIe AER and /dev/shm ------------------------------------

// "00000000:07:00.0" (NVML) -> "0000:07:00.0" (sysfs and the kernel log).
std::string sysfs_address(const GpuInfo& info) {
  return "0000:" + info.pci_bus_id.substr(9);
}

// The PCI bus lists one NVIDIA GPU more than NVML enumerates. kMissing: it
// is bound to nvidia and the driver logged RmInitAdapter failed for it (it
// failed to initialise); kPassthrough: it is bound to vfio-pci (handed to a
// VM on purpose); kDropped: every GPU is listed at start, then the last one
// drops out of NVML's enumeration half-way (its count fell by one).
struct PciEnumeration : Scenario {
  enum Kind { kMissing, kPassthrough, kDropped } kind;
  explicit PciEnumeration(Kind k) : kind(k) {}
  static constexpr const char* kExtra = "0000:e1:00.0";
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
    std::vector<PciGpu> bus;
    for (const GpuInfo& g : w.header.gpus)
      bus.push_back({sysfs_address(g), std::string("nvidia")});
    if (kind == kMissing) bus.push_back({kExtra, std::string("nvidia")});
    if (kind == kPassthrough) bus.push_back({kExtra, std::string("vfio-pci")});
    w.header.pci_gpus = bus;
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    double prev = st.frac - w.opt.interval_s / w.opt.duration_s;
    if (kind == kMissing && st.i == 0) {
      Event e;
      e.kind = kEventNvrm, e.pci_address = kExtra;
      e.text = fmt::format(
          "NVRM: GPU {}: RmInitAdapter failed! (0x23:0x56:515)", kExtra);
      w.s.events.push_back(e);
    }
    if (kind == kDropped && st.frac >= 0.5 && prev < 0.5) {
      Event e;
      e.kind = kEventNvrm, e.gpu = last_gpu(w);
      e.text = fmt::format(
          "NVRM: GPU {}: GPU has fallen off the bus.",
          sysfs_address(w.header.gpus[static_cast<size_t>(last_gpu(w))]));
      w.s.events.push_back(e);
    }
  }
  void post(World& w, Sample& out, const Step& st) override {
    if (kind != kDropped || st.frac < 0.5) return;
    int gone = last_gpu(w);
    std::erase_if(out.gpus,
                  [&](const GpuSample& g) { return g.index == gone; });
  }
};

// PCIe AER lines for GPU 0's link. kStorm: a corrected error (physical
// layer, receiver error) every ~10 s through the trace; kFatal: one fatal
// uncorrected error half-way; kSingle: one corrected error half-way.
struct PcieAer : Scenario {
  enum Kind { kStorm, kFatal, kSingle } kind;
  explicit PcieAer(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    double prev = st.frac - w.opt.interval_s / w.opt.duration_s;
    bool half = st.frac >= 0.5 && prev < 0.5;
    std::string address = sysfs_address(w.header.gpus[0]);
    Event e;
    e.kind = kEventPcieAer, e.gpu = 0;
    if (kind == kStorm && w.rng.chance(w.opt.interval_s / 10)) {
      e.severity = "corrected";
      e.text = fmt::format(
          "nvidia {}: PCIe Bus Error: severity=Corrected, type=Physical "
          "Layer, (Receiver ID)",
          address);
    } else if (kind == kFatal && half) {
      e.severity = "fatal";
      e.text = fmt::format(
          "nvidia {}: PCIe Bus Error: severity=Uncorrected (Fatal), "
          "type=Transaction Layer, (Receiver ID)",
          address);
    } else if (kind == kSingle && half) {
      e.severity = "corrected";
      e.text = fmt::format(
          "nvidia {}: PCIe Bus Error: severity=Corrected, type=Data Link "
          "Layer, (Transmitter ID)",
          address);
    } else {
      return;
    }
    w.s.events.push_back(e);
  }
};

// The job's processes see a /dev/shm of `shm_mib` (inside a container, as
// pid 1 + n of their own namespace). kWorkers: the usual 4 loader workers
// per rank; kNoWorkers: the ranks load their own data.
struct DevShm : Scenario {
  double shm_mib;
  bool workers;
  DevShm(double mib, bool with_workers) : shm_mib(mib), workers(with_workers) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    JobSpec spec = default_job(w, all_gpus(w));
    if (!workers) spec.workers_per_rank = 0;
    TrainingJob job = w.add_training_job(spec);
    uint32_t ns_pid = 1;
    auto in_container = [&](uint32_t pid) {
      ProcessSample* p = w.proc(pid);
      p->dev_shm_bytes = static_cast<uint64_t>(shm_mib * kMiB);
      p->ns_pid = ns_pid++;
    };
    for (size_t r = 0; r < job.ranks.size(); ++r) {
      in_container(job.ranks[r]);
      if (r < job.workers.size())
        for (uint32_t worker : job.workers[r]) in_container(worker);
    }
  }
};

// ---- the catalogue ----------------------------------------------------------

// Every finding id of findings.md (the suite in tests/diagnose checks this
// list against the file).
const std::vector<std::string>& all_ids() {
  static const std::vector<std::string> ids = {"gpu-lost",
                                               "xid-error",
                                               "ecc-uncorrectable",
                                               "ecc-reset-required",
                                               "thermal-throttling",
                                               "power-brake",
                                               "power-capping",
                                               "pcie-link-degraded",
                                               "memory-pressure",
                                               "memory-leak",
                                               "orphaned-memory",
                                               "pid-namespace-blind",
                                               "nvml-driver-mismatch",
                                               "input-bound",
                                               "io-bound",
                                               "host-swapping",
                                               "cpu-contention",
                                               "gpu-idle-allocated",
                                               "gpu-imbalance",
                                               "gpu-shared-contention",
                                               "driver-cuda-mismatch",
                                               "persistence-mode-off",
                                               "host-oom-kill",
                                               "memory-degrading",
                                               "recovery-action-required",
                                               "thermal-outlier",
                                               "gpu-missing",
                                               "pcie-aer-errors",
                                               "dev-shm-small",
                                               "nvlink-degraded",
                                               "low-sm-efficiency",
                                               "tensor-cores-unused",
                                               "memory-underused",
                                               "rdma-port-down",
                                               "rdma-port-degraded",
                                               "rdma-errors",
                                               "comm-bound"};
  return ids;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = with_datacenter_entries({
      {{"healthy-training",
        "DDP job at ~95% util on every GPU, loaders keep up",
        1,
        {},
        all_ids()},
       make<Healthy>()},
      {{"input-bound",
        "util cycles 3 s busy / 2 s idle (~5 s) while every loader worker runs "
        "at 99% CPU; the job alone saturates the host",
        1,
        {"input-bound"},
        {"io-bound", "cpu-contention"}},
       make<InputBound>()},
      {{"input-bound-oscillating",
        "util swings 3 s at ~98% / 2 s at ~60% (~5 s cycle, never below 50%) "
        "while every rank's 4 loader workers run at 99% CPU; idle CPUs left",
        1,
        {"input-bound"},
        {"io-bound", "cpu-contention"}},
       make<InputBoundOscillating>()},
      {{"train-eval-cycle",
        "util drops from ~95% to ~62% for 10 s of every 30 s (eval passes) "
        "while the loader workers sleep at ~30% CPU",
        1,
        {},
        {"input-bound", "cpu-contention", "io-bound"}},
       make<TrainEvalCycle>()},
      {{"io-bound",
        "util cycles 4 s busy / 6 s idle while loaders sit in disk sleep: "
        "iowait ~35%, disk 97% busy",
        1,
        {"io-bound"},
        {"input-bound", "cpu-contention"}},
       make<IoBound>()},
      {{"host-swapping",
        "host pages to swap: ~800 in / 1200 out pages/s, loaders with 40 GiB "
        "RSS",
        1,
        {"host-swapping"},
        {}},
       make<Swapping>(true)},
      {{"swap-used-idle",
        "12 GiB parked in swap, no swap traffic",
        1,
        {},
        {"host-swapping"}},
       make<Swapping>(false)},
      {{"swap-storm",
        "loader workers hold more than the host's 256 GiB: ~25k in / 15k "
        "out pages/s of swap are the disks' traffic (95% busy, iowait ~30%); "
        "GPUs starve 6 s of every 10",
        1,
        {"host-swapping"},
        {"io-bound", "input-bound"}},
       make<SwapStorm>()},
      {{"memory-leak",
        "rank 0's GPU memory grows one 20 MiB segment at a time, ~64 MiB/min "
        "(or 30% of the card over the trace)",
        1,
        {"memory-leak"},
        {"memory-pressure"}},
       make<MemoryCurve>(MemoryCurve::kLeak)},
      {{"caching-allocator",
        "rank 0 fills 85% of the card in the first 3% of the trace, then holds "
        "it flat",
        1,
        {},
        {"memory-leak", "memory-pressure"}},
       make<MemoryCurve>(MemoryCurve::kCaching)},
      {{"memory-step",
        "rank 0 steps once from 30 to 50 GiB at 40% of the trace",
        1,
        {},
        {"memory-leak"}},
       make<MemoryCurve>(MemoryCurve::kStep)},
      {{"memory-pressure",
        "GPU 0 stays at 95% memory used",
        1,
        {"memory-pressure"},
        {"memory-leak"}},
       make<MemoryCurve>(MemoryCurve::kPressure)},
      {{"zombie-memory",
        "zombie pid 9100 (parent 9000 launcher.py) holds 18 GiB on the last "
        "GPU",
        1,
        {"orphaned-memory"},
        {"gpu-idle-allocated", "pid-namespace-blind"}},
       make<Orphan>(Orphan::kZombie)},
      {{"missing-owner",
        "pid 9200, missing from /proc, holds 12 GiB on the last GPU",
        1,
        {"orphaned-memory"},
        {"gpu-idle-allocated", "pid-namespace-blind"}},
       make<Orphan>(Orphan::kMissing)},
      {{"forked-child-holder",
        "pid 9300 forked 9301 and exited; NVML still lists 9300 with 6.6 GiB "
        "on the last GPU while 9301 holds its device files",
        1,
        {"orphaned-memory"},
        {"gpu-idle-allocated", "pid-namespace-blind"}},
       make<ForkedChildHolder>()},
      {{"unaccounted-memory",
        "the last GPU has 22 GiB used and no process listed",
        1,
        {"orphaned-memory"},
        {"gpu-idle-allocated"}},
       make<Orphan>(Orphan::kUnaccounted)},
      {{"container-pid-namespace",
        "collector in a container: NVML's host pids are missing from its /proc",
        1,
        {"pid-namespace-blind"},
        {"orphaned-memory", "gpu-idle-allocated", "input-bound"}},
       make<ContainerNamespace>()},
      {{"gpu-idle-allocated",
        "a Jupyter kernel holds 10 GiB on GPU 0 at 0% util",
        1,
        {"gpu-idle-allocated"},
        {"orphaned-memory"}},
       make<IdleAllocated>()},
      {{"idle-gpu",
        "no process; only the driver's 512 MiB; PCIe down-trained to gen 1 at "
        "idle",
        1,
        {},
        {"gpu-idle-allocated", "orphaned-memory", "pcie-link-degraded"}},
       make<IdleGpu>()},
      {{"ddp-imbalance",
        "torchrun job: GPU 0 at ~96%, the other GPUs at ~22%",
        2,
        {"gpu-imbalance"},
        {"input-bound", "cpu-contention"}},
       make<DdpImbalance>()},
      {{"ddp-imbalance-mpirun",
        "mpirun job: GPU 0 at ~96%, the other ranks' GPUs at ~22%",
        2,
        {"gpu-imbalance"},
        {"input-bound", "cpu-contention", "gpu-shared-contention"}},
       make<DdpImbalance>("mpirun")},
      {{"ddp-imbalance-deepspeed",
        "deepspeed -> deepspeed.launcher.launch -> ranks: GPU 0 at ~96%, the "
        "others ~22%",
        2,
        {"gpu-imbalance"},
        {"input-bound", "cpu-contention", "gpu-shared-contention"}},
       make<DdpImbalance>("deepspeed")},
      {{"ddp-imbalance-accelerate",
        "accelerate launch job: GPU 0 at ~96%, the others ~22%",
        2,
        {"gpu-imbalance"},
        {"input-bound", "cpu-contention", "gpu-shared-contention"}},
       make<DdpImbalance>("accelerate")},
      {{"ddp-imbalance-srun",
        "Slurm step (ranks under slurmstepd): GPU 0 at ~96%, the others ~22%",
        2,
        {"gpu-imbalance"},
        {"input-bound", "cpu-contention", "gpu-shared-contention"}},
       make<DdpImbalance>("srun")},
      {{"ddp-imbalance-hidden-launcher",
        "torchrun job whose launcher is not in processes[] (as older versions "
        "recorded it): GPU 0 ~96%, others ~22%",
        2,
        {"gpu-imbalance"},
        {"input-bound", "cpu-contention", "gpu-shared-contention"}},
       make<DdpImbalance>("torchrun", false)},
      {{"unrelated-jobs",
        "two single-GPU jobs of two users from two shells: GPU 0 ~95%, GPU 1 "
        "~20%",
        2,
        {},
        {"gpu-imbalance", "gpu-shared-contention"}},
       make<UnrelatedJobs>()},
      {{"unrelated-jobs-one-shell",
        "two single-GPU jobs started from one tmux bash: GPU 0 ~95%, GPU 1 "
        "~20%",
        2,
        {},
        {"gpu-imbalance", "gpu-shared-contention"}},
       make<UnrelatedJobs>(true)},
      {{"ddp-stray-contexts",
        "healthy DDP job whose ranks also hold a 500 MiB context on GPU 0",
        2,
        {},
        {"gpu-shared-contention", "gpu-imbalance"}},
       make<DdpStrayContexts>()},
      {{"shared-gpu",
        "three users' jobs run on GPU 0 in the default compute mode",
        1,
        {"gpu-shared-contention"},
        {}},
       make<SharedGpu>()},
      {{"cpu-contention",
        "an ffmpeg of another user takes ~93% of the host's CPUs; the job's "
        "GPUs run at ~45%",
        1,
        {"cpu-contention"},
        {"input-bound"}},
       make<CpuContention>(false)},
      {{"cpu-contention-other-work",
        "48 busy processes of another user on 16 CPUs, listed only in "
        "host.other_cpu_top; the job's shell is busy too; GPUs at ~45%",
        1,
        {"cpu-contention"},
        {"input-bound"}},
       make<OtherWork>(true)},
      {{"cpu-contention-unrecorded",
        "the same host in a trace without host.other_cpu_top: only the "
        "job's busy shell is listed outside the job",
        1,
        {"cpu-contention"},
        {"input-bound"}},
       make<OtherWork>(false)},
      {{"cpu-steal",
        "VM with ~25% CPU steal; the job's GPUs run at ~50%",
        1,
        {"cpu-contention"},
        {"input-bound"}},
       make<CpuContention>(true)},
      {{"thermal-throttling",
        "GPU 0 at 88-90 C with sw_thermal_slowdown in 90% of samples, SM clock "
        "~1050 MHz",
        1,
        {"thermal-throttling"},
        {}},
       make<Clocks>(Clocks::kThermal)},
      {{"hot-no-throttle",
        "GPU 0 at 84-85 C, no throttle reason, clocks at max",
        1,
        {},
        {"thermal-throttling"}},
       make<Clocks>(Clocks::kHotNoThrottle)},
      {{"power-brake",
        "GPU 0: hw_slowdown + hw_power_brake_slowdown from 30% to 60% of the "
        "trace, SM ~600 MHz",
        1,
        {"power-brake"},
        {}},
       make<Clocks>(Clocks::kPowerBrake)},
      {{"power-cap",
        "GPU 0: sw_power_cap at 400 W holds SM at ~1100 of 1410 MHz",
        1,
        {"power-capping"},
        {}},
       make<Clocks>(Clocks::kPowerCap)},
      {{"power-cap-near-max",
        "GPU 0: sw_power_cap active but SM at 1395 of 1410 MHz",
        1,
        {},
        {"power-capping"}},
       make<Clocks>(Clocks::kPowerCapNearMax)},
      {{"pcie-degraded",
        "GPU 0 runs PCIe gen 3 x8 (max gen 4 x16) under load",
        1,
        {"pcie-link-degraded"},
        {}},
       make<Pcie>(true)},
      {{"pcie-idle-downtrain",
        "the last GPU is idle and down-trained to gen 1 (power saving)",
        1,
        {},
        {"pcie-link-degraded"}},
       make<Pcie>(false)},
      {{"ecc-sbe-only",
        "GPU 0's correctable (SBE) count grows ~1/min; no DBE",
        1,
        {},
        {"ecc-uncorrectable", "ecc-reset-required", "xid-error"}},
       make<Ecc>(false)},
      {{"ecc-dbe",
        "GPU 0: 2 DBEs (Xid 48) half-way, then retired pages and row remapping "
        "pending",
        1,
        {"ecc-uncorrectable", "ecc-reset-required", "xid-error"},
        {}},
       make<Ecc>(true)},
      {{"xid-events",
        "GPU 0: Xid 13 at 20%, Xid 31 at 40% (rank 0), Xid 119 at 70%",
        1,
        {"xid-error"},
        {}},
       make<Xids>()},
      {{"xid-remap-pending",
        "GPU 0: correctable errors only, then Xid 63 (row marked for "
        "remapping) half-way; remap pending",
        1,
        {"xid-error", "ecc-reset-required"},
        {"ecc-uncorrectable"}},
       make<RemapPending>()},
      {{"xid-gsp-several",
        "every GPU logs Xid 119 (GSP RPC timeout) at 60%: one driver, several "
        "GPUs",
        2,
        {"xid-error"},
        {"ecc-uncorrectable", "gpu-lost"}},
       make<GspTimeouts>()},
      {{"gpu-lost",
        "the last GPU falls off the bus (Xid 79) half-way; the other ranks "
        "stall at 0%",
        1,
        {"gpu-lost", "xid-error"},
        {"gpu-idle-allocated", "input-bound", "orphaned-memory",
         "gpu-imbalance", "memory-leak"}},
       make<GpuLost>()},
      {{"nvml-driver-mismatch",
        "NVML reports a driver/library version mismatch; no GPU data",
        1,
        {"nvml-driver-mismatch"},
        {}},
       make<HeaderOnly>(HeaderOnly::kDriverMismatch)},
      {{"persistence-off",
        "healthy job, persistence mode off on every GPU",
        1,
        {"persistence-mode-off"},
        {}},
       make<HeaderOnly>(HeaderOnly::kPersistenceOff)},
      {{"driver-cuda-mismatch",
        "rank 0 loads libcudart 12.4 on a driver that supports CUDA 12.2",
        1,
        {"driver-cuda-mismatch"},
        {}},
       make<HeaderOnly>(HeaderOnly::kCudaMismatch)},
      {{"host-oom-kill",
        "the kernel OOM-kills a loader worker at 60%",
        1,
        {"host-oom-kill"},
        {}},
       make<HeaderOnly>(HeaderOnly::kOomKill)},
      {{"missing-fields",
        "healthy job; ~30% of optional fields null, GPU 0 total memory and "
        "cpu_count unknown",
        1,
        {},
        all_ids()},
       make<MissingFields>()},
      {{"rows-remapping-growing",
        "GPU 0's memory wears out: correctable remapped rows 2 -> 6, one "
        "uncorrectable remap at 70%, a bank at low spare rows from 60%",
        1,
        {"memory-degrading"},
        {"recovery-action-required"}},
       make<RowsRemapping>(true)},
      {{"one-remap-pending",
        "GPU 0: one correctable row remap half-way, pending until a reset; "
        "639 of 640 banks with all spare rows",
        1,
        {"ecc-reset-required"},
        {"memory-degrading", "ecc-uncorrectable"}},
       make<RowsRemapping>(false)},
      {{"recovery-reset",
        "GPU 0's recovery action changes from None to GPU Reset Required "
        "half-way (Xid 154)",
        1,
        {"recovery-action-required", "xid-error"},
        {"memory-degrading"}},
       make<RecoveryActionScenario>(true)},
      {{"recovery-none-xid-13",
        "every GPU's recovery action stays None while GPU 0 logs Xid 13 "
        "half-way",
        1,
        {"xid-error"},
        {"recovery-action-required"}},
       make<RecoveryActionScenario>(false)},
      {{"thermal-outlier",
        "identical A100s under one job at ~95%: the last GPU runs 16 C above "
        "the others",
        2,
        {"thermal-outlier"},
        {"thermal-throttling"}},
       make<ThermalOutlier>(ThermalOutlier::kOutlier)},
      {{"thermal-mixed-models",
        "the last GPU is an H100 among A100s and runs 16 C above them",
        2,
        {},
        {"thermal-outlier"}},
       make<ThermalOutlier>(ThermalOutlier::kMixedModels)},
      {{"thermal-different-load",
        "the last GPU runs at ~95% and ~20 C above the others, which run "
        "at ~40%",
        2,
        {},
        {"thermal-outlier"}},
       make<ThermalOutlier>(ThermalOutlier::kDifferentLoad)},
      {{"transient-read-errors",
        "the last GPU's temperature and power read ERR! twice, one reading "
        "goes stale, and NVML says 'GPU is lost' for one sample, then it "
        "answers again",
        1,
        {},
        {"gpu-lost", "xid-error"}},
       make<TransientReadErrors>()},
      {{"gpu-missing",
        "the PCI bus lists a GPU at 0000:e1:00.0 bound to nvidia that NVML "
        "does not enumerate (RmInitAdapter failed)",
        1,
        {"gpu-missing"},
        {"gpu-lost", "pcie-aer-errors"}},
       make<PciEnumeration>(PciEnumeration::kMissing)},
      {{"gpu-vfio-passthrough",
        "the PCI bus lists a GPU at 0000:e1:00.0 bound to vfio-pci (passed "
        "through to a VM); NVML lists the others",
        1,
        {},
        {"gpu-missing"}},
       make<PciEnumeration>(PciEnumeration::kPassthrough)},
      {{"gpu-dropped",
        "the last GPU drops out of NVML's enumeration half-way (NVRM: fallen "
        "off the bus); it is not reported lost",
        1,
        {"gpu-missing"},
        {"pcie-aer-errors"}},
       make<PciEnumeration>(PciEnumeration::kDropped)},
      {{"pcie-aer-corrected-storm",
        "GPU 0's link logs a corrected PCIe AER error (physical layer) every "
        "~10 s",
        1,
        {"pcie-aer-errors"},
        {"gpu-missing"}},
       make<PcieAer>(PcieAer::kStorm)},
      {{"pcie-aer-fatal",
        "GPU 0's link logs one fatal uncorrected PCIe AER error half-way",
        1,
        {"pcie-aer-errors"},
        {}},
       make<PcieAer>(PcieAer::kFatal)},
      {{"pcie-aer-single",
        "GPU 0's link logs one corrected PCIe AER error half-way",
        1,
        {},
        {"pcie-aer-errors"}},
       make<PcieAer>(PcieAer::kSingle)},
      {{"dev-shm-small",
        "the job runs in a container with Docker's default 64 MiB /dev/shm "
        "and 4 loader workers per rank",
        1,
        {"dev-shm-small"},
        {}},
       make<DevShm>(64, true)},
      {{"dev-shm-ok",
        "the job runs in a container with a 16 GiB /dev/shm and 4 loader "
        "workers per rank",
        1,
        {},
        {"dev-shm-small"}},
       make<DevShm>(16384, true)},
      {{"dev-shm-no-workers",
        "the job runs in a container with a 64 MiB /dev/shm; the ranks load "
        "their own data (no workers)",
        1,
        {},
        {"dev-shm-small"}},
       make<DevShm>(64, false)},
  });
  return table;
}

const Entry* find_entry(std::string_view name) {
  for (const Entry& e : entries())
    if (e.info.name == name) return &e;
  return nullptr;
}

}  // namespace

const std::vector<ScenarioInfo>& scenarios() {
  static const std::vector<ScenarioInfo> infos = [] {
    std::vector<ScenarioInfo> v;
    for (const Entry& e : entries()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

const ScenarioInfo* find_scenario(std::string_view name) {
  for (const ScenarioInfo& s : scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

struct Generator::Impl {
  explicit Impl(const Options& o) : world(o) {}
  World world;
  std::unique_ptr<Scenario> scenario;
  size_t count = 0, next = 0;
};

Generator::Generator(std::string_view name, const Options& options) {
  const Entry* e = find_entry(name);
  if (!e)
    throw std::invalid_argument(
        fmt::format("unknown scenario '{}' (see --list)", name));
  if (options.gpus < e->info.min_gpus || options.gpus > 64)
    throw std::invalid_argument(
        fmt::format("scenario '{}' needs {} to 64 GPUs, got {}", name,
                    e->info.min_gpus, options.gpus));
  if (!(options.duration_s > 0) || !(options.interval_s > 0))
    throw std::invalid_argument("duration and interval must be positive");
  impl_ = std::make_unique<Impl>(options);
  impl_->scenario = e->make();
  impl_->scenario->setup(impl_->world);
  // duration / interval samples, the first at start_t: 24 h at 1 s = 86400.
  impl_->count = std::max<size_t>(
      1, static_cast<size_t>(
             std::floor(options.duration_s / options.interval_s + 1e-9)));
}

Generator::~Generator() = default;

const TraceHeader& Generator::header() const { return impl_->world.header; }
size_t Generator::sample_count() const { return impl_->count; }

bool Generator::next(Sample& out) {
  Impl& m = *impl_;
  if (m.next >= m.count) return false;
  Step st;
  st.i = m.next++;
  st.x = static_cast<double>(st.i) * m.world.opt.interval_s;
  st.t = m.world.opt.start_t + st.x;
  st.frac = st.x / m.world.opt.duration_s;
  m.scenario->step(m.world, st);
  m.world.end_step();
  out = m.world.s;
  m.scenario->post(m.world, out, st);
  return true;
}

std::vector<Sample> generate_all(std::string_view scenario,
                                 const Options& options, TraceHeader* header) {
  Generator gen(scenario, options);
  if (header) *header = gen.header();
  std::vector<Sample> out(gen.sample_count());
  for (Sample& s : out) gen.next(s);
  return out;
}

}  // namespace gd::tracegen
