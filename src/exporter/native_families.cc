// Native gpudoctor_* families: what dcgm-exporter does not offer.
// Process and user names come from processes (untrusted): they go through
// add_untrusted (escaped, invalid UTF-8 replaced, length capped).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "common/int_list.h"
#include "exporter/exporter.h"
#include "exporter/family_writer.h"
#include "exporter/gpu_health.h"
#include "exporter/gpu_rows.h"
#include "exporter/prom_text.h"
#include "model/process_tree.h"

namespace gd {
namespace {

using prom::FamilyWriter;
using prom::Labels;

// The reason vocabulary of trace-format.md: one 0/1 series per reason.
constexpr const char* kClockEventReasons[] = {"gpu_idle",
                                              "applications_clocks_setting",
                                              "sw_power_cap",
                                              "hw_slowdown",
                                              "sync_boost",
                                              "sw_thermal_slowdown",
                                              "hw_thermal_slowdown",
                                              "hw_power_brake_slowdown",
                                              "display_clock_setting"};

std::string gpu_labels(const GpuRow& r) {
  Labels l;
  l.add("gpu", int64_t{r.sample->index});
  l.add("UUID", r.info ? r.info->uuid : "");
  return l.body();
}

// The history store's health: a full disk shows here while serve goes on.
void render_store_families(const StoreStatus& s, std::string& out) {
  FamilyWriter(out, "gpudoctor_store_writable", "gauge",
               "1 if the latest history write succeeded, 0 while writes fail "
               "(disk full, read-only, I/O errors).")
      .add("", s.writable ? 1.0 : 0.0);
  FamilyWriter(out, "gpudoctor_store_write_errors_total", "counter",
               "History writes that failed (each is retried).")
      .add("", s.write_errors_total);
  FamilyWriter(out, "gpudoctor_store_pending_bytes", "gauge",
               "Encoded history waiting in memory for the disk (bounded).")
      .add("", s.pending_bytes);
  FamilyWriter(out, "gpudoctor_store_dropped_samples_total", "counter",
               "Samples dropped because the disk stayed unwritable beyond the "
               "pending bound.")
      .add("", s.dropped_samples_total);
  FamilyWriter(out, "gpudoctor_store_quarantined_blocks_total", "counter",
               "Corrupt history blocks or batches moved to quarantine since "
               "the daemon started.")
      .add("", s.quarantined_total);
}

void render_build_and_collection(const MetricsInput& in, std::string& out) {
  const auto& h = *in.header;
  {
    FamilyWriter f(
        out, "gpudoctor_build_info", "gauge",
        "gpudoctor version and the NVIDIA driver it talks to (always 1).");
    Labels l;
    l.add("version", in.version);
    l.add("nvml_status", h.nvml_status);
    l.add("driver_version", h.driver ? h.driver->driver_version : "");
    l.add("cuda_driver_version", h.driver ? h.driver->cuda_driver_version : "");
    f.add(l.body(), 1.0);
  }
  {
    FamilyWriter f(out, "gpudoctor_gpu_info", "gauge",
                   "Static facts of each GPU (always 1).");
    for (const auto& g : h.gpus) {
      Labels l;
      l.add("gpu", int64_t{g.index});
      l.add("UUID", g.uuid);
      l.add("pci_bus_id", g.pci_bus_id);
      l.add("model_name", g.name);
      l.add("architecture", g.architecture);
      l.add("compute_capability", g.compute_capability);
      // Added with the additions to version 1; "" when unknown, as above.
      l.add("vbios_version", g.vbios_version);
      f.add(l.body(), 1.0);
    }
  }
  if (in.sample == nullptr) return;
  {
    FamilyWriter f(out, "gpudoctor_collect_success", "gauge",
                   "1 if the latest collection read this GPU in time, 0 if the "
                   "read hung past its deadline or the GPU is lost (its other "
                   "series are then absent).");
    for (const auto& gh : in.gpu_health)
      f.add(Labels().add("gpu", int64_t{gh.index}).body(),
            gh.success ? 1.0 : 0.0);
  }
  {
    FamilyWriter f(out, "gpudoctor_gpu_lost", "gauge",
                   "1 if NVML reports the GPU as lost (fallen off the bus).");
    for (const auto& gh : in.gpu_health)
      f.add(Labels().add("gpu", int64_t{gh.index}).body(), gh.lost ? 1.0 : 0.0);
  }
  FamilyWriter(out, "gpudoctor_collect_duration_seconds", "gauge",
               "Wall time of the latest collection (all GPUs and the host).")
      .add("", in.collect_duration_s);
  FamilyWriter(out, "gpudoctor_collections_total", "counter",
               "Collections taken since the daemon started.")
      .add("", in.collections_total);
  FamilyWriter(out, "gpudoctor_processes_left_out_total", "counter",
               "Processes left out of samples over the per-sample budget "
               "(GPU processes are kept first).")
      .add("", in.processes_left_out_total);
  FamilyWriter(out, "gpudoctor_sample_timestamp_seconds", "gauge",
               "Unix time of the latest sample.")
      .add("", in.sample->t);
  if (in.store) render_store_families(*in.store, out);
}

void render_gpu_families(const MetricsInput& in, std::string& out) {
  const auto rows = answered_gpus(in);
  std::vector<std::string> labels;
  for (const auto& r : rows) labels.push_back(gpu_labels(r));

  struct Simple {
    const char* name;
    const char* type;
    const char* help;
    std::function<std::optional<double>(const GpuRow&)> value;
  };
  auto num = [](auto member) {
    return [member](const GpuRow& r) -> std::optional<double> {
      const auto& v = r.sample->*member;
      if (!v) return std::nullopt;
      return static_cast<double>(*v);
    };
  };
  auto info_num = [](auto member) {
    return [member](const GpuRow& r) -> std::optional<double> {
      if (!r.info) return std::nullopt;
      const auto& v = r.info->*member;
      if (!v) return std::nullopt;
      return static_cast<double>(*v);
    };
  };
  auto flag = [](auto member) {
    return [member](const GpuRow& r) -> std::optional<double> {
      const auto& v = r.sample->*member;
      if (!v) return std::nullopt;
      return *v ? 1.0 : 0.0;
    };
  };
  const Simple simple[] = {
      {"gpudoctor_gpu_memory_used_bytes", "gauge", "GPU memory in use.",
       num(&GpuSample::mem_used_bytes)},
      {"gpudoctor_gpu_memory_total_bytes", "gauge", "GPU memory in all.",
       info_num(&GpuInfo::memory_total_bytes)},
      {"gpudoctor_gpu_power_limit_watts", "gauge",
       "Enforced power limit (below the default: capped by an admin).",
       info_num(&GpuInfo::power_limit_w)},
      {"gpudoctor_gpu_power_default_limit_watts", "gauge",
       "Default power limit of the board.",
       info_num(&GpuInfo::power_default_limit_w)},
      {"gpudoctor_gpu_sm_clock_max_mhz", "gauge", "Highest SM clock.",
       info_num(&GpuInfo::sm_clock_max_mhz)},
      {"gpudoctor_pcie_link_generation", "gauge",
       "Current PCIe link generation (drops while idle are normal power "
       "saving).",
       num(&GpuSample::pcie_gen)},
      {"gpudoctor_pcie_link_max_generation", "gauge",
       "Highest PCIe generation of the link.",
       info_num(&GpuInfo::pcie_max_gen)},
      {"gpudoctor_pcie_link_width", "gauge", "Current PCIe link width (lanes).",
       num(&GpuSample::pcie_width)},
      {"gpudoctor_pcie_link_max_width", "gauge",
       "Widest PCIe link width (lanes).", info_num(&GpuInfo::pcie_max_width)},
      {"gpudoctor_pcie_tx_bytes_per_second", "gauge",
       "PCIe transmit throughput.", num(&GpuSample::pcie_tx_bytes_per_s)},
      {"gpudoctor_pcie_rx_bytes_per_second", "gauge",
       "PCIe receive throughput.", num(&GpuSample::pcie_rx_bytes_per_s)},
      {"gpudoctor_retired_pages_pending", "gauge",
       "1 if retired pages wait for a GPU reset.",
       flag(&GpuSample::retired_pages_pending)},
      {"gpudoctor_remapped_rows_pending", "gauge",
       "1 if remapped rows wait for a GPU reset.",
       flag(&GpuSample::remapped_rows_pending)},
      {"gpudoctor_gpu_memory_reserved_bytes", "gauge",
       "GPU memory reserved by the driver and firmware (nvidia-smi "
       "Reserved).",
       num(&GpuSample::mem_reserved_bytes)},
      {"gpudoctor_gpu_bar1_used_bytes", "gauge", "BAR1 memory in use.",
       num(&GpuSample::bar1_used_bytes)},
      {"gpudoctor_gpu_bar1_total_bytes", "gauge", "BAR1 memory in all.",
       info_num(&GpuInfo::bar1_total_bytes)},
      {"gpudoctor_gpu_minor_number", "gauge",
       "N of the GPU's /dev/nvidiaN (not always its index).",
       info_num(&GpuInfo::minor_number)},
      {"gpudoctor_gpu_temperature_limit_margin_celsius", "gauge",
       "Degrees left before the slowdown temperature (nvidia-smi T.Limit).",
       num(&GpuSample::temp_limit_margin_c)},
      {"gpudoctor_gpu_temperature_max_operating_celsius", "gauge",
       "Highest GPU temperature for normal operation.",
       info_num(&GpuInfo::temp_max_operating_c)},
      {"gpudoctor_gpu_memory_temperature_max_celsius", "gauge",
       "Highest memory temperature for normal operation.",
       info_num(&GpuInfo::temp_mem_max_c)},
      {"gpudoctor_ecc_sram_threshold_exceeded", "gauge",
       "1 if the SRAM uncorrectable ECC errors passed NVIDIA's threshold "
       "(the GPU needs service).",
       flag(&GpuSample::ecc_sram_threshold_exceeded)},
  };
  for (const auto& s : simple) {
    FamilyWriter f(out, s.name, s.type, s.help);
    for (size_t i = 0; i < rows.size(); ++i)
      if (auto v = s.value(rows[i])) f.add(labels[i], *v);
  }

  render_memory_health_families(rows, labels, out);
  render_read_error_family(rows, labels, out);
  render_native_datacenter_families(rows, labels, out);

  FamilyWriter reasons(out, "gpudoctor_clock_event_reason", "gauge",
                       "1 while this clock event (throttle) reason holds the "
                       "clocks down, else 0.");
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& active = rows[i].sample->clock_event_reasons;
    if (!active) continue;
    for (const char* reason : kClockEventReasons) {
      bool on =
          std::find(active->begin(), active->end(), reason) != active->end();
      reasons.add(Labels().add_raw(labels[i]).add("reason", reason).body(),
                  on ? 1.0 : 0.0);
    }
  }
}

// How many processes each GPU's list holds, where NVML gave the list: a
// reader of these series (diagnose --prometheus) tells "no process on the
// GPU" from "no list read", which the per-process series alone cannot.
void render_process_list_sizes(const Sample& s, std::string& out) {
  FamilyWriter f(out, "gpudoctor_gpu_processes", "gauge",
                 "Processes NVML lists on a GPU; no series where the list "
                 "could not be read.");
  for (const auto& g : s.gpus)
    if (!g.stale && !g.lost && g.processes)
      f.add(Labels().add("gpu", int64_t{g.index}).body(),
            static_cast<double>(g.processes->size()));
}

// The CPU side of each GPU job: its GPU processes and their descendants
// (data-loader workers), with the parent of each, so that a reader can
// rebuild the job's tree and judge input-bound from the series. Bounded:
// the lowest pids of each job (series stay put as workers come and go)
// and of the node.
constexpr size_t kMaxTreeProcessesPerJob = 64;
constexpr size_t kMaxTreeProcesses = 512;

void render_job_tree_families(const Sample& s, std::string& out) {
  FamilyWriter f(out, "gpudoctor_process_tree_cpu_percent", "gauge",
                 "CPU use of each process of a GPU job (a GPU process and its "
                 "descendants, e.g. data-loader workers), percent of one CPU; "
                 "ppid is its parent.");
  ProcessTree tree(s);
  std::set<uint32_t> done;
  for (const GpuJob& job : tree.gpu_jobs(100)) {
    // The GPU process first, then its workers by pid.
    std::vector<uint32_t> members = job.workers;
    std::sort(members.begin(), members.end());
    members.insert(members.begin(), job.pid);
    size_t n = 0;
    for (uint32_t pid : members) {
      if (n == kMaxTreeProcessesPerJob || done.size() == kMaxTreeProcesses)
        break;
      const ProcessSample* p = tree.find(pid);
      if (!p || !p->cpu_pct || !done.insert(pid).second) continue;
      ++n;
      Labels l;
      l.add("pid", int64_t{pid});
      l.add("ppid", p->ppid ? std::to_string(*p->ppid) : "");
      l.add_untrusted("user", p->user);
      l.add_untrusted("comm", p->name);
      f.add(l.body(), *p->cpu_pct);
    }
  }
}

// A process in a Kubernetes pod whose names are known: dcgm-exporter's
// pod labels (namespace, pod, container), so each pod sharing a GPU
// (time-slicing, MPS) has its own memory and SM% series.
void add_pod_labels(Labels& l, const ProcessSample* ps) {
  if (!ps || !ps->pod || !ps->pod->name) return;
  l.add_untrusted("namespace", ps->pod->namespace_.value_or(""));
  l.add_untrusted("pod", *ps->pod->name);
  l.add_untrusted("container", ps->pod->container.value_or(""));
}

// Per-process series per GPU: a node's own processes fit many times over;
// a time-sliced GPU with a crowd of pods, or a hostile process list, does
// not grow the page without end.
constexpr size_t kMaxProcessSeriesPerGpu = 64;

template <typename T>
void add_known(std::optional<T>& sum, const std::optional<T>& v) {
  if (v) sum = sum.value_or(T{}) + *v;
}

// A process folded into its GPU's "other" row: the sums of what is known.
void fold_into(GpuProcess& gp_sum, ProcessSample& ps_sum, const GpuProcess& gp,
               const ProcessSample* ps) {
  add_known(gp_sum.used_bytes, gp.used_bytes);
  add_known(gp_sum.sm_util_pct, gp.sm_util_pct);
  add_known(gp_sum.mem_util_pct, gp.mem_util_pct);
  if (!ps) return;
  add_known(ps_sum.cpu_pct, ps->cpu_pct);
  add_known(ps_sum.rss_bytes, ps->rss_bytes);
}

void render_process_families(const MetricsInput& in, std::string& out) {
  if (in.sample == nullptr) return;
  std::unordered_map<uint32_t, const ProcessSample*> by_pid;
  for (const auto& p : in.sample->processes) by_pid[p.pid] = &p;

  struct Row {
    std::string labels;
    const GpuProcess* gp;
    const ProcessSample* ps;
  };
  std::vector<Row> rows;
  // Each GPU's processes past kMaxProcessSeriesPerGpu (the smallest
  // holders), summed into one pid="other" row per GPU.
  std::vector<GpuProcess> other_gp;
  std::vector<ProcessSample> other_ps;
  other_gp.reserve(in.sample->gpus.size());
  other_ps.reserve(in.sample->gpus.size());
  std::set<std::pair<int, uint32_t>> seen;  // a pid listed twice on one GPU
  std::vector<const GpuProcess*> listed;
  for (const auto& g : in.sample->gpus) {
    if (g.stale || g.lost || !g.processes) continue;
    listed.clear();
    for (const auto& gp : *g.processes)
      if (seen.emplace(g.index, gp.pid).second) listed.push_back(&gp);
    if (listed.size() > kMaxProcessSeriesPerGpu)
      std::partial_sort(
          listed.begin(), listed.begin() + kMaxProcessSeriesPerGpu,
          listed.end(), [](const GpuProcess* a, const GpuProcess* b) {
            return a->used_bytes.value_or(0) > b->used_bytes.value_or(0);
          });
    for (size_t i = 0; i < listed.size(); ++i) {
      const GpuProcess& gp = *listed[i];
      auto it = by_pid.find(gp.pid);
      const ProcessSample* ps = it == by_pid.end() ? nullptr : it->second;
      if (i >= kMaxProcessSeriesPerGpu) {
        if (i == kMaxProcessSeriesPerGpu) {
          other_gp.emplace_back();
          other_ps.emplace_back();
          Labels l;
          l.add("gpu", int64_t{g.index}).add("pid", "other");
          l.add("user", "").add("comm", "");
          rows.push_back({l.body(), &other_gp.back(), &other_ps.back()});
        }
        fold_into(other_gp.back(), other_ps.back(), gp, ps);
        continue;
      }
      Labels l;
      l.add("gpu", int64_t{g.index});
      l.add("pid", int64_t{gp.pid});
      l.add_untrusted("user", ps ? ps->user : "");
      l.add_untrusted("comm", ps ? ps->name : "");
      add_pod_labels(l, ps);
      rows.push_back({l.body(), &gp, ps});
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_process_gpu_memory_bytes", "gauge",
                   "GPU memory a process holds on a GPU.");
    for (const auto& r : rows) f.add_opt(r.labels, r.gp->used_bytes);
  }
  {
    FamilyWriter f(out, "gpudoctor_process_cpu_percent", "gauge",
                   "CPU use of a GPU process, percent of one CPU (can exceed "
                   "100 with several threads).");
    for (const auto& r : rows)
      if (r.ps) f.add_opt(r.labels, r.ps->cpu_pct);
  }
  {
    FamilyWriter f(out, "gpudoctor_process_resident_memory_bytes", "gauge",
                   "Host memory (RSS) of a GPU process.");
    for (const auto& r : rows)
      if (r.ps) f.add_opt(r.labels, r.ps->rss_bytes);
  }
  {
    FamilyWriter f(out, "gpudoctor_process_sm_utilization_percent", "gauge",
                   "Share of time a process's kernels ran on the GPU's SMs "
                   "(NVML process utilisation; none on MIG-enabled GPUs).");
    for (const auto& r : rows) f.add_opt(r.labels, r.gp->sm_util_pct);
  }
  {
    FamilyWriter f(out, "gpudoctor_process_memory_utilization_percent", "gauge",
                   "Share of time a process read or wrote GPU memory (NVML "
                   "process utilisation).");
    for (const auto& r : rows) f.add_opt(r.labels, r.gp->mem_util_pct);
  }
  {
    FamilyWriter f(out, "gpudoctor_process_mig_instance", "gauge",
                   "The MIG instance a GPU process runs on (always 1).");
    for (const auto& r : rows)
      if (r.gp->gi_id)
        f.add(Labels()
                  .add_raw(r.labels)
                  .add("gpu_instance", int64_t{*r.gp->gi_id})
                  .add("compute_instance",
                       r.gp->ci_id ? std::to_string(*r.gp->ci_id) : "")
                  .body(),
              1.0);
  }
  // Dead holders (a zombie, or a pid /proc no longer has): orphaned GPU
  // memory to a reader of the series. Not where serve runs in its own PID
  // namespace, where every holder looks missing (pid-namespace-blind).
  if (!in.header || in.header->host.pid_namespace != "container") {
    FamilyWriter f(out, "gpudoctor_process_dead", "gauge",
                   "1 for a process NVML lists on a GPU that is a zombie "
                   "(state Z) or gone from /proc (state missing).");
    for (const auto& r : rows)
      if (r.ps && is_dead_state(r.ps->state))
        f.add(Labels()
                  .add_raw(r.labels)
                  .add("state", r.ps->state == "Z" ? "Z" : "missing")
                  .body(),
              1.0);
  }
  render_process_list_sizes(*in.sample, out);
  render_job_tree_families(*in.sample, out);
}

void render_host_families(const MetricsInput& in, std::string& out) {
  const auto& hi = in.header->host;
  FamilyWriter(out, "gpudoctor_host_memory_total_bytes", "gauge",
               "Host memory in all.")
      .add_opt("", hi.mem_total_bytes);
  FamilyWriter(out, "gpudoctor_host_swap_total_bytes", "gauge",
               "Host swap space in all.")
      .add_opt("", hi.swap_total_bytes);
  if (in.sample == nullptr) return;
  const auto& h = in.sample->host;
  FamilyWriter(out, "gpudoctor_host_cpu_utilization_percent", "gauge",
               "CPU use of all CPUs together (0-100).")
      .add_opt("", h.cpu_util_pct);
  FamilyWriter(out, "gpudoctor_host_cpu_iowait_percent", "gauge",
               "CPU time waiting on I/O (0-100).")
      .add_opt("", h.cpu_iowait_pct);
  FamilyWriter(out, "gpudoctor_host_cpu_steal_percent", "gauge",
               "CPU time stolen by the hypervisor (0-100).")
      .add_opt("", h.cpu_steal_pct);
  FamilyWriter(out, "gpudoctor_host_load1", "gauge", "1-minute load average.")
      .add_opt("", h.load1);
  FamilyWriter(out, "gpudoctor_host_memory_available_bytes", "gauge",
               "Host memory available for new allocations.")
      .add_opt("", h.mem_available_bytes);
  FamilyWriter(out, "gpudoctor_host_swap_used_bytes", "gauge",
               "Host swap in use.")
      .add_opt("", h.swap_used_bytes);
  {
    FamilyWriter f(out, "gpudoctor_host_swap_pages_per_second", "gauge",
                   "Pages swapped in or out per second.");
    f.add_opt("direction=\"in\"", h.swap_in_pages_per_s);
    f.add_opt("direction=\"out\"", h.swap_out_pages_per_s);
  }
  {
    FamilyWriter f(out, "gpudoctor_host_disk_bytes_per_second", "gauge",
                   "Disk throughput of all disks.");
    f.add_opt("direction=\"read\"", h.disk_read_bytes_per_s);
    f.add_opt("direction=\"write\"", h.disk_write_bytes_per_s);
  }
  FamilyWriter(out, "gpudoctor_host_disk_busy_percent", "gauge",
               "Busiest disk's time busy (0-100).")
      .add_opt("", h.disk_busy_pct);
  {
    FamilyWriter f(out, "gpudoctor_host_pressure_some_percent", "gauge",
                   "Pressure stall information, 'some' avg10 (0-100).");
    f.add_opt("resource=\"cpu\"", h.psi_cpu_some_pct);
    f.add_opt("resource=\"memory\"", h.psi_mem_some_pct);
    f.add_opt("resource=\"io\"", h.psi_io_some_pct);
  }
}

void render_finding_families(const MetricsInput& in, std::string& out) {
  // One series per label set: two findings of one id on one GPU (e.g. two
  // Xid codes) must not produce duplicate series.
  std::set<std::string> finding_labels, alert_labels;
  for (const auto& f : in.findings) {
    Labels l;
    l.add("id", f.id)
        .add("severity", f.severity)
        .add("gpu", join_ints(f.gpus, ","));
    finding_labels.insert(l.body());
    if (!f.alert_state.empty())
      alert_labels.insert(l.add("state", f.alert_state).body());
  }
  {
    FamilyWriter f(out, "gpudoctor_finding", "gauge",
                   "A current diagnosis finding (findings.md id; gpu \"\" = "
                   "host-wide).");
    for (const auto& l : finding_labels) f.add(l, 1.0);
  }
  {
    FamilyWriter f(out, "gpudoctor_alert", "gauge",
                   "An alert of a finding: state pending (not yet held for "
                   "its 'for' duration) or firing.");
    for (const auto& l : alert_labels) f.add(l, 1.0);
  }
}

// Per job: the accounting of `gpudoctor report`, as counters. Job keys and
// names come from processes and cgroups: escaped and capped.
void render_job_families(const MetricsInput& in, std::string& out) {
  if (in.jobs.empty()) return;
  std::vector<std::string> labels;
  for (const auto& j : in.jobs)
    labels.push_back(Labels()
                         .add_untrusted("job_key", j.key)
                         .add_untrusted("job_name", j.name)
                         .body());
  struct Family {
    const char* name;
    const char* help;
    double ExportedJob::*value;
  };
  static constexpr Family kFamilies[] = {
      {"gpudoctor_job_gpu_held_seconds_total",
       "GPU-seconds the job held (memory on a GPU; a shared GPU split by "
       "SM%, else memory), since its series began.",
       &ExportedJob::held_s},
      {"gpudoctor_job_gpu_busy_seconds_total",
       "GPU-seconds the job's GPUs were busy (util), its share.",
       &ExportedJob::busy_s},
      {"gpudoctor_job_gpu_idle_held_seconds_total",
       "GPU-seconds the job held a GPU that did nothing.",
       &ExportedJob::idle_held_s},
      {"gpudoctor_job_energy_joules_total",
       "Energy of the job's share of its GPUs, in joules.",
       &ExportedJob::energy_j},
  };
  for (const Family& f : kFamilies) {
    FamilyWriter w(out, f.name, "counter", f.help);
    for (size_t i = 0; i < in.jobs.size(); ++i)
      w.add(labels[i], in.jobs[i].*f.value);
  }
}

}  // namespace

void render_age_family_lines(const MetricsInput& in, std::string& out) {
  if (in.header == nullptr || in.sample == nullptr) return;
  {
    FamilyWriter f(out, "gpudoctor_gpu_sample_age_seconds", "gauge",
                   "Seconds since this GPU last answered a collection.");
    for (const auto& gh : in.gpu_health)
      if (gh.last_success_t)
        f.add(Labels().add("gpu", int64_t{gh.index}).body(),
              std::max(0.0, in.now - *gh.last_success_t));
  }
  FamilyWriter(out, "gpudoctor_sample_age_seconds", "gauge",
               "Seconds since the latest sample was taken (staleness of "
               "everything on this page).")
      .add("", std::max(0.0, in.now - in.sample->t));
}

void render_native_families(const MetricsInput& in, std::string& out) {
  render_build_and_collection(in, out);
  render_gpu_families(in, out);
  render_process_families(in, out);
  render_host_families(in, out);
  render_finding_families(in, out);
  render_gpu_health_family(in, out);
  render_job_families(in, out);
  render_slurm_job_info(in, out);
  render_pod_info(in, out);
}

}  // namespace gd
