#include "procmgmt/gpu_memory_account.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/memory_owners.h"
#include "model/orphan_holders.h"
#include "model/slurm_label.h"

namespace gd::procmgmt {

const char* holder_status_name(HolderStatus s) {
  switch (s) {
    case HolderStatus::kLive:
      return "live";
    case HolderStatus::kUninterruptible:
      return "uninterruptible";
    case HolderStatus::kZombie:
      return "zombie";
    case HolderStatus::kMissing:
      return "missing";
  }
  return "?";
}

std::string host_pid_visibility_hint() {
  return "run gpudoctor in the host PID namespace so it sees the PIDs NVML "
         "reports: on the "
         "host itself, `docker run --pid=host ...` (add --gpus all), or "
         "`hostPID: true` in "
         "a Kubernetes pod spec";
}

std::string mig_reset_clause(int gpu,
                             const std::vector<MigInstanceAccount>& instances) {
  if (instances.empty()) return "";
  std::string names;
  for (const auto& m : instances)
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", m.gi_id,
                         m.profile.empty() ? "?" : m.profile);
  return fmt::format(
      "MIG is enabled: destroy its instances first (GPU instances {1}: "
      "`nvidia-smi mig -i {0} -dci` then `nvidia-smi mig -i {0} -dgi`) and "
      "re-create them after the reset",
      gpu, names);
}

std::string mig_instance_advice(int gpu, const MigInstanceAccount& m) {
  return fmt::format(
      "the memory is on MIG instance GI {1} ({2}); destroying and "
      "re-creating that instance frees it without touching the other "
      "instances, once no process uses it: `nvidia-smi mig -i {0} -gi {1} "
      "-dci && nvidia-smi mig -i {0} -gi {1} -dgi`, then `nvidia-smi mig -i "
      "{0} -cgi {2} -C` (root)",
      gpu, m.gi_id, m.profile.empty() ? "<profile>" : m.profile);
}

const MigInstanceAccount* find_instance(
    const std::vector<MigInstanceAccount>& instances,
    std::optional<uint32_t> gi) {
  if (!gi) return nullptr;
  for (const auto& m : instances)
    if (m.gi_id == *gi) return &m;
  return nullptr;
}

std::vector<uint32_t> probable_holder_pids(const GpuMemoryAccount& a) {
  std::vector<uint32_t> out;
  for (const OtherHolder& o : a.other_holders)
    if (o.probable) out.push_back(o.proc.pid);
  return out;
}

namespace {

// The sample's job for the process (its cgroup's or its environment's),
// else the job its cgroup names now.
std::string job_label(const Sample& sample, const ProcEntry& p) {
  for (const ProcessSample& q : sample.processes)
    if (q.pid == p.pid && q.slurm_job_id)
      return slurm_job_label(sample, *q.slurm_job_id);
  return slurm_job_label(sample, p.slurm_job_id);
}

// The sample's pod for the process (the sampler joined the kubelet's and
// the runtime's lists).
std::optional<ProcessPod> pod_of(const Sample& sample, uint32_t pid) {
  for (const ProcessSample& q : sample.processes)
    if (q.pid == pid) return q.pod;
  return std::nullopt;
}

ProcessSample as_process_sample(const ProcEntry& p,
                                const std::vector<std::string>& libs,
                                const ProcSnapshot& procs) {
  ProcessSample s;
  s.pid = p.pid;
  s.ppid = p.ppid;
  s.user = p.user;
  s.name = p.comm;
  s.cmdline = p.cmdline;
  s.state = std::string(1, p.state);
  s.cgroup = p.cgroup;
  s.slurm_job_id = p.slurm_job_id;
  s.start_time = procs.start_time(p);
  s.libs = libs;
  return s;
}

// Marks the other holders that probably keep the orphaned memory and puts
// them first, most likely first; returns them ranked.
std::vector<ProbableHolder> mark_probable_holders(GpuMemoryAccount& a,
                                                  const Sample& sample,
                                                  const ProcSnapshot& procs) {
  std::vector<uint32_t> listed_anywhere;
  for (const GpuSample& g : sample.gpus)
    if (g.processes)
      for (const GpuProcess& gp : *g.processes)
        listed_anywhere.push_back(gp.pid);
  std::vector<HolderCandidate> candidates;
  for (const OtherHolder& o : a.other_holders)
    if (std::find(listed_anywhere.begin(), listed_anywhere.end(), o.proc.pid) ==
        listed_anywhere.end())
      candidates.push_back(
          {as_process_sample(o.proc, o.libs, procs), o.devices});
  std::vector<VanishedOwner> owners;
  for (const AccountedProcess& ap : a.processes) {
    if (ap.status != HolderStatus::kZombie &&
        ap.status != HolderStatus::kMissing)
      continue;
    VanishedOwner v;
    v.pid = ap.pid;
    if (ap.proc) v.last_seen = as_process_sample(*ap.proc, {}, procs);
    owners.push_back(std::move(v));
  }
  std::vector<ProbableHolder> ranked =
      rank_probable_holders(a.gpu, candidates, owners, sample.t);
  std::vector<OtherHolder> ordered;
  for (const ProbableHolder& h : ranked)
    for (OtherHolder& o : a.other_holders)
      if (o.proc.pid == h.pid) {
        o.probable = true;
        o.evidence = h.evidence;
        ordered.push_back(std::move(o));
      }
  for (OtherHolder& o : a.other_holders)
    if (!o.probable) ordered.push_back(std::move(o));
  a.other_holders = std::move(ordered);
  return ranked;
}

// What every GPU reset needs, whichever GPU: said once under a list of
// GPUs (who_render.h), in each GPU's reset advice otherwise.
constexpr const char* kResetNeeds =
    "nothing may have the GPU open, so stop nvidia-persistenced, DCGM and "
    "monitoring agents first; {}; not every model or VM supports it, and "
    "NVLink-connected GPUs may have to be reset together; otherwise reboot";

std::string reset_hint(int gpu,
                       const std::vector<MigInstanceAccount>& instances) {
  const std::string mig = mig_reset_clause(gpu, instances);
  return fmt::format(
      "if no process holds GPU {0} any more, reset it: `nvidia-smi "
      "--gpu-reset -i {0}` (root; {1})",
      gpu,
      fmt::format(
          fmt::runtime(kResetNeeds),
          mig.empty() ? "with MIG enabled destroy the instances first" : mig));
}

// The same without what every reset needs (a GPU's MIG instances stay).
std::string reset_hint_short(int gpu,
                             const std::vector<MigInstanceAccount>& instances) {
  const std::string mig = mig_reset_clause(gpu, instances);
  return fmt::format(
      "if no process holds GPU {0} any more, reset it: `nvidia-smi "
      "--gpu-reset -i {0}` (root{1}; what a reset needs: below)",
      gpu, mig.empty() ? "" : "; " + mig);
}

void explain(AccountedProcess& ap, int gpu, bool in_container,
             const ProcSnapshot& procs,
             const std::vector<MigInstanceAccount>& instances) {
  switch (ap.status) {
    case HolderStatus::kMissing:
      if (in_container) {
        ap.explanation =
            "not visible here: gpudoctor runs in a container PID namespace and "
            "NVML reports "
            "host PIDs; the process is most likely alive on the host";
        ap.action = host_pid_visibility_hint();
      } else {
        ap.explanation =
            "no process has this pid: its owner is gone but the driver still "
            "holds its "
            "memory (orphaned), or it runs in a PID namespace NVML does not "
            "translate";
        const MigInstanceAccount* m = find_instance(instances, ap.gi_id);
        ap.action =
            m ? mig_instance_advice(gpu, *m) : reset_hint(gpu, instances);
      }
      break;
    case HolderStatus::kZombie: {
      uint32_t ppid = ap.proc->ppid;
      std::string pname = ap.parent ? " (" + ap.parent->command() + ")" : "";
      ap.explanation = fmt::format(
          "zombie: it exited, but its parent {}{} has not reaped it; the "
          "memory is freed "
          "when the parent reaps it (wait()) or exits",
          ppid, pname);
      if (ppid <= 1)
        ap.action =
            "its parent is init, which reaps at once: a zombie that stays is "
            "stuck in the "
            "driver; check the kernel log (`gpudoctor diagnose`) for Xid "
            "errors";
      else
        ap.action = fmt::format(
            "make {0} reap its child, or end the parent: `gpudoctor kill {0}` "
            "(init then "
            "reaps the zombie and the driver frees the memory)",
            ppid);
      break;
    }
    case HolderStatus::kUninterruptible:
      ap.explanation =
          "in uninterruptible sleep (D): stuck in a kernel call; no signal, "
          "not even KILL, "
          "acts until the call returns";
      ap.action = fmt::format(
          "look at `cat /proc/{}/stack` (root) and the kernel log (`gpudoctor "
          "diagnose`) for "
          "Xid errors; if it never returns, the GPU needs a reset or the host "
          "a reboot",
          ap.pid);
      break;
    case HolderStatus::kLive:
      break;
  }
  (void)procs;
}

}  // namespace

std::string reset_needs() {
  return fmt::format(fmt::runtime(kResetNeeds),
                     "with MIG enabled destroy the instances first");
}

GpuMemoryAccount account_gpu_memory(const TraceHeader& header,
                                    const Sample& sample, int gpu,
                                    const ProcSnapshot& procs,
                                    const DeviceScan& devices) {
  GpuMemoryAccount a;
  a.gpu = gpu;
  a.in_container = header.host.pid_namespace == "container";
  for (const GpuInfo& info : header.gpus) {
    if (info.index != gpu) continue;
    a.name = info.name;
    a.uuid = info.uuid;
    a.total_bytes = info.memory_total_bytes;
  }
  const GpuSample* g = nullptr;
  for (const GpuSample& s : sample.gpus)
    if (s.index == gpu) g = &s;
  if (!g || g->lost || g->stale) {
    a.readable = false;
    a.unreadable_reason =
        !g        ? "no such GPU"
        : g->lost ? "the GPU is lost (fell off the bus)"
                  : "the GPU did not answer NVML in time (hung driver call)";
    return a;
  }
  a.used_bytes = g->mem_used_bytes;
  a.processes_known = g->processes.has_value();
  if (g->mig_instances) {
    for (const MigInstance& m : *g->mig_instances) {
      MigInstanceAccount mi;
      mi.gi_id = m.gi_id;
      mi.ci_id = m.ci_id;
      mi.profile = m.profile;
      mi.uuid = m.uuid;
      mi.total_bytes = m.mem_total_bytes;
      mi.used_bytes = m.mem_used_bytes;
      if (g->processes)
        for (const GpuProcess& gp : *g->processes)
          if (gp.gi_id == m.gi_id && (!gp.ci_id || gp.ci_id == m.ci_id)) {
            mi.pids.push_back(gp.pid);
            mi.listed_bytes += gp.used_bytes.value_or(0);
          }
      a.mig_instances.push_back(std::move(mi));
    }
  }

  auto devices_of = [&](uint32_t pid) {
    for (const DeviceHolder& h : devices.holders)
      if (h.pid == pid) return h.devices;
    return std::vector<std::string>{};
  };

  std::vector<uint32_t> listed;
  if (g->processes) {
    for (const GpuProcess& gp : *g->processes) {
      if (std::find(listed.begin(), listed.end(), gp.pid) != listed.end())
        continue;
      listed.push_back(gp.pid);
      AccountedProcess ap;
      ap.pid = gp.pid;
      ap.used_bytes = gp.used_bytes;
      ap.type = gp.type;
      ap.gi_id = gp.gi_id;
      ap.ci_id = gp.ci_id;
      if (const ProcEntry* p = procs.find(gp.pid)) {
        ap.proc = *p;
        ap.status = p->zombie()            ? HolderStatus::kZombie
                    : p->uninterruptible() ? HolderStatus::kUninterruptible
                                           : HolderStatus::kLive;
        if (const ProcEntry* parent = procs.find(p->ppid)) ap.parent = *parent;
        ap.container = container_from_cgroup(p->cgroup);
        ap.job = job_label(sample, *p);
        ap.pod = pod_of(sample, p->pid);
        ap.devices = devices_of(gp.pid);
      } else {
        ap.status = HolderStatus::kMissing;
      }
      explain(ap, gpu, a.in_container, procs, a.mig_instances);
      if (gp.used_bytes) {
        a.listed_bytes += *gp.used_bytes;
        if (ap.status == HolderStatus::kMissing)
          a.missing_bytes += *gp.used_bytes;
      } else {
        ++a.unknown_size_processes;
      }
      a.processes.push_back(std::move(ap));
    }
  }
  if (a.processes_known) {
    MemoryOwnersSum owners;
    for (const AccountedProcess& ap : a.processes)
      owners.add(ap.used_bytes, ap.status == HolderStatus::kZombie ||
                                    ap.status == HolderStatus::kMissing);
    a.not_owned_bytes = owners.finish(a.used_bytes).not_owned_bytes;
  }
  std::stable_sort(a.processes.begin(), a.processes.end(),
                   [](const AccountedProcess& x, const AccountedProcess& y) {
                     return x.used_bytes.value_or(0) > y.used_bytes.value_or(0);
                   });

  if (a.used_bytes && a.processes_known) {
    uint64_t rest =
        *a.used_bytes > a.listed_bytes ? *a.used_bytes - a.listed_bytes : 0;
    if (a.unknown_size_processes == 0 &&
        rest <= kMaxPlausibleDriverReserveBytes) {
      a.driver_reserved_bytes = rest;
      a.unexplained_bytes = 0;
    } else {
      a.unexplained_bytes = rest;
    }
  }

  for (const DeviceHolder& h : devices.holders) {
    if (std::find(listed.begin(), listed.end(), h.pid) != listed.end())
      continue;
    const ProcEntry* p = procs.find(h.pid);
    if (!p) continue;
    // Holders of another GPU's node only are not this GPU's business.
    bool this_gpu = h.holds_gpu(gpu);
    if (!this_gpu && !h.gpu_unknown()) continue;
    OtherHolder o;
    o.proc = *p;
    o.container = container_from_cgroup(p->cgroup);
    o.job = job_label(sample, *p);
    o.pod = pod_of(sample, p->pid);
    o.devices = h.devices;
    o.libs = h.libs;
    o.this_gpu = this_gpu;
    a.other_holders.push_back(std::move(o));
  }
  a.unreadable_fd_pids = devices.unreadable;
  for (const auto& ap : a.processes)
    a.orphaned |= ap.status == HolderStatus::kZombie ||
                  (ap.status == HolderStatus::kMissing && !a.in_container);
  a.orphaned |= a.unexplained_bytes && *a.unexplained_bytes > 0;
  std::vector<ProbableHolder> probable;
  if (a.orphaned) probable = mark_probable_holders(a, sample, procs);
  // A process holding the files keeps the memory: ending it is the fix,
  // and a reset cannot succeed before.
  const std::string end_holders = end_holders_advice(gpu, probable);
  if (!end_holders.empty())
    for (auto& ap : a.processes)
      if (ap.status == HolderStatus::kMissing && !a.in_container)
        ap.action = end_holders;

  // Advice, most useful first; each distinct line once.
  auto add = [&](const std::string& s) {
    if (!s.empty() &&
        std::find(a.advice.begin(), a.advice.end(), s) == a.advice.end())
      a.advice.push_back(s);
  };
  bool any_missing = false;
  for (const auto& ap : a.processes)
    any_missing |= ap.status == HolderStatus::kMissing;
  if (a.in_container && any_missing) {
    add(
        fmt::format("gpudoctor runs inside a container (its PID namespace is "
                    "not the host's) and cannot "
                    "see the host PIDs NVML reports, so it cannot tell whether "
                    "the owners of that memory "
                    "are alive; "
                    "{}",
                    host_pid_visibility_hint()));
  }
  // Zombie and D-state actions first; a GPU reset (the missing owners' way
  // out) is the last resort, so it comes last.
  for (const auto& ap : a.processes)
    if (ap.status != HolderStatus::kMissing) add(ap.action);
  add(end_holders);
  if (a.unexplained_bytes && *a.unexplained_bytes > 0 && probable.empty()) {
    if (!a.other_holders.empty())
      add(fmt::format(
          "{} process(es) have NVIDIA device files open but NVML does not list "
          "them on this GPU; none is a CUDA client (nvidia-uvm) that NVML "
          "lists nowhere, so none is taken for the holder of the {} no "
          "listed process explains (monitoring tools open only nvidiactl and "
          "the GPU nodes)",
          a.other_holders.size(),
          fmt::format("{:.1f} MiB", *a.unexplained_bytes / 1048576.0)));
    else if (a.unknown_size_processes == 0)
      add("more memory is used than the listed processes and a driver "
          "reservation explain: "
          "a process NVML does not list (another container or VM) or a leaked "
          "context holds "
          "it");
  }
  if (!a.unreadable_fd_pids.empty())
    add(
        fmt::format("the open files of {} process(es) could not be read; run "
                    "as root to see every "
                    "device holder",
                    a.unreadable_fd_pids.size()));
  // A missing owner on a MIG instance: that instance can be re-created
  // alone; the whole GPU needs a reset only for the others.
  bool missing_off_instance = false;
  for (const auto& ap : a.processes) {
    if (ap.status != HolderStatus::kMissing) continue;
    if (!a.in_container && find_instance(a.mig_instances, ap.gi_id))
      add(ap.action);
    else
      missing_off_instance = true;
  }
  if (missing_off_instance && !a.in_container && probable.empty()) {
    a.reset_hint = reset_hint(gpu, a.mig_instances);
    a.reset_hint_short = reset_hint_short(gpu, a.mig_instances);
    add(a.reset_hint);
  }
  return a;
}

}  // namespace gd::procmgmt
