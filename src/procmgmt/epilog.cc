#include "procmgmt/epilog.h"

#include <algorithm>
#include <string_view>

#include "common/bytes_text.h"
#include "procmgmt/gpu_memory_account.h"

namespace gd::procmgmt {
namespace {

// Daemons an epilog never ends, by comm (15 bytes at most).
bool is_system_daemon(std::string_view comm) {
  static constexpr std::string_view kNames[] = {
      "slurmd", "slurmstepd",      "slurmctld",     "slurmdbd",
      "munged", "nvidia-persiste", "nv-hostengine", "nvidia-fabricm"};
  for (std::string_view n : kNames)
    if (comm == n) return true;
  return comm.starts_with("dcgm");
}

// The device files of the job's GPUs `h` holds ("nvidia0,nvidia1").
std::string held_gpu_files(const DeviceHolder& h,
                           const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus)
    if (h.holds_gpu(g))
      out += (out.empty() ? "nvidia" : ",nvidia") + std::to_string(g);
  return out;
}

bool holds_uvm(const DeviceHolder& h) {
  return std::find(h.devices.begin(), h.devices.end(), "nvidia-uvm") !=
         h.devices.end();
}

}  // namespace

EpilogSelection select_epilog_leftovers(
    const EpilogRequest& req, const ProcSnapshot& procs,
    const DeviceScan& devices,
    const std::function<std::optional<std::string>(uint32_t)>& environ_job) {
  EpilogSelection out;
  std::vector<uint32_t> untouchable = procs.ancestors(req.self_pid);
  untouchable.push_back(req.self_pid);
  auto holder_of = [&](uint32_t pid) -> const DeviceHolder* {
    auto it = std::lower_bound(
        devices.holders.begin(), devices.holders.end(), pid,
        [](const DeviceHolder& h, uint32_t p) { return h.pid < p; });
    return it != devices.holders.end() && it->pid == pid ? &*it : nullptr;
  };
  // Processes that name no job, for the device-holder rule.
  std::vector<const ProcEntry*> unnamed;
  std::optional<double> earliest;
  for (const ProcEntry& e : procs.entries()) {
    if (e.pid <= 1 || e.kernel_thread()) continue;
    const bool protected_pid = std::find(untouchable.begin(), untouchable.end(),
                                         e.pid) != untouchable.end() ||
                               is_system_daemon(e.comm);
    std::optional<std::string> job = e.slurm_job_id;
    std::string why;
    if (job) {
      why = "in the job's cgroup";
    } else {
      job = environ_job(e.pid);
      why = "SLURM_JOB_ID=" + req.job_id + " in its environment";
    }
    if (!job) {
      if (!protected_pid) unnamed.push_back(&e);
      continue;
    }
    if (*job != req.job_id) {
      const DeviceHolder* h = holder_of(e.pid);
      if (h && !held_gpu_files(*h, req.gpus).empty())
        out.spared.push_back({e, "job " + *job + "'s process"});
      continue;
    }
    if (protected_pid) {
      out.spared.push_back({e, std::find(untouchable.begin(), untouchable.end(),
                                         e.pid) != untouchable.end()
                                   ? "gpudoctor or its caller (the epilog)"
                                   : "a system daemon"});
      continue;
    }
    if (auto t = procs.start_time(e); t && (!earliest || *t < *earliest))
      earliest = t;
    out.leftovers.push_back({e, why});
  }
  out.job_start = req.job_start ? req.job_start : earliest;
  for (const ProcEntry* e : unnamed) {
    const DeviceHolder* h = holder_of(e->pid);
    if (!h) continue;
    const std::string files = held_gpu_files(*h, req.gpus);
    if (files.empty()) continue;
    const auto started = procs.start_time(*e);
    if (!holds_uvm(*h))
      out.spared.push_back(
          {*e, "holds " + files +
                   " without nvidia-uvm: an NVML-only monitor, not a CUDA "
                   "program"});
    else if (e->uid && *e->uid == 0)
      out.spared.push_back({*e, "holds " + files + ", root's, names no job"});
    else if (!out.job_start || !started)
      out.spared.push_back(
          {*e, "holds " + files + "; when the job started is not known"});
    else if (*started <= *out.job_start)
      out.spared.push_back({*e, "holds " + files + ", started before the job"});
    else
      out.leftovers.push_back(
          {*e, "holds " + files + ", started during the job"});
  }
  return out;
}

EpilogGpu judge_epilog_gpu(const Sample& s, int gpu,
                           const std::vector<uint32_t>& other_jobs,
                           const std::string& proc_root) {
  EpilogGpu out;
  out.gpu = gpu;
  const GpuSample* g = nullptr;
  for (const GpuSample& x : s.gpus)
    if (x.index == gpu) g = &x;
  if (!g || g->lost || g->stale) return out;  // not back: cannot tell
  out.used_bytes = g->mem_used_bytes;
  uint64_t others = 0;
  bool own_listed = false;
  if (g->processes)
    for (const GpuProcess& p : *g->processes) {
      if (std::find(other_jobs.begin(), other_jobs.end(), p.pid) !=
          other_jobs.end()) {
        others += p.used_bytes.value_or(0);
        continue;
      }
      if (!own_listed) {
        out.holder_pid = p.pid;
        // Gone: no entry in /proc, or a zombie (it has exited; only its
        // parent's wait is missing, and it holds no GPU memory itself).
        const auto e = read_proc_entry(proc_root, p.pid);
        out.holder_gone = !e || e->zombie();
      }
      own_listed = true;
    }
  const uint64_t used = out.used_bytes.value_or(0);
  const uint64_t ours = used > others ? used - others : 0;
  out.back = !own_listed && g->processes &&
             (!out.used_bytes || ours <= kMaxPlausibleDriverReserveBytes);
  return out;
}

std::string epilog_reason(const std::string& job_id, const EpilogGpu& g) {
  std::string out = "gpudoctor: GPU " + std::to_string(g.gpu);
  if (g.used_bytes)
    out += " holds " + human_bytes(*g.used_bytes);
  else
    out += " cannot be read";
  out += " after job " + job_id + " ended";
  if (g.holder_pid)
    out += "; pid " + std::to_string(g.holder_pid) +
           (g.holder_gone ? " gone" : " still listed");
  else
    out += "; no process listed";
  if (out.size() > 200) out.resize(200);
  return out;
}

}  // namespace gd::procmgmt
