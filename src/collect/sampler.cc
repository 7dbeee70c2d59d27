#include "collect/sampler.h"

#include <algorithm>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "collect/device_holder_watch.h"
#include "collect/pod_join.h"
#include "common/phase_timing.h"
#include "kernellog/kernel_log.h"
#include "nvml/gpu_source.h"
#include "pods/pod_directory.h"
#include "procfs/cpu_stat.h"
#include "procfs/host_source.h"
#include "procfs/nvidia_version.h"
#include "procfs/pci_gpus.h"
#include "procfs/rdma_ports.h"

namespace gd {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

struct Sampler::Impl {
  using Clock = std::chrono::steady_clock;

  // NVML is loaded (dlopen + nvmlInit, ~11 ms on an H200: the driver loads
  // libcuda then) and its static facts are read on a thread of their own,
  // bounded by GpuSource's init deadline, while this thread reads the host,
  // the PCI bus and opens the kernel log. The host's first reading is taken
  // first: a one-shot command's rate window runs while NVML initialises.
  explicit Impl(const SamplerOptions& o)
      : scontrol(o.scontrol),
        host(o.proc_root, o.sys_root),
        rdma(o.sys_root),
        holders(o.proc_root, o.dev_prefix) {
    auto loading = std::async(std::launch::async, [&o] {
      return std::make_unique<GpuSource>(gpu_options(o));
    });
    start_pods();
    host_read_at = read_host();
    header.host = host.host_info();
    if (!o.hostname.empty()) header.host.hostname = o.hostname;
    header.host.rdma_devices = rdma.devices();
    auto pci_devices = procfs::scan_pci_gpus(o.sys_root);
    auto module_version =
        procfs::read_nvidia_kernel_module_version(o.proc_root);
    if (!o.kmsg_path.empty() && o.kmsg_path != "none")
      kmsg = std::make_unique<KernelLogSource>(o.kmsg_path, o.kmsg_from_start);
    if (kmsg && o.kmsg_since > 0) skip_log_before(o);
    header.kernel_log_error = !kmsg        ? "not read (--kmsg none)"
                              : kmsg->ok() ? ""
                                           : kmsg->error();
    note_phase("sampler: host read, waiting for NVML");
    gpu = loading.get();
    note_phase("sampler: NVML and static facts in");
    header.nvml_status = gpu->status();
    header.nvml_error = gpu->error();
    header.driver = gpu->driver();
    if (!header.driver && !gpu->library_version().empty())  // NVML failed
      header.driver.emplace().library_version = gpu->library_version();
    header.gpus = gpu->gpus();
    pci = PciIndex(header.gpus);
    add_pci_facts(std::move(pci_devices), std::move(module_version));
  }

  // The pods are read on the directory's worker from now on; a host
  // without the kubelet's or the runtime's socket starts nothing.
  void start_pods() {
    auto sockets = pods::find_pod_sockets();
    if (sockets.any())
      pod_directory = std::make_unique<pods::PodDirectory>(std::move(sockets));
  }

  // Fills the processes' pods from the latest reading, waiting for the
  // first one until `until` (now: no wait).
  void attach_pod_names(Sample& s, Clock::time_point until) {
    std::shared_ptr<const pods::PodSnapshot> snapshot;
    if (pod_directory)
      snapshot = (until > Clock::now() ? pod_directory->first(until)
                                       : pod_directory->latest())
                     .snapshot;
    attach_pods(s.processes, snapshot.get());
    s.pod_allocations = gpu_allocations(snapshot.get(), header.gpus, s.gpus);
  }

  // The log stamps lines in seconds since boot: --since counts from the
  // boot time of /proc/stat (unknown: every line is kept).
  void skip_log_before(const SamplerOptions& o) {
    std::ifstream f(o.proc_root + "/stat");
    std::stringstream text;
    text << f.rdbuf();
    auto btime = procfs::parse_proc_stat(text.str()).btime;
    if (btime)
      kmsg->skip_before_uptime(o.kmsg_since - static_cast<double>(*btime));
  }

  static GpuSource::Options gpu_options(const SamplerOptions& o) {
    GpuSource::Options g;
    g.lib_path = o.nvml_lib;
    g.deadline = o.deadline;
    g.slow_read_interval = o.slow_read_interval;
    g.sysfs_root = o.sys_root;  // numa_node of each GPU's PCI device
    return g;
  }

  // Read once at start: the NVIDIA GPUs the PCI bus lists (with the port
  // above each, whose AER lines are about the GPU's link) and the loaded
  // kernel module's version; both are there even when NVML cannot start.
  void add_pci_facts(std::optional<std::vector<procfs::PciGpuDevice>> devices,
                     std::optional<std::string> module_version) {
    if (devices) {
      header.pci_gpus.emplace();
      for (auto& d : *devices) {
        pci.add_pci_gpu(d.gpu.address);
        if (!d.upstream_port.empty())
          pci.add_port(d.upstream_port, d.gpu.address);
        header.pci_gpus->push_back(std::move(d.gpu));
      }
    }
    if (module_version) {
      if (!header.driver) header.driver.emplace();
      header.driver->kernel_module_version = *module_version;
    }
  }

  // The processes of interest are the ones NVML lists on any GPU; the host
  // source adds their descendants (data-loader workers).
  static std::vector<uint32_t> gpu_pids(const std::vector<GpuSample>& gpus) {
    std::set<uint32_t> pids;
    for (const auto& g : gpus)
      if (g.processes)
        for (const auto& p : *g.processes) pids.insert(p.pid);
    return {pids.begin(), pids.end()};
  }

  // The GPU processes, and the holders of device files of memory whose
  // owner is gone (device_holder_watch.h): a trace names them too.
  std::vector<uint32_t> pids_of_interest(Sample& s) {
    std::vector<uint32_t> pids = gpu_pids(s.gpus);
    holder_pids = holders.attach(s, s.t);
    for (uint32_t pid : holder_pids)
      if (!std::binary_search(pids.begin(), pids.end(), pid))
        pids.insert(std::upper_bound(pids.begin(), pids.end(), pid), pid);
    return pids;
  }

  // For a one-shot caller that shows no device holders: the holders that
  // pids_of_interest() would add change only which busy processes count
  // as other work (a carried holder, its descendants and ancestors join the
  // GPU jobs). The full scan runs when that can happen: orphaned memory
  // and an unlisted CUDA holder among the busy processes and their
  // relatives; then its holders join `pids`, as in sample().
  void carry_holders_that_matter(Sample& s, std::vector<uint32_t>& pids) {
    if (!holders.memory_orphaned(s.gpus)) return;
    if (!holders.any_unlisted_cuda_holder(s, host.other_cpu_busy_families()))
      return;
    holder_pids = holders.attach(s, s.t);
    s.device_holders.reset();  // not shown
    if (holder_pids.empty()) return;
    for (uint32_t pid : holder_pids)
      if (!std::binary_search(pids.begin(), pids.end(), pid))
        pids.insert(std::upper_bound(pids.begin(), pids.end(), pid), pid);
    s.processes = host.processes(pids, s.t);
  }

  // A holder that exited before its entry was read is simply gone: only a
  // pid NVML lists is reported "missing".
  void drop_vanished_holders(Sample& s) const {
    if (holder_pids.empty()) return;
    const auto listed = gpu_pids(s.gpus);
    std::erase_if(s.processes, [&](const ProcessSample& p) {
      return p.state == "missing" &&
             !std::binary_search(listed.begin(), listed.end(), p.pid);
    });
  }

  void poll_kernel_log(Sample& s) {
    if (!kmsg || !kmsg->ok()) return;
    auto ev = kmsg->poll(pci);
    s.host.kernel_lines_unclassified_total = kmsg->unclassified_total();
    s.events.insert(s.events.end(), std::make_move_iterator(ev.begin()),
                    std::make_move_iterator(ev.end()));
  }

  Clock::time_point read_host() {
    host.sample(unix_now());
    read_rdma(rdma_scratch);
    return Clock::now();
  }

  // The RDMA ports (none: the field stays unset, nothing is said).
  void read_rdma(opt<std::vector<RdmaPort>>& out) {
    if (rdma.port_count() == 0) return;
    if (!out) out.emplace();
    rdma.sample(unix_now(), *out);
  }

  // Asks for the names of the jobs of `procs` (not waiting).
  void ask_job_names(const std::vector<ProcessSample>& procs) {
    if (scontrol.empty()) return;
    for (const ProcessSample& p : procs) {
      if (!p.slurm_job_id) continue;
      if (!job_names) job_names = std::make_unique<slurm::JobNames>(scontrol);
      job_names->lookup(*p.slurm_job_id);
    }
  }

  // Fills s.slurm_jobs with the names known by `until` (now: no wait).
  void attach_job_names(Sample& s, Clock::time_point until) {
    s.slurm_jobs.clear();
    if (scontrol.empty()) return;
    std::vector<std::string> ids;
    for (const ProcessSample& p : s.processes)
      if (p.slurm_job_id &&
          std::find(ids.begin(), ids.end(), *p.slurm_job_id) == ids.end() &&
          ids.size() < kSlurmJobsMax)
        ids.push_back(*p.slurm_job_id);
    if (ids.empty()) return;
    if (!job_names) job_names = std::make_unique<slurm::JobNames>(scontrol);
    for (const auto& id : ids) job_names->lookup(id);
    if (until > Clock::now()) job_names->wait(ids, until);
    for (const auto& id : ids)
      if (auto j = job_names->lookup(id)) s.slurm_jobs.push_back(std::move(*j));
  }

  std::string scontrol;
  std::unique_ptr<slurm::JobNames> job_names;         // at the first job id
  std::unique_ptr<pods::PodDirectory> pod_directory;  // on Kubernetes
  HostSource host;
  procfs::RdmaPortReader rdma;
  opt<std::vector<RdmaPort>> rdma_scratch;  // the constructor's reading
  Clock::time_point host_read_at;           // of the last host reading
  std::unique_ptr<GpuSource> gpu;           // set by the constructor
  std::unique_ptr<KernelLogSource> kmsg;
  DeviceHolderWatch holders;
  std::vector<uint32_t> holder_pids;  // of the current sample
  PciIndex pci;
  TraceHeader header;
};

Sampler::Sampler(const SamplerOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
Sampler::~Sampler() = default;

const TraceHeader& Sampler::header() const { return impl_->header; }

Sample Sampler::sample(std::vector<ProcessSample> spent) {
  Sample s;
  s.gpus = impl_->gpu->sample(s.events);
  s.t = unix_now();
  s.host = impl_->host.sample(s.t);
  impl_->read_rdma(s.host.rdma_ports);
  impl_->host_read_at = Impl::Clock::now();
  s.processes =
      impl_->host.processes(impl_->pids_of_interest(s), s.t, std::move(spent));
  impl_->drop_vanished_holders(s);
  s.host.other_cpu_top = impl_->host.other_cpu_top();
  impl_->poll_kernel_log(s);
  impl_->attach_job_names(s, Impl::Clock::time_point{});
  impl_->attach_pod_names(s, Impl::Clock::time_point{});
  return s;
}

void Sampler::name_jobs(Sample& s, std::chrono::milliseconds wait) {
  const auto until = Impl::Clock::now() + wait;
  impl_->attach_job_names(s, until);
  impl_->attach_pod_names(s, until);
}

Sample Sampler::sample_once(std::chrono::milliseconds window,
                            OneShotShows shows) {
  using Clock = Impl::Clock;
  // The host's first reading is the last one taken (at the latest, when
  // the Sampler was built, while NVML was loading). The GPUs are read on a
  // thread of their own (each GPU on its worker, within the deadline; the
  // PCIe counters alone block 21 ms on an H200) while this one takes the
  // first reading of the processes NVML listed with the static facts.
  Sample s;
  auto reading = std::async(std::launch::async, [this] {
    std::vector<Event> events;
    auto gpus = impl_->gpu->sample(events);
    return std::make_pair(std::move(gpus), std::move(events));
  });
  const std::vector<uint32_t>& listed = impl_->gpu->initial_pids();
  auto procs_first = Clock::now();
  impl_->ask_job_names(impl_->host.processes(listed, unix_now()));
  note_phase("sample_once: processes' first reading");
  std::tie(s.gpus, s.events) = reading.get();
  note_phase("sample_once: GPUs read");
  s.t = unix_now();
  const bool holders_shown = shows == OneShotShows::kEverything;
  auto pids =
      holders_shown ? impl_->pids_of_interest(s) : Impl::gpu_pids(s.gpus);
  if (!holders_shown) impl_->holder_pids.clear();
  if (!std::includes(listed.begin(), listed.end(), pids.begin(), pids.end())) {
    // A GPU process that started since the static facts (or a holder of
    // a dead owner's device files): its first reading comes now, and it
    // gets two thirds of a window of its own.
    procs_first = Clock::now();
    impl_->host.processes(pids, unix_now());
  }
  std::this_thread::sleep_until(
      std::max(impl_->host_read_at + window, procs_first + window * 2 / 3));
  note_phase("sample_once: rate window over");
  s.t = unix_now();
  s.host = impl_->host.sample(s.t);
  impl_->read_rdma(s.host.rdma_ports);
  impl_->host_read_at = Clock::now();
  note_phase("sample_once: host read");
  s.processes = impl_->host.processes(pids, s.t);
  if (!holders_shown) impl_->carry_holders_that_matter(s, pids);
  impl_->drop_vanished_holders(s);
  note_phase("sample_once: processes read");
  s.host.other_cpu_top = impl_->host.other_cpu_top();
  note_phase("sample_once: other work ranked");
  impl_->poll_kernel_log(s);
  impl_->attach_job_names(s, procs_first + kOneShotNamesWait);
  impl_->attach_pod_names(s, procs_first + kOneShotNamesWait);
  note_phase("sample_once: done");
  return s;
}

}  // namespace gd
