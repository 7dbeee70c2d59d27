#include "check/live.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/gpu_lookup.h"
#include "procmgmt/device_holders.h"
#include "procmgmt/proc_entry.h"

namespace gd::check {
namespace {

// The GPUs `entries` name, by index; the entries NVML does not list go to
// `absent`.
void resolve(const TraceHeader& h, const std::vector<std::string>& entries,
             Input& in) {
  for (const auto& e : entries) {
    std::optional<int> found = gpu_by_name(h, e);
    if (!found) {
      in.absent.push_back(e);
    } else if (std::find(in.gpus.begin(), in.gpus.end(), *found) ==
               in.gpus.end()) {
      in.gpus.push_back(*found);
    }
  }
  std::sort(in.gpus.begin(), in.gpus.end());
}

void scan_holders(const SamplerOptions& o, Input& in) {
  auto scan = procmgmt::scan_device_holders(o.proc_root, o.dev_prefix);
  std::vector<Holder> holders;
  for (auto& h : scan.holders) {
    Holder x{h.pid, "", "", std::move(h.devices), std::move(h.libs)};
    if (auto e = procmgmt::read_proc_entry(o.proc_root, h.pid)) {
      x.user = e->user;
      x.name = e->comm;
    }
    holders.push_back(std::move(x));
  }
  in.holders = std::move(holders);
  in.unreadable_fd_pids = std::move(scan.unreadable);
}

}  // namespace

void check_live(const SamplerOptions& options,
                const std::vector<std::string>& gpus, LiveCheck& out,
                bool node_only) {
  SamplerOptions o = options;
  o.kmsg_from_start = true;  // since boot, as far as the log reaches
  Sampler sampler(o);
  out.header = sampler.header();
  const std::string& status = out.header.nvml_status;
  if (status != kNvmlOk && status != kNvmlDriverMismatch) {
    out.could_not_check = fmt::format("NVML did not start ({}{}{})", status,
                                      out.header.nvml_error.empty() ? "" : ": ",
                                      out.header.nvml_error);
    return;
  }
  out.sample = sampler.sample_once();
  Input& in = out.input;
  in.header = &out.header;
  in.sample = &out.sample;
  in.all_gpus = gpus.empty() && !node_only;
  in.node_only = node_only;
  in.deadline_s = std::chrono::duration<double>(o.deadline).count();
  resolve(out.header, gpus, in);
  if (!node_only) scan_holders(o, in);  // only gpu-not-clean asks
}

}  // namespace gd::check
