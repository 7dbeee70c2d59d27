// The oracle for reads of a few fields (TraceReader::Options::fields): what
// a whole sample keeps of the fields asked for, written here independently
// of the reader, for the accountant's GPU fields.
#pragma once

#include <stdexcept>
#include <string>

#include "model/sample.h"
#include "model/sample_fields.h"

namespace gd::testing {

inline Sample projected(const Sample& full, const SampleFields& f) {
  Sample p;
  p.t = full.t;
  p.processes_left_out = full.processes_left_out;
  for (const GpuSample& g : full.gpus) {
    GpuSample& o = p.gpus.emplace_back();
    o.index = g.index;
    o.lost = g.lost;
    o.stale = g.stale;
    for (const std::string& name : f.gpu) {
      if (name == "util_pct") {
        o.util_pct = g.util_pct;
      } else if (name == "power_w") {
        o.power_w = g.power_w;
      } else if (name == "energy_mj_total") {
        o.energy_mj_total = g.energy_mj_total;
      } else if (name == "sm_active_pct") {
        o.gpm.sm_active_pct = g.gpm.sm_active_pct;
      } else if (name == "temp_c") {
        o.temp_c = g.temp_c;
      } else {
        throw std::logic_error("projected(): no oracle for " + name);
      }
    }
    if (f.gpu_processes && g.processes) {
      o.processes.emplace();
      for (const GpuProcess& q : *g.processes)
        o.processes->push_back({.pid = q.pid,
                                .used_bytes = q.used_bytes,
                                .type = q.type,
                                .sm_util_pct = q.sm_util_pct});
    }
  }
  if (f.process_tree) {
    for (const ProcessSample& q : full.processes) {
      ProcessSample& o = p.processes.emplace_back();
      o.pid = q.pid;
      o.ppid = q.ppid;
      o.user = q.user;
      o.name = q.name;
      o.cmdline = q.cmdline;
      o.cgroup = q.cgroup;
      o.start_time = q.start_time;
      o.ns_pid = q.ns_pid;
      o.slurm_job_id = q.slurm_job_id;
      o.pod = q.pod;
    }
    p.slurm_jobs = full.slurm_jobs;
  }
  return p;
}

}  // namespace gd::testing
