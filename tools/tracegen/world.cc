#include "tracegen/world.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace gd::tracegen {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// PCI bus numbers of the 8 GPUs of a DGX A100 (facts, for realism).
constexpr const char* kBus[] = {"07", "0F", "47", "4E", "87", "90", "B7", "BD"};

constexpr uint64_t kA100Bytes = 85899345920ull;  // 80 GiB

// What nvidia-smi -q shows on a healthy A100-SXM4-80GB: BAR1 total, the
// memory the driver reserves, banks of the row remapper (all with their
// spare rows), the maximum operating temperatures and a VBIOS.
constexpr uint64_t kA100Bar1Bytes = 128ull << 30;
constexpr uint64_t kA100ReservedBytes = 519ull << 20;
constexpr uint32_t kA100RemapBanks = 640;
constexpr int kA100MaxOperatingC = 85, kA100MemMaxC = 95;
constexpr const char* kA100Vbios = "92.00.45.00.06";
// BAR1 the driver maps for itself, and per CUDA context.
constexpr uint64_t kBar1BaseBytes = 2ull << 20,
                   kBar1PerProcessBytes = 4ull << 20;

// An H100 SXM5 80GB as nvidia-smi -q shows it.
constexpr uint64_t kH100Bytes = 85520809984ull;  // 81559 MiB
constexpr int kH100NvLinks = 18;
// NVLink traffic of a DDP job's all-reduce at full utilisation (of the
// 450 GB/s each way an H100's 18 links carry).
constexpr double kNvlinkBytesPerSAtFullUtil = 120e9;
// Per instance the driver keeps a little memory of its own.
constexpr uint64_t kMigInstanceReserveBytes = 36ull << 20;

double tenth(double v) { return std::round(v * 10) / 10; }

// GPM activity of a training job that keeps the GPU busy `u` percent of the
// time: SMs active a little less than "util", tensor cores half of it.
GpmActivity gpm_of(double u) {
  GpmActivity a;
  a.sm_active_pct = tenth(0.9 * u);
  a.sm_occupancy_pct = tenth(0.45 * u);
  a.tensor_active_pct = tenth(0.55 * u);
  a.dram_active_pct = tenth(0.5 * u);
  a.fp64_active_pct = 0.0;
  a.fp32_active_pct = tenth(0.12 * u);
  a.fp16_active_pct = tenth(0.35 * u);
  a.gr_engine_active_pct = tenth(u);
  return a;
}

}  // namespace

Rng::Rng(uint64_t seed) {
  for (uint64_t& v : s_) v = splitmix64(seed);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

World::World(const Options& options) : opt(options), rng(options.seed) {
  header.version = 1;
  header.host.hostname = "node07";
  header.host.kernel = "5.15.0-91-generic";
  header.host.cpu_model = "AMD EPYC 7763 64-Core Processor";
  header.host.cpu_count = 128;
  header.host.mem_total_bytes = 1024ull << 30;
  header.host.swap_total_bytes = 0;
  header.host.pid_namespace = "host";
  header.nvml_status = kNvmlOk;
  // Kernel module and library of one release: no mismatch.
  header.driver = DriverInfo{"535.129.03", "12.2", "12.535.129.03",
                             "535.129.03", "535.129.03"};
  s.host = HostSample{};
}

void World::add_gpus(int n) {
  for (int i = 0; i < n; ++i) {
    GpuInfo g;
    g.index = i;
    uint64_t h = 0x5f0f0000ull + static_cast<uint64_t>(i) * 7919 + opt.seed;
    g.uuid = fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                         static_cast<uint32_t>(splitmix64(h)), i, 0x4a1c,
                         0x9e37, splitmix64(h) & 0xffffffffffffull);
    g.name = "NVIDIA A100-SXM4-80GB";
    g.pci_bus_id = fmt::format("00000000:{}:00.0", kBus[i % 8]);
    g.serial = fmt::format("15621210{:05d}", 1000 + i);
    g.memory_total_bytes = kA100Bytes;
    g.power_limit_w = 400.0;
    g.power_default_limit_w = 400.0;
    g.pcie_max_gen = 4;
    g.pcie_max_width = 16;
    g.temp_slowdown_c = 89;
    g.temp_shutdown_c = 92;
    g.sm_clock_max_mhz = 1410;
    g.mem_clock_max_mhz = 1593;
    g.compute_capability = "8.0";
    g.architecture = "ampere";
    g.ecc_enabled = true;
    g.mig_enabled = false;
    g.persistence_mode = true;
    g.compute_mode = "default";
    g.numa_node = i < 4 ? 3 : 7;
    g.minor_number = i;
    g.temp_max_operating_c = kA100MaxOperatingC;
    g.temp_mem_max_c = kA100MemMaxC;
    g.bar1_total_bytes = kA100Bar1Bytes;
    g.vbios_version = kA100Vbios;
    // Every GPU NVML lists is on the PCI bus, bound to nvidia.
    if (!header.pci_gpus) header.pci_gpus.emplace();
    header.pci_gpus->push_back(
        PciGpu{fmt::format("0000:{}:00.0", kBus[i % 8]), "nvidia"});
    header.gpus.push_back(g);

    GpuSample gs;
    gs.index = i;
    gs.processes.emplace();
    gs.clock_event_reasons.emplace();
    gs.pcie_replay_total = 0;
    gs.ecc_sbe_volatile_total = 0;
    gs.ecc_dbe_volatile_total = 0;
    gs.retired_pages_pending = false;
    gs.remapped_rows_pending = false;
    gs.remapped_rows_failure = false;
    // A healthy board: no lifetime ECC errors anywhere, nothing remapped,
    // every bank with all its spare rows, no recovery action.
    gs.ecc_sbe_aggregate_total = 0;
    gs.ecc_dbe_aggregate_total = 0;
    gs.ecc_sram_correctable_aggregate_total = 0;
    gs.ecc_sram_uncorrectable_aggregate_total = 0;
    gs.ecc_dram_correctable_aggregate_total = 0;
    gs.ecc_dram_uncorrectable_aggregate_total = 0;
    gs.ecc_sram_correctable_volatile_total = 0;
    gs.ecc_sram_uncorrectable_volatile_total = 0;
    gs.ecc_dram_correctable_volatile_total = 0;
    gs.ecc_dram_uncorrectable_volatile_total = 0;
    gs.ecc_sram_threshold_exceeded = false;
    gs.remapped_rows_correctable_total = 0;
    gs.remapped_rows_uncorrectable_total = 0;
    gs.row_remap_histogram = RowRemapHistogram{kA100RemapBanks, 0, 0, 0, 0};
    gs.recovery_action = kRecoveryNone;
    gs.mem_reserved_bytes = kA100ReservedBytes;
    gs.bar1_used_bytes = kBar1BaseBytes;
    s.gpus.push_back(gs);
    thermal_.emplace_back();
    thermal_.back().energy_mj = 9.1e8 + i * 1.3e7;
  }
}

size_t World::add_proc(const ProcSpec& spec) {
  ProcessSample p;
  p.pid = spec.pid;
  p.ppid = spec.ppid;
  p.user = spec.user;
  p.name = spec.name;
  p.cmdline = spec.cmdline;
  p.state = spec.state;
  p.cpu_pct = spec.cpu;
  p.threads = spec.threads;
  p.rss_bytes = spec.rss;
  p.cgroup = std::nullopt;
  p.libs = spec.libs;
  p.start_time = opt.start_t - 3600;
  s.processes.push_back(std::move(p));
  cpu_mean_.push_back(spec.cpu);
  cpu_noise_.push_back(spec.cpu_noise);
  return s.processes.size() - 1;
}

ProcessSample* World::proc(uint32_t pid) {
  for (ProcessSample& p : s.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

void World::set_cpu(uint32_t pid, double mean, double noise) {
  for (size_t i = 0; i < s.processes.size(); ++i)
    if (s.processes[i].pid == pid) cpu_mean_[i] = mean, cpu_noise_[i] = noise;
}

void World::put_on_gpu(int g, uint32_t pid, uint64_t bytes, const char* type) {
  GpuProcess gp;
  gp.pid = pid;
  gp.used_bytes = bytes;
  gp.type = type;
  s.gpus.at(g).processes->push_back(gp);
  // A process on the host sees the host's /dev/shm: tmpfs defaults to half
  // of the memory (a container's 64 MiB default is what dev-shm-small is
  // about; scenarios set that themselves).
  if (ProcessSample* p = proc(pid); p && !p->dev_shm_bytes)
    p->dev_shm_bytes = header.host.mem_total_bytes.value_or(1024ull << 30) / 2;
}

GpuProcess* World::gpu_proc(int g, uint32_t pid) {
  auto& list = s.gpus.at(g).processes;
  if (!list) return nullptr;
  for (GpuProcess& p : *list)
    if (p.pid == pid) return &p;
  return nullptr;
}

uint64_t World::gpu_total(int g) const {
  return header.gpus.at(g).memory_total_bytes.value_or(kA100Bytes);
}

uint32_t World::add_launcher(const JobSpec& spec, uint32_t pid,
                             uint32_t& next_pid) {
  size_t n = spec.gpus.size();
  auto launcher = [&](uint32_t p, uint32_t ppid, std::string name,
                      std::string cmdline) {
    if (!spec.launcher_visible) return;
    add_proc(make_proc(p, ppid, spec.user, std::move(name), std::move(cmdline),
                       "S", 0.3, 0.1, 4, 300ull << 20));
  };
  const std::string& kind = spec.launcher_kind;
  if (kind == "torchrun") {
    launcher(
        pid, spec.parent_pid, "torchrun",
        fmt::format(
            "/usr/bin/python3 /usr/local/bin/torchrun --nproc_per_node={} {}",
            n, spec.script));
  } else if (kind == "mpirun") {
    launcher(
        pid, spec.parent_pid, "mpirun",
        fmt::format("mpirun -np {} --bind-to none python {}", n, spec.script));
  } else if (kind == "deepspeed") {
    // deepspeed (console script) -> python -m deepspeed.launcher.launch ->
    // ranks.
    launcher(pid, spec.parent_pid, "deepspeed",
             fmt::format(
                 "/usr/bin/python3 /usr/local/bin/deepspeed --num_gpus={} {}",
                 n, spec.script));
    uint32_t inner = next_pid++;
    launcher(
        inner, pid, "python3",
        fmt::format(
            "/usr/bin/python3 -u -m deepspeed.launcher.launch "
            "--world_info=eyJsb2NhbGhvc3QiOiBbMF19 --master_addr=127.0.0.1 "
            "--master_port=29500 {}",
            spec.script));
    return inner;
  } else if (kind == "accelerate") {
    launcher(
        pid, spec.parent_pid, "accelerate",
        fmt::format(
            "/usr/bin/python3 /usr/local/bin/accelerate launch --multi_gpu "
            "--num_processes {} {}",
            n, spec.script));
  } else if (kind == "srun") {
    // On the compute node Slurm's step daemon forks the tasks.
    launcher(pid, 1, "slurmstepd", fmt::format("slurmstepd: [{}.0]", 4242));
  } else {
    throw std::invalid_argument("unknown launcher kind '" + kind + "'");
  }
  return pid;
}

TrainingJob World::add_training_job(const JobSpec& spec) {
  TrainingJob job;
  bool multi = spec.gpus.size() > 1 && spec.launcher;
  uint32_t next_pid = spec.base_pid;
  uint32_t rank_parent = spec.parent_pid;
  const std::vector<std::string> libs = {
      "libcudart.so.12.1.105", "libcublas.so.12.1.3.1", "libcudnn.so.8.9.2",
      "libnccl.so.2.18.3"};
  if (multi) {
    job.launcher = next_pid++;
    rank_parent = add_launcher(spec, job.launcher, next_pid);
  }
  int ranks = static_cast<int>(spec.gpus.size());
  int total_workers = spec.workers_per_rank * ranks;
  if (spec.workers_per_rank < 0)
    total_workers = std::max(0, opt.processes - ranks - (multi ? 1 : 0));
  for (int r = 0; r < ranks; ++r) {
    uint32_t pid = next_pid++;
    job.ranks.push_back(pid);
    ProcSpec rank =
        make_proc(pid, rank_parent, spec.user, "python",
                  multi ? fmt::format("/usr/bin/python3 -u {} --local_rank={}",
                                      spec.script, r)
                        : fmt::format("python {} --bs 256", spec.script),
                  "R", spec.main_cpu, 3, 37, 20ull << 30);
    rank.libs = libs;
    add_proc(rank);
    int g = spec.gpus[r];
    put_on_gpu(g, pid,
               static_cast<uint64_t>(spec.mem_fraction *
                                     static_cast<double>(gpu_total(g))));
  }
  job.workers.resize(ranks);
  for (int w = 0; w < total_workers; ++w) {
    int r = w % ranks;
    uint32_t pid = next_pid++;
    job.workers[r].push_back(pid);
    add_proc(make_proc(pid, job.ranks[r], spec.user, "pt_data_worker",
                       proc(job.ranks[r])->cmdline, "S", spec.worker_cpu, 4, 1,
                       2ull << 30));
  }
  return job;
}

void World::begin_step(const Step& st) {
  s.t = st.t;
  s.events.clear();
}

void World::gpu_activity(int g, double util) {
  GpuSample& gs = s.gpus.at(g);
  if (gs.lost) return;
  const GpuInfo& info = header.gpus.at(g);
  double u = std::round(std::clamp(util, 0.0, 100.0));
  bool idle = u < 1;
  gs.util_pct = u;
  gs.mem_util_pct = std::round(std::clamp(u * 0.55 + rng.normal(), 0.0, 100.0));
  Thermal& th = thermal_[g];
  double alpha = 1 - std::exp(-opt.interval_s / 30.0);  // ~30 s thermal lag
  th.temp += (34 + 0.38 * u - th.temp) * alpha;
  double limit = info.power_limit_w.value_or(400);
  double target_w = 58 + (limit * 0.85 - 58) * u / 100;
  th.power = std::round((target_w + 3 * rng.normal()) * 10) / 10;
  th.energy_mj += th.power * opt.interval_s * 1000;
  gs.temp_c = static_cast<int>(std::lround(th.temp + 0.4 * rng.normal()));
  gs.mem_temp_c = *gs.temp_c - 4;
  gs.power_w = th.power;
  gs.energy_mj_total = static_cast<uint64_t>(th.energy_mj);
  gs.fan_pct = std::nullopt;  // SXM boards have no fan
  gs.sm_clock_mhz = idle ? 210 : info.sm_clock_max_mhz.value_or(1410);
  gs.mem_clock_mhz = info.mem_clock_max_mhz.value_or(1593);
  gs.pstate = 0;
  gs.clock_event_reasons.emplace();
  if (idle) gs.clock_event_reasons->push_back("gpu_idle");
  gs.pcie_gen =
      idle ? 1 : info.pcie_max_gen.value_or(4);  // ASPM down-trains idle links
  gs.pcie_width = info.pcie_max_width.value_or(16);
  gs.pcie_rx_bytes_per_s = static_cast<uint64_t>(
      std::max(0.0, u / 100 * 5.4e9 * (1 + 0.1 * rng.normal())));
  gs.pcie_tx_bytes_per_s = static_cast<uint64_t>(
      std::max(0.0, u / 100 * 1.2e9 * (1 + 0.1 * rng.normal())));
  // Hopper and newer: what the SMs really did, and each process's share.
  // (No random draws here: scenarios of older GPUs keep their streams.)
  if (info.architecture == "hopper") {
    gs.gpm = gpm_of(u);
    if (gs.mig_instances)
      for (MigInstance& m : *gs.mig_instances) m.gpm = gpm_of(u);
    if (gs.processes && !info.mig_enabled.value_or(false)) {
      for (GpuProcess& p : *gs.processes) {
        p.sm_util_pct =
            tenth(0.9 * u / static_cast<double>(gs.processes->size()));
        p.mem_util_pct = *gs.mem_util_pct;
      }
    }
  }
  if (gs.nvlinks) {
    const double bytes = u / 100 * kNvlinkBytesPerSAtFullUtil;
    gs.nvlink_tx_bytes_per_s = static_cast<uint64_t>(bytes);
    gs.nvlink_rx_bytes_per_s = static_cast<uint64_t>(bytes);
  }
  // A MIG-enabled GPU has no utilisation of its own in NVML.
  if (info.mig_enabled.value_or(false)) {
    gs.util_pct.reset();
    gs.mem_util_pct.reset();
  }
}

void World::gpu_memory(int g) {
  GpuSample& gs = s.gpus.at(g);
  if (gs.lost) return;
  double used = driver_reserve_bytes;
  if (gs.processes)
    for (const GpuProcess& p : *gs.processes)
      used += static_cast<double>(p.used_bytes.value_or(0));
  gs.mem_used_bytes =
      static_cast<uint64_t>(std::min(used, static_cast<double>(gpu_total(g))));
  gs.bar1_used_bytes =
      kBar1BaseBytes +
      kBar1PerProcessBytes * (gs.processes ? gs.processes->size() : 0);
  if (gs.mig_instances) {
    for (MigInstance& m : *gs.mig_instances) {
      uint64_t mine = kMigInstanceReserveBytes;
      if (gs.processes)
        for (const GpuProcess& p : *gs.processes)
          if (p.gi_id == m.gi_id) mine += p.used_bytes.value_or(0);
      m.mem_used_bytes = std::min(mine, m.mem_total_bytes.value_or(mine));
    }
  }
}

void World::make_h100(int g) {
  GpuInfo& info = header.gpus.at(g);
  info.name = "NVIDIA H100 80GB HBM3";
  info.memory_total_bytes = kH100Bytes;
  info.power_limit_w = 700.0;
  info.power_default_limit_w = 700.0;
  info.pcie_max_gen = 5;
  info.sm_clock_max_mhz = 1980;
  info.mem_clock_max_mhz = 2619;
  info.temp_slowdown_c = 87;
  info.temp_shutdown_c = 90;
  info.compute_capability = "9.0";
  info.architecture = "hopper";
  info.vbios_version = "96.00.89.00.01";
  info.temp_max_operating_c = 87;
  info.nvlink_count = kH100NvLinks;
  GpuSample& gs = s.gpus.at(g);
  gs.nvlinks.emplace();
  for (int l = 0; l < kH100NvLinks; ++l) {
    NvLink link;
    link.link = l;
    link.active = true;
    link.version = 4;
    link.crc_errors_total = 0;
    link.replay_total = 0;
    link.recovery_total = 0;
    gs.nvlinks->push_back(link);
  }
  gs.fabric_state = kFabricCompleted;
  gs.enc_util_pct = 0.0;
  gs.dec_util_pct = 0.0;
}

void World::enable_mig(
    int g, const std::vector<std::pair<uint32_t, std::string>>& instances) {
  GpuInfo& info = header.gpus.at(g);
  info.mig_enabled = true;
  info.mig_enabled_pending = true;
  const double total = static_cast<double>(gpu_total(g));
  std::vector<MigInstance> list;
  for (const auto& [gi, profile] : instances) {
    MigInstance m;
    m.gi_id = gi;
    m.ci_id = 0;
    m.profile = profile;
    m.uuid = fmt::format(
        "MIG-{:08x}-{:04x}-5{:03x}-8{:03x}-{:012x}",
        0x7c0ffee0u + static_cast<unsigned>(g), gi, static_cast<unsigned>(g),
        gi, 0x1a2b3c4d5e00ull + gi + 16ull * static_cast<unsigned>(g));
    // "<slices>g.<GB>gb": the memory share is in the name (of 8 slices).
    unsigned gb = 0;
    if (auto dot = profile.find('.'); dot != std::string::npos)
      gb = static_cast<unsigned>(std::atoi(profile.c_str() + dot + 1));
    const double total_gb = std::round(total / kGiB);
    m.mem_total_bytes = static_cast<uint64_t>(
        total_gb > 0 ? total * gb / total_gb * 0.985 : 0);  // less reserve
    m.mem_used_bytes = kMigInstanceReserveBytes;
    list.push_back(std::move(m));
  }
  info.mig_profiles = list;
  for (MigInstance& m : *info.mig_profiles) m.mem_used_bytes.reset();
  s.gpus.at(g).mig_instances = std::move(list);
}

MigInstance* World::mig(int g, uint32_t gi) {
  auto& list = s.gpus.at(g).mig_instances;
  if (!list) return nullptr;
  for (MigInstance& m : *list)
    if (m.gi_id == gi) return &m;
  return nullptr;
}

void World::jitter_cpu() {
  for (size_t i = 0; i < s.processes.size(); ++i) {
    ProcessSample& p = s.processes[i];
    if (p.state == "Z" || p.state == "missing") {
      p.cpu_pct = p.state == "Z" ? std::optional<double>(0.0) : std::nullopt;
      continue;
    }
    double v = std::max(0.0, cpu_mean_[i] + cpu_noise_[i] * rng.normal());
    p.cpu_pct = std::round(v * 10) / 10;
  }
}

void World::host_baseline() {
  double cores = background_cores;
  uint64_t rss = 0;
  for (const ProcessSample& p : s.processes) {
    cores += p.cpu_pct.value_or(0) / 100;
    rss += p.rss_bytes.value_or(0);
  }
  int cpus = header.host.cpu_count.value_or(128);
  HostSample& h = s.host;
  h.cpu_util_pct =
      std::round(
          std::clamp(cores / cpus * 100 + 0.3 * rng.normal(), 0.0, 100.0) *
          10) /
      10;
  h.cpu_iowait_pct =
      std::round(std::max(0.0, 0.3 + 0.1 * rng.normal()) * 100) / 100;
  h.cpu_steal_pct = 0.0;
  h.load1 = std::round(std::max(0.0, cores + 0.5 * rng.normal()) * 100) / 100;
  uint64_t total = header.host.mem_total_bytes.value_or(1024ull << 30);
  uint64_t used = rss + (24ull << 30);
  h.mem_available_bytes = used < total ? total - used : 0;
  h.swap_used_bytes = 0;
  h.swap_in_pages_per_s = 0.0;
  h.swap_out_pages_per_s = 0.0;
  h.disk_read_bytes_per_s =
      static_cast<uint64_t>(std::max(0.0, 30e6 + 5e6 * rng.normal()));
  h.disk_write_bytes_per_s =
      static_cast<uint64_t>(std::max(0.0, 2e6 + 1e6 * rng.normal()));
  h.disk_busy_pct =
      std::round(std::clamp(4 + rng.normal(), 0.0, 100.0) * 10) / 10;
}

void World::healthy_step(const Step& st) {
  begin_step(st);
  for (size_t g = 0; g < s.gpus.size(); ++g) {
    const GpuSample& gs = s.gpus[g];
    bool used = gs.processes && !gs.processes->empty();
    gpu_activity(static_cast<int>(g), used ? busy_util() : 0);
    gpu_memory(static_cast<int>(g));
  }
  jitter_cpu();
  host_baseline();
}

void World::lose_gpu(int g) {
  GpuSample lost;
  lost.index = g;
  lost.lost = true;
  s.gpus.at(g) = lost;
}

void World::end_step() {
  for (GpuSample& gs : s.gpus) {
    if (gs.lost || gs.stale) continue;
    // By index, not position: a scenario may drop a GPU from the header
    // (it left enumeration) while its sample is still being built.
    const GpuInfo* info = nullptr;
    for (const GpuInfo& g : header.gpus)
      if (g.index == gs.index) info = &g;
    // nvidia-smi's T.Limit: degrees left before the slowdown temperature.
    if (info && gs.temp_c && info->temp_slowdown_c)
      gs.temp_limit_margin_c = *info->temp_slowdown_c - *gs.temp_c;
    else
      gs.temp_limit_margin_c.reset();
  }
}

}  // namespace gd::tracegen
