// A small node for the accounting tests: GPUs drawing a known power, jobs
// that come and go on them, and an oracle that adds up, interval by
// interval and independently of the engine, what each job should be given.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd::accounting::testing {

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

struct JobSpec {
  std::string key;            // what the engine should call it ("slurm:7", ...)
  uint32_t pid = 0;           // the GPU process (rank)
  uint32_t ppid = 1;          // its parent (1 = none that groups)
  std::string parent_name{};  // a process for ppid when not empty
  std::string name = "python", user = "alice";
  std::optional<std::string> cgroup{};
  int gpu = 0;
  double from = 0, to = 0;  // holds the GPU for samples from <= t < to
  uint64_t mem = 0;
  std::optional<double> sm{};  // per-process SM %
};

struct GpuSpec {
  double watts = 200;
  double util = 50;
  bool counter = true;  // energy_mj_total present (else power_w only)
  std::optional<double> reset_at{};  // the counter restarts from 0 here
  std::vector<std::pair<double, double>> lost{};  // [from, to) samples lost
};

struct Expected {
  std::map<std::string, double> job_energy_j, job_held_s;
  std::map<int, double> idle_energy_j, counter_delta_j;
};

struct Scenario {
  double t0 = 1000, t1 = 1100, step = 1;
  std::vector<GpuSpec> gpus;
  std::vector<JobSpec> jobs;
  std::vector<std::pair<double, double>> node_gaps;  // no sample at all
  double gap_factor = 4;

  TraceHeader header() const {
    TraceHeader h;
    for (size_t i = 0; i < gpus.size(); ++i) {
      GpuInfo g;
      g.index = static_cast<int>(i);
      g.name = "Test GPU";
      g.memory_total_bytes = 80 * kGiB;
      g.power_limit_w = 700;
      h.gpus.push_back(g);
    }
    return h;
  }

  static bool within(double t,
                     const std::vector<std::pair<double, double>>& r) {
    for (const auto& [a, b] : r)
      if (t >= a && t < b) return true;
    return false;
  }

  // Feeds the samples to `sink` and fills `expected`. The oracle gives an
  // interval (prev, t] the state of the sample at t, like NVML's averages
  // over the last period, and skips intervals longer than gap_factor steps.
  void run(const std::function<void(const Sample&)>& sink,
           Expected& expected) const {
    std::vector<std::optional<double>> prev_t(gpus.size());
    std::vector<double> counter_mj(gpus.size(), 5e9);
    std::vector<std::optional<uint64_t>> prev_counter(gpus.size());
    std::vector<bool> reset_done(gpus.size(), false);
    for (double t = t0; t <= t1 + 1e-9; t += step) {
      if (within(t, node_gaps)) {
        for (size_t i = 0; i < gpus.size(); ++i)
          counter_mj[i] += gpus[i].watts * step * 1000;
        continue;
      }
      Sample s;
      s.t = t;
      for (size_t i = 0; i < gpus.size(); ++i) {
        const GpuSpec& spec = gpus[i];
        counter_mj[i] += spec.watts * step * 1000;
        if (spec.reset_at && !reset_done[i] && t >= *spec.reset_at) {
          // Restarted one step ago: it holds one step's energy.
          counter_mj[i] = spec.watts * step * 1000;
          reset_done[i] = true;
        }
        GpuSample g;
        g.index = static_cast<int>(i);
        if (within(t, spec.lost)) {
          g.lost = true;
          s.gpus.push_back(g);
          continue;
        }
        g.util_pct = spec.util;
        g.power_w = spec.watts;
        if (spec.counter)
          g.energy_mj_total = static_cast<uint64_t>(counter_mj[i]);
        g.processes.emplace();
        double sm_sum = 0;
        uint64_t mem_sum = 0;
        bool all_sm = true;
        std::vector<const JobSpec*> here;
        for (const JobSpec& j : jobs) {
          if (j.gpu != static_cast<int>(i) || t < j.from || t >= j.to) continue;
          GpuProcess gp;
          gp.pid = j.pid;
          gp.used_bytes = j.mem;
          gp.sm_util_pct = j.sm;
          g.processes->push_back(gp);
          here.push_back(&j);
          mem_sum += j.mem;
          if (j.sm)
            sm_sum += *j.sm;
          else
            all_sm = false;
        }
        // The oracle, for the interval that ends here.
        if (prev_t[i]) {
          const double dt = t - *prev_t[i];
          const double joules =
              spec.counter ? (static_cast<double>(*g.energy_mj_total) -
                              (reset_done[i] && t == *spec.reset_at
                                   ? 0.0
                                   : static_cast<double>(*prev_counter[i]))) /
                                 1000.0
                           : spec.watts * dt;
          if (spec.counter)
            expected.counter_delta_j[static_cast<int>(i)] += joules;
          if (dt <= gap_factor * step + 1e-9) {
            if (here.empty())
              expected.idle_energy_j[static_cast<int>(i)] += joules;
            for (const JobSpec* j : here) {
              const double w = all_sm && sm_sum > 0
                                   ? *j->sm / sm_sum
                                   : static_cast<double>(j->mem) /
                                         static_cast<double>(mem_sum);
              expected.job_energy_j[j->key] += w * joules;
              expected.job_held_s[j->key] += static_cast<double>(j->mem) /
                                             static_cast<double>(mem_sum) * dt;
            }
          }
        }
        prev_t[i] = t;
        prev_counter[i] = g.energy_mj_total;
        s.gpus.push_back(g);
      }
      for (const JobSpec& j : jobs) {
        if (t < j.from || t >= j.to) continue;
        ProcessSample p;
        p.pid = j.pid;
        p.ppid = j.ppid;
        p.name = j.name;
        p.user = j.user;
        p.cmdline = j.name + " train.py";
        p.state = "S";
        p.cgroup = j.cgroup;
        p.start_time = j.from;
        s.processes.push_back(p);
        if (!j.parent_name.empty()) {
          ProcessSample parent;
          parent.pid = j.ppid;
          parent.ppid = 1;
          parent.name = j.parent_name;
          parent.cmdline = j.parent_name + " --nproc-per-node 2 train.py";
          parent.user = j.user;
          parent.state = "S";
          parent.start_time = j.from - 1;
          bool dup = false;
          for (const auto& q : s.processes) dup = dup || q.pid == parent.pid;
          if (!dup) s.processes.push_back(parent);
        }
      }
      sink(s);
    }
  }
};

}  // namespace gd::accounting::testing
