// Datacenter GPUs: MIG-split A100s, NVLinked H100s, and Hopper's GPM
// activity; the scenarios behind nvlink-degraded and low-sm-efficiency and
// the look-alikes that must stay silent.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tracegen/scenario_base.h"

namespace gd::tracegen {
namespace {

// The GPU whose NVLink goes bad: the 4th of an 8-GPU node, else the last.
int bad_gpu(const World& w) { return std::min(3, last_gpu(w)); }
constexpr int kBadLink = 7;

// ---- MIG --------------------------------------------------------------------

// GPU 0 (an A100 80GB) split into 3g.40gb + 2 x 2g.20gb, one job on each
// instance (three users); any further GPUs run a DDP job.
struct MigA100 : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    w.enable_mig(0, {{1, "3g.40gb"}, {5, "2g.20gb"}, {6, "2g.20gb"}});
    const struct {
      uint32_t gi;
      const char* user;
      const char* script;
      uint32_t base_pid;
      double gib;
    } kJobs[] = {{1, "alice", "finetune.py", 8000, 30},
                 {5, "bob", "serve_llm.py", 8100, 12},
                 {6, "carol", "notebook_kernel.py", 8200, 6}};
    for (const auto& j : kJobs) {
      JobSpec spec;
      spec.gpus = {0};
      spec.workers_per_rank = 2;
      spec.base_pid = j.base_pid;
      spec.user = j.user;
      spec.script = j.script;
      spec.mem_fraction = 0;  // set per instance below
      TrainingJob job = w.add_training_job(spec);
      GpuProcess* p = w.gpu_proc(0, job.ranks[0]);
      p->used_bytes = static_cast<uint64_t>(j.gib * kGiB);
      p->gi_id = j.gi;
      p->ci_id = 0;
    }
    if (w.opt.gpus > 1) {
      std::vector<int> rest = all_gpus(w);
      rest.erase(rest.begin());
      JobSpec spec = default_job(w, rest);
      spec.base_pid = 9000;
      w.add_training_job(spec);
    }
  }
};

// ---- NVLink -----------------------------------------------------------------

// 8 (or --gpus) NVLinked H100s under one DDP job. kErrors: link 7 of GPU 3
// logs CRC errors and replays from a third of the way in; kDown: that link
// goes down; kFlat: the link carries old CRC errors that no longer grow;
// kIdle: no job, links up and idle.
struct NvlinkNode : Scenario {
  enum Kind { kErrors, kDown, kFlat, kIdle, kHealthy } kind;
  explicit NvlinkNode(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    for (int g : all_gpus(w)) w.make_h100(g);
    if (kind != kIdle) w.add_training_job(default_job(w, all_gpus(w)));
    if (kind == kFlat) {
      NvLink& l =
          (*w.s.gpus[static_cast<size_t>(bad_gpu(w))].nvlinks)[kBadLink];
      l.crc_errors_total = 48213;
      l.replay_total = 977;
      l.recovery_total = 3;
    }
  }
  void step(World& w, const Step& st) override {
    w.healthy_step(st);
    if (st.frac < 1.0 / 3) return;
    NvLink& l = (*w.s.gpus[static_cast<size_t>(bad_gpu(w))].nvlinks)[kBadLink];
    if (kind == kErrors) {
      // A marginal link: flit CRC errors every second, replays recovering
      // them, now and then a link recovery.
      *l.crc_errors_total += 40 + static_cast<uint64_t>(20 * w.rng.uniform());
      *l.replay_total += 4 + static_cast<uint64_t>(3 * w.rng.uniform());
      if (st.i % 60 == 0) *l.recovery_total += 1;
    } else if (kind == kDown) {
      l.active = false;
    }
  }
};

// ---- GPM activity
// -------------------------------------------------------------

// H100s at ~95% util. kBusy: the SMs are busy too (~85%); kLaunchBound: SMs
// active only ~20% (small kernels, launch/sync bound); kLowUtil: util ~30%
// with SMs ~10% (the GPU is simply not busy); kPlainFp32: GPU 0's job does
// its matmuls in FP32 (FP32 pipe ~60%, tensor cores idle); kFp64: GPU 0
// runs FP64 work (FP64 pipe ~70%, tensor cores idle, which is right).
struct HopperActivity : Scenario {
  enum Kind { kBusy, kLaunchBound, kLowUtil, kPlainFp32, kFp64 } kind;
  explicit HopperActivity(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    for (int g : all_gpus(w)) w.make_h100(g);
    w.add_training_job(default_job(w, all_gpus(w)));
  }
  void step(World& w, const Step& st) override {
    if (kind != kLowUtil) return w.healthy_step(st);
    w.begin_step(st);
    for (int g : all_gpus(w)) {
      w.gpu_activity(g, std::clamp(30 + 2 * w.rng.normal(), 0.0, 100.0));
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
  }
  void post(World& w, Sample& out, const Step&) override {
    if (kind == kPlainFp32 || kind == kFp64) {
      GpmActivity& a = out.gpus[0].gpm;
      const double fp = (kind == kPlainFp32 ? 58 : 14) + 4 * w.rng.uniform();
      a.fp32_active_pct = std::round(fp * 10) / 10;
      a.fp64_active_pct = kind == kFp64 ? 70.0 : 0.0;
      a.fp16_active_pct = 0.0;
      a.tensor_active_pct = std::round(0.4 * w.rng.uniform() * 10) / 10;
      return;
    }
    if (kind != kLaunchBound) return;
    // GPU 0 runs a job of tiny kernels: busy by "util", idle by the SMs.
    GpuSample& g = out.gpus[0];
    const double u = g.util_pct.value_or(95);
    g.gpm.sm_active_pct = std::round((19 + 2 * w.rng.uniform()) * 10) / 10;
    g.gpm.sm_occupancy_pct = 6.5;
    g.gpm.tensor_active_pct = 4.0;
    g.gpm.dram_active_pct = 9.0;
    g.gpm.gr_engine_active_pct = u;
    if (g.processes)
      for (GpuProcess& p : *g.processes) p.sm_util_pct = u;
  }
};

// A job on GPU 0 holding ~10% of its memory for the whole window. kSmall:
// at ~35% util (a batch far too small for the GPU); kComputeBound: at ~95%
// util with the SMs busy (compute-bound at that batch size: fine).
struct SmallFootprint : Scenario {
  enum Kind { kSmall, kComputeBound } kind;
  explicit SmallFootprint(Kind k) : kind(k) {}
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    for (int g : all_gpus(w)) w.make_h100(g);
    JobSpec spec = default_job(w, {0});
    spec.mem_fraction = 0.1;
    w.add_training_job(spec);
  }
  void step(World& w, const Step& st) override {
    if (kind == kComputeBound) return w.healthy_step(st);
    w.begin_step(st);
    for (int g : all_gpus(w)) {
      w.gpu_activity(
          g, g == 0 ? std::clamp(35 + 2 * w.rng.normal(), 0.0, 100.0) : 0.0);
      w.gpu_memory(g);
    }
    w.jitter_cpu();
    w.host_baseline();
  }
};

// The largest datacenter node: H100s each split into 7 x 1g.10gb (GPU
// instance ids 7..13, as an H100 hands them out), a job on every instance,
// all 18 NVLinks of every GPU up, GPM per instance.
struct MigH100Full : Scenario {
  void setup(World& w) override {
    w.add_gpus(w.opt.gpus);
    uint32_t pid = 8000;
    for (int g : all_gpus(w)) {
      w.make_h100(g);
      std::vector<std::pair<uint32_t, std::string>> instances;
      for (uint32_t gi = 7; gi < 14; ++gi)
        instances.emplace_back(gi, "1g.10gb");
      w.enable_mig(g, instances);
      for (uint32_t gi = 7; gi < 14; ++gi, ++pid) {
        w.add_proc(make_proc(
            pid, 6900, "svc", "python",
            fmt::format("python serve_model.py --shard {}", pid - 8000), "S",
            40, 5, 24, 6ull << 30));
        w.put_on_gpu(g, pid, 7ull << 30);
        GpuProcess* p = w.gpu_proc(g, pid);
        p->gi_id = gi;
        p->ci_id = 0;
      }
    }
  }
};

}  // namespace

std::vector<Entry> with_datacenter_entries(std::vector<Entry> entries) {
  const std::vector<Entry> mine = {
      {{"mig-a100",
        "GPU 0 (A100 80GB) split into 3g.40gb + 2 x 2g.20gb with a job on "
        "each instance (alice, bob, carol); other GPUs run a DDP job",
        1,
        {},
        {"gpu-idle-allocated", "nvlink-degraded", "low-sm-efficiency",
         "orphaned-memory", "gpu-imbalance"}},
       make<MigA100>()},
      {{"nvlink-errors",
        "NVLinked H100s under a DDP job; from a third of the way in, link 7 "
        "of GPU 3 (or the last GPU) logs ~50 CRC errors and ~5 replays a "
        "second",
        2,
        {"nvlink-degraded"},
        {"low-sm-efficiency", "xid-error"}},
       make<NvlinkNode>(NvlinkNode::kErrors)},
      {{"nvlink-link-down",
        "NVLinked H100s under a DDP job; from a third of the way in, link 7 "
        "of GPU 3 (or the last GPU) is down while every other link is up",
        2,
        {"nvlink-degraded"},
        {"low-sm-efficiency"}},
       make<NvlinkNode>(NvlinkNode::kDown)},
      {{"nvlink-healthy",
        "NVLinked H100s under a DDP job, every link up, no link errors",
        2,
        {},
        {"nvlink-degraded", "low-sm-efficiency"}},
       make<NvlinkNode>(NvlinkNode::kHealthy)},
      {{"nvlink-old-errors",
        "NVLinked H100s; link 7 of GPU 3 carries 48213 CRC errors from "
        "before the trace, and no new ones",
        2,
        {},
        {"nvlink-degraded"}},
       make<NvlinkNode>(NvlinkNode::kFlat)},
      {{"nvlink-idle",
        "NVLinked H100s with no job: links up and idle",
        2,
        {},
        {"nvlink-degraded", "low-sm-efficiency"}},
       make<NvlinkNode>(NvlinkNode::kIdle)},
      {{"hopper-gpm",
        "H100s at ~95% util whose SMs are ~85% active (GPM): a busy GPU",
        1,
        {},
        {"low-sm-efficiency", "nvlink-degraded", "tensor-cores-unused",
         "memory-underused"}},
       make<HopperActivity>(HopperActivity::kBusy)},
      {{"low-sm-efficiency",
        "H100s at ~95% util; on GPU 0 the SMs are active only ~20% of the "
        "time (GPM): tiny kernels, launch- or sync-bound",
        1,
        {"low-sm-efficiency"},
        {"nvlink-degraded", "input-bound"}},
       make<HopperActivity>(HopperActivity::kLaunchBound)},
      {{"mig-h100-full",
        "every GPU an H100 split into 7 x 1g.10gb with a job on each "
        "instance, 18 NVLinks up, GPM per instance (the benchmarks' node)",
        1,
        {},
        {"nvlink-degraded", "low-sm-efficiency", "orphaned-memory"}},
       make<MigH100Full>()},
      {{"low-sm-low-util",
        "H100s at ~30% util with SMs ~10% active: not busy, not inefficient",
        1,
        {},
        {"low-sm-efficiency", "tensor-cores-unused"}},
       make<HopperActivity>(HopperActivity::kLowUtil)},
      {{"plain-fp32",
        "H100s at ~95% util; GPU 0's job runs its matmuls in FP32: FP32 "
        "pipe ~60%, tensor cores ~0% (GPM)",
        1,
        {"tensor-cores-unused"},
        {"low-sm-efficiency", "memory-underused"}},
       make<HopperActivity>(HopperActivity::kPlainFp32)},
      {{"fp64-work",
        "H100s at ~95% util; GPU 0 runs FP64 work: FP64 pipe ~70%, FP32 "
        "~15%, tensor cores ~0%",
        1,
        {},
        {"tensor-cores-unused", "low-sm-efficiency"}},
       make<HopperActivity>(HopperActivity::kFp64)},
      {{"small-batch",
        "a job holds GPU 0 (H100) for the whole window with ~10% of its "
        "memory at ~35% util: a batch far too small for the GPU",
        1,
        {"memory-underused"},
        {"gpu-idle-allocated", "low-sm-efficiency", "tensor-cores-unused"}},
       make<SmallFootprint>(SmallFootprint::kSmall)},
      {{"small-footprint-compute-bound",
        "a job holds GPU 0 (H100) with ~10% of its memory at ~95% util, SMs "
        "busy: compute-bound at its batch size",
        1,
        {},
        {"memory-underused", "tensor-cores-unused"}},
       make<SmallFootprint>(SmallFootprint::kComputeBound)},
  };
  entries.insert(entries.end(), mine.begin(), mine.end());
  return with_fabric_entries(std::move(entries));
}

}  // namespace gd::tracegen
