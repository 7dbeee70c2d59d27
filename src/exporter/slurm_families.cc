// gpudoctor_gpu_job_info: which Slurm job runs on which GPU, as an info
// series of its own. A job label on every GPU series would multiply the
// series by the jobs a GPU sees (and start new series at every job); one
// info series per GPU and job is joined at query time instead:
//   DCGM_FI_DEV_GPU_UTIL * on(gpu) group_left(job_id, job_name)
//     gpudoctor_gpu_job_info
// Bounded: at most kJobsPerGpu jobs per GPU and kMaxSeries in all; the
// names are the jobs' own text, escaped and capped.
#include <algorithm>
#include <string>
#include <vector>

#include "exporter/exporter.h"
#include "exporter/family_writer.h"
#include "exporter/prom_text.h"

namespace gd {
namespace {

using prom::FamilyWriter;
using prom::Labels;

constexpr size_t kJobsPerGpu = 8;
constexpr size_t kMaxSeries = 256;

const GpuInfo* header_gpu(const TraceHeader& h, int index) {
  for (const GpuInfo& g : h.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

}  // namespace

void render_slurm_job_info(const MetricsInput& in, std::string& out) {
  if (in.sample == nullptr || in.header == nullptr) return;
  const Sample& s = *in.sample;
  std::vector<std::pair<uint32_t, const ProcessSample*>> by_pid;
  for (const ProcessSample& p : s.processes)
    if (p.slurm_job_id) by_pid.emplace_back(p.pid, &p);
  if (by_pid.empty()) return;
  std::sort(by_pid.begin(), by_pid.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  FamilyWriter f(out, "gpudoctor_gpu_job_info", "gauge",
                 "1 for each Slurm job with a process on the GPU (job name, "
                 "user and partition from scontrol; empty while unknown). "
                 "Join on gpu: no other series carries a job label.");
  size_t series = 0;
  for (const GpuSample& g : s.gpus) {
    if (!g.processes) continue;
    std::vector<const ProcessSample*> jobs;
    for (const GpuProcess& gp : *g.processes) {
      auto it = std::lower_bound(
          by_pid.begin(), by_pid.end(), gp.pid,
          [](const auto& e, uint32_t pid) { return e.first < pid; });
      if (it == by_pid.end() || it->first != gp.pid) continue;
      const ProcessSample* p = it->second;
      if (std::none_of(jobs.begin(), jobs.end(), [&](const ProcessSample* q) {
            return *q->slurm_job_id == *p->slurm_job_id;
          }))
        jobs.push_back(p);
    }
    std::sort(jobs.begin(), jobs.end(),
              [](const ProcessSample* a, const ProcessSample* b) {
                return *a->slurm_job_id < *b->slurm_job_id;
              });
    if (jobs.size() > kJobsPerGpu) jobs.resize(kJobsPerGpu);
    const GpuInfo* info = header_gpu(*in.header, g.index);
    for (const ProcessSample* p : jobs) {
      if (series++ == kMaxSeries) return;
      const SlurmJob* job = find_slurm_job(s, *p->slurm_job_id);
      Labels l;
      l.add("gpu", int64_t{g.index});
      l.add_untrusted("uuid", info ? info->uuid : "");
      l.add("job_id", *p->slurm_job_id);
      l.add_untrusted("job_name", job ? job->name : "");
      l.add_untrusted("user", job && !job->user.empty() ? job->user : p->user);
      l.add_untrusted("partition", job ? job->partition : "");
      f.add(l.body(), 1.0);
    }
  }
}

}  // namespace gd
