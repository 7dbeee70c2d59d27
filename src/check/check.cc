#include "check/check.h"

#include <fmt/format.h>

#include <algorithm>

#include "diagnose/evidence.h"

namespace gd::check {
namespace {

// A --gpus entry NVML does not list: the GPU the job was promised is not
// there (fell off the bus before NVML started, or a wrong device map).
CheckFinding absent_gpu(const Input& in, const std::string& asked) {
  CheckFinding c;
  Finding& f = c.finding;
  f.id = "gpu-missing";
  f.severity = "critical";
  f.title =
      fmt::format("GPU {} was asked for but NVML does not list it", asked);
  f.evidence = fmt::format("NVML lists {} GPU{}", in.header->gpus.size(),
                           in.header->gpus.size() == 1 ? "" : "s");
  f.action =
      "Compare the GPUs Slurm gives (gres.conf) with nvidia-smi -L and "
      "lspci -d 10de:; a GPU missing from NVML needs the node drained and "
      "looked at (reseat, power).";
  f.start = f.end = in.sample->t;
  c.brief = fmt::format("GPU {} not listed by NVML", asked);
  return c;
}

}  // namespace

bool idle(const GpuSample& g) {
  // The thermal-outlier rule's idle (5%): a GPU at rest shows 0-2%.
  constexpr double kIdleUtilPct = 5;
  return !g.lost && !g.stale && g.util_pct && *g.util_pct <= kIdleUtilPct;
}

bool Result::healthy() const { return findings.empty(); }

int Result::exit_code() const {
  int worst = kExitHealthy;
  for (const auto& c : findings)
    worst = std::max(worst, c.finding.severity == "critical" ? kExitUnhealthy
                                                             : kExitWarnings);
  return worst;
}

Result judge(const Input& in) {
  Result r;
  run_one_sample_rules(in, r.findings, r.not_judged, r.checked);
  for (const auto& j : judge_table()) {
    if (j.about_job_gpus && in.node_only) continue;
    j.run(in, r.findings, r.not_judged);
    r.checked.emplace_back(j.id);
  }
  for (const auto& asked : in.absent)
    r.findings.push_back(absent_gpu(in, asked));
  std::sort(r.checked.begin(), r.checked.end());
  r.checked.erase(std::unique(r.checked.begin(), r.checked.end()),
                  r.checked.end());
  r.node_only = in.node_only;
  if (in.all_gpus)
    for (const auto& g : in.header->gpus) r.gpus.push_back(g.index);
  else
    r.gpus = in.gpus;
  // diagnose's order (engine.h): most severe first, then host-wide, then
  // by GPU, id and time.
  auto first_gpu = [](const Finding& f) {
    return f.gpus.empty() ? -1
                          : *std::min_element(f.gpus.begin(), f.gpus.end());
  };
  std::stable_sort(r.findings.begin(), r.findings.end(),
                   [&](const CheckFinding& x, const CheckFinding& y) {
                     const Finding &a = x.finding, &b = y.finding;
                     int sa = severity_rank(a.severity),
                         sb = severity_rank(b.severity);
                     if (sa != sb) return sa > sb;
                     if (first_gpu(a) != first_gpu(b))
                       return first_gpu(a) < first_gpu(b);
                     if (a.id != b.id) return a.id < b.id;
                     return a.start < b.start;
                   });
  return r;
}

}  // namespace gd::check
