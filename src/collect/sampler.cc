#include "collect/sampler.h"

#include <algorithm>
#include <set>

#include "kernellog/kernel_log.h"
#include "nvml/gpu_collector.h"
#include "procfs/host_collector.h"

namespace gd {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

struct Sampler::Impl {
  explicit Impl(const SamplerOptions& o)
      : gpu(o.nvml_lib, o.deadline), host(o.proc_root, o.sys_root) {
    header.host = host.host_info();
    header.nvml_status = gpu.status();
    header.nvml_error = gpu.error();
    header.driver = gpu.driver();
    header.gpus = gpu.gpus();
    pci = PciIndex(header.gpus);
    if (!o.kmsg_path.empty() && o.kmsg_path != "none") {
      kmsg = std::make_unique<KernelLogSource>(o.kmsg_path, o.kmsg_from_start);
      if (!kmsg->ok()) kmsg_error = kmsg->error();
    } else {
      kmsg_error = "kernel log disabled";
    }
  }

  GpuCollector gpu;
  HostCollector host;
  std::unique_ptr<KernelLogSource> kmsg;
  std::string kmsg_error;
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

void Sampler::prime() { impl_->host.sample(unix_now()); }

Sample Sampler::sample() {
  Sample s;
  s.gpus = impl_->gpu.sample(s.events);
  s.t = unix_now();
  s.host = impl_->host.sample(s.t);

  // The processes of interest are the ones NVML lists on any GPU; the host
  // collector adds their descendants (data-loader workers).
  std::set<uint32_t> pids;
  for (const auto& g : s.gpus)
    if (g.processes)
      for (const auto& p : *g.processes) pids.insert(p.pid);
  s.processes = impl_->host.processes({pids.begin(), pids.end()}, s.t);

  if (impl_->kmsg && impl_->kmsg->ok()) {
    auto ev = impl_->kmsg->poll(impl_->pci);
    s.events.insert(s.events.end(), std::make_move_iterator(ev.begin()),
                    std::make_move_iterator(ev.end()));
  }
  return s;
}

}  // namespace gd
