#include "collect/sampler.h"

#include <algorithm>
#include <set>
#include <thread>

#include "collect/device_holder_watch.h"
#include "kernellog/kernel_log.h"
#include "nvml/gpu_source.h"
#include "procfs/host_source.h"
#include "procfs/nvidia_version.h"
#include "procfs/pci_gpus.h"

namespace gd {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

struct Sampler::Impl {
  using Clock = std::chrono::steady_clock;

  // The host is read once before NVML is even loaded: a one-shot command's
  // rate window then runs while NVML initialises instead of after it.
  explicit Impl(const SamplerOptions& o)
      : host(o.proc_root, o.sys_root),
        host_read_at(read_host()),
        gpu(gpu_options(o)),
        holders(o.proc_root) {
    header.host = host.host_info();
    header.nvml_status = gpu.status();
    header.nvml_error = gpu.error();
    header.driver = gpu.driver();
    if (!header.driver && !gpu.library_version().empty())  // NVML failed
      header.driver.emplace().library_version = gpu.library_version();
    header.gpus = gpu.gpus();
    pci = PciIndex(header.gpus);
    read_pci_facts(o);
    if (!o.kmsg_path.empty() && o.kmsg_path != "none") {
      kmsg = std::make_unique<KernelLogSource>(o.kmsg_path, o.kmsg_from_start);
      if (!kmsg->ok()) kmsg_error = kmsg->error();
    } else {
      kmsg_error = "kernel log disabled";
    }
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
  void read_pci_facts(const SamplerOptions& o) {
    if (auto devices = procfs::scan_pci_gpus(o.sys_root)) {
      header.pci_gpus.emplace();
      for (auto& d : *devices) {
        pci.add_pci_gpu(d.gpu.address);
        if (!d.upstream_port.empty())
          pci.add_port(d.upstream_port, d.gpu.address);
        header.pci_gpus->push_back(std::move(d.gpu));
      }
    }
    if (auto v = procfs::read_nvidia_kernel_module_version(o.proc_root)) {
      if (!header.driver) header.driver.emplace();
      header.driver->kernel_module_version = *v;
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

  void poll_kernel_log(Sample& s) {
    if (!kmsg || !kmsg->ok()) return;
    auto ev = kmsg->poll(pci);
    s.host.kernel_lines_unclassified_total = kmsg->unclassified_total();
    s.events.insert(s.events.end(), std::make_move_iterator(ev.begin()),
                    std::make_move_iterator(ev.end()));
  }

  Clock::time_point read_host() {
    host.sample(unix_now());
    return Clock::now();
  }

  // Declared in construction order (see the constructor).
  HostSource host;
  Clock::time_point host_read_at;  // of the last host reading
  GpuSource gpu;
  std::unique_ptr<KernelLogSource> kmsg;
  std::string kmsg_error;
  DeviceHolderWatch holders;
  PciIndex pci;
  TraceHeader header;
};

Sampler::Sampler(const SamplerOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
Sampler::~Sampler() = default;

const TraceHeader& Sampler::header() const { return impl_->header; }
const std::string& Sampler::kernel_log_error() const {
  return impl_->kmsg_error;
}

Sample Sampler::sample() {
  Sample s;
  s.gpus = impl_->gpu.sample(s.events);
  s.t = unix_now();
  s.host = impl_->host.sample(s.t);
  impl_->host_read_at = Impl::Clock::now();
  s.processes = impl_->host.processes(Impl::gpu_pids(s.gpus), s.t);
  s.host.other_cpu_top = impl_->host.other_cpu_top();
  impl_->poll_kernel_log(s);
  impl_->holders.attach(s, s.t);
  return s;
}

Sample Sampler::sample_once(std::chrono::milliseconds window) {
  using Clock = Impl::Clock;
  // The host's first reading is the last one taken (at the latest, when
  // the Sampler was built, before NVML was loaded).
  Sample s;
  s.gpus = impl_->gpu.sample(s.events);
  // The GPU read names the processes, so their first reading comes after
  // it; they get two thirds of a window of their own.
  const auto pids = Impl::gpu_pids(s.gpus);
  const auto procs_first = Clock::now();
  impl_->host.processes(pids, unix_now());
  std::this_thread::sleep_until(
      std::max(impl_->host_read_at + window, procs_first + window * 2 / 3));
  s.t = unix_now();
  s.host = impl_->host.sample(s.t);
  impl_->host_read_at = Clock::now();
  s.processes = impl_->host.processes(pids, s.t);
  s.host.other_cpu_top = impl_->host.other_cpu_top();
  impl_->poll_kernel_log(s);
  impl_->holders.attach(s, s.t);
  return s;
}

}  // namespace gd
