// Strict trace-line parser. Rules (trace-format.md): unknown fields are
// ignored; absent or null means unknown (nullopt, or "" for plain strings);
// a value of the wrong type, or a missing required field, is an error that
// names the field. Nothing is guessed.
//
// This part reads a sample line: its host fields, its processes (within the
// budget), events and device holders; a GPU's sample is json_in_gpu.cc's,
// the header json_in_header.cc's, the shared readers json_in_read.h's.
#include "trace/json_in.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "common/slurm_job_id.h"
#include "common/text_cap.h"
#include "model/process_budget.h"
#include "trace/json_in_read.h"
#include "trace/rdma_json.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd::json_in {
namespace {

#define GD_HOST_SAMPLE_FIELDS(X)            \
  X(cpu_util_pct, plain)                    \
  X(cpu_iowait_pct, plain)                  \
  X(cpu_steal_pct, plain)                   \
  X(load1, plain)                           \
  X(mem_available_bytes, plain)             \
  X(swap_used_bytes, plain)                 \
  X(swap_in_pages_per_s, plain)             \
  X(swap_out_pages_per_s, plain)            \
  X(disk_read_bytes_per_s, plain)           \
  X(disk_write_bytes_per_s, plain)          \
  X(disk_busy_pct, plain)                   \
  X(psi_cpu_some_pct, plain)                \
  X(psi_mem_some_pct, plain)                \
  X(psi_io_some_pct, plain)                 \
  X(kernel_lines_unclassified_total, plain) \
  X(other_cpu_top, custom)                  \
  X(rdma_ports, custom)

#define GD_OTHER_CPU_FIELDS(X) \
  X(pid, custom)               \
  X(comm, plain)               \
  X(user, plain)               \
  X(container, plain)          \
  X(cpu_pct, custom)

void parse_other_cpu(const Loc& loc, object obj, OtherCpuProcess& o) {
  enum class Key { GD_OTHER_CPU_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_OTHER_CPU_FIELDS(GD_KEY_NAME)};
  GD_OTHER_CPU_FIELDS(GD_CLEAR)
  bool have_pid = false, have_cpu = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_OTHER_CPU_FIELDS(GD_CASE)
      case Key::pid:
        o.pid = integer_of<uint32_t>(loc, f.key, f.value);
        have_pid = true;
        break;
      case Key::cpu_pct:  // required: the list is sorted by it
        if (!is_number(f.value.type()))
          wrong_type(loc, f.key, "a number", f.value);
        o.cpu_pct = number_of(f.value);
        have_cpu = true;
        break;
    }
  }
  if (!have_pid) missing(loc, "pid");
  if (!have_cpu) missing(loc, "cpu_pct");
}

void clear_host_sample(HostSample& o) {
  GD_HOST_SAMPLE_FIELDS(GD_CLEAR)
  o.other_cpu_top.reset();
  o.rdma_ports.reset();
}

[[gnu::flatten]] void parse_host_sample(const Loc& parent, element v,
                                        HostSample& o) {
  enum class Key { GD_HOST_SAMPLE_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_HOST_SAMPLE_FIELDS(GD_KEY_NAME)};
  clear_host_sample(o);
  if (v.is_null()) return;
  object obj;
  if (v.get_object().get(obj)) wrong_type(parent, "host", "an object", v);
  const Loc loc = parent.member("host");
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_HOST_SAMPLE_FIELDS(GD_CASE)
      case Key::other_cpu_top:
        if (f.value.is_null()) break;
        o.other_cpu_top.emplace();
        read_object_array(loc, f.key, f.value, *o.other_cpu_top,
                          parse_other_cpu);
        // At most kOtherCpuTopMax by contract; a longer list is hostile.
        if (o.other_cpu_top->size() > kOtherCpuTopMax)
          o.other_cpu_top->resize(kOtherCpuTopMax);
        break;
      case Key::rdma_ports:
        if (f.value.is_null()) break;
        o.rdma_ports.emplace();
        read_rdma_ports(loc, f.key, f.value, *o.rdma_ports);
        break;
    }
  }
}

#define GD_POD_FIELDS(X) \
  X(uid, plain)          \
  X(namespace_, custom)  \
  X(name, plain)         \
  X(container, plain)    \
  X(deleted, plain)

// "namespace" is C++'s: the key is matched by its JSON name.
constexpr std::string_view kPodKeyNames[] = {"uid", "namespace", "name",
                                             "container", "deleted"};

void parse_pod(const Loc& loc, object obj, ProcessPod& o) {
  enum class Key { GD_POD_FIELDS(GD_KEY_ENUM) };
  o = ProcessPod{};
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kPodKeyNames, f.key, cursor))) {
      GD_POD_FIELDS(GD_CASE)
      case Key::namespace_:
        read(loc, f.key, f.value, o.namespace_);
        break;
    }
  }
  for (auto* text : {&o.uid, &o.namespace_, &o.name, &o.container})
    if (*text) cap_text(**text, kPodTextMax);
}

#define GD_PROCESS_FIELDS(X) \
  X(pid, custom)             \
  X(ppid, plain)             \
  X(user, plain)             \
  X(name, plain)             \
  X(cmdline, plain)          \
  X(state, plain)            \
  X(cpu_pct, plain)          \
  X(threads, plain)          \
  X(rss_bytes, plain)        \
  X(cgroup, plain)           \
  X(libs, custom)            \
  X(start_time, plain)       \
  X(dev_shm_bytes, plain)    \
  X(ns_pid, plain)           \
  X(slurm_job_id, custom)    \
  X(pod, custom)

[[gnu::flatten]] void parse_process(const Loc& loc, object obj,
                                    ProcessSample& o) {
  enum class Key { GD_PROCESS_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_PROCESS_FIELDS(GD_KEY_NAME)};
  GD_PROCESS_FIELDS(GD_CLEAR)
  o.slurm_job_id.reset();
  o.pod.reset();
  bool have_pid = false, have_libs = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_PROCESS_FIELDS(GD_CASE)
      case Key::pid:
        o.pid = integer_of<uint32_t>(loc, f.key, f.value);
        have_pid = true;
        break;
      case Key::libs:
        read_string_list(loc, f.key, f.value, o.libs);
        have_libs = true;
        break;
      case Key::slurm_job_id:
        if (f.value.is_null()) break;
        if (f.value.type() != element_type::STRING)
          wrong_type(loc, f.key, "a string", f.value);
        if (!is_slurm_job_id(f.value.get_string().value_unsafe()))
          fail(loc, f.key, "not a Slurm job id (1..10 digits)");
        o.slurm_job_id.emplace(f.value.get_string().value_unsafe());
        break;
      case Key::pod: {
        if (f.value.is_null()) break;
        object pod;
        if (f.value.get_object().get(pod))
          wrong_type(loc, f.key, "an object", f.value);
        parse_pod(loc.member(f.key), pod, o.pod.emplace());
        break;
      }
    }
  }
  if (!have_pid) missing(loc, "pid");
  if (!have_libs) o.libs.clear();
}

#define GD_EVENT_FIELDS(X) \
  X(kind, custom)          \
  X(gpu, plain)            \
  X(code, plain)           \
  X(pid, plain)            \
  X(text, plain)           \
  X(severity, plain)       \
  X(pci_address, plain)    \
  X(logged_at, plain)

void parse_event(const Loc& loc, object obj, Event& o) {
  enum class Key { GD_EVENT_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_EVENT_FIELDS(GD_KEY_NAME)};
  GD_EVENT_FIELDS(GD_CLEAR)
  bool have_kind = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_EVENT_FIELDS(GD_CASE)
      case Key::kind:
        if (f.value.type() != element_type::STRING) {
          wrong_type(loc, f.key, "a string", f.value);
        }
        o.kind.assign(f.value.get_string().value_unsafe());
        have_kind = true;
        break;
    }
  }
  if (!have_kind) missing(loc, "kind");
}

#define GD_SAMPLE_FIELDS(X)     \
  X(t, custom)                  \
  X(gpus, custom)               \
  X(host, custom)               \
  X(processes, custom)          \
  X(events, custom)             \
  X(device_holders, custom)     \
  X(processes_left_out, custom) \
  X(slurm_jobs, custom)         \
  X(pod_allocations, custom)

#define GD_SLURM_JOB_FIELDS(X) \
  X(id, custom)                \
  X(name, plain)               \
  X(user, plain)               \
  X(partition, plain)

#define GD_POD_ALLOCATION_FIELDS(X) \
  X(gpu, custom)                    \
  X(uuid, plain)                    \
  X(replica, plain)                 \
  X(resource, plain)                \
  X(namespace_, custom)             \
  X(name, plain)                    \
  X(container, plain)

// "namespace" is C++'s: the key is matched by its JSON name.
constexpr std::string_view kPodAllocationKeyNames[] = {
    "gpu", "uuid", "replica", "resource", "namespace", "name", "container"};

void parse_pod_allocation(const Loc& loc, object obj, PodAllocation& o) {
  enum class Key { GD_POD_ALLOCATION_FIELDS(GD_KEY_ENUM) };
  o = PodAllocation{};
  bool have_gpu = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kPodAllocationKeyNames, f.key, cursor))) {
      GD_POD_ALLOCATION_FIELDS(GD_CASE)
      case Key::gpu:
        o.gpu = integer_of<int>(loc, f.key, f.value);
        have_gpu = true;
        break;
      case Key::namespace_:
        read(loc, f.key, f.value, o.namespace_);
        break;
    }
  }
  if (!have_gpu) missing(loc, "gpu");
  for (auto* text :
       {&o.uuid, &o.resource, &o.namespace_, &o.name, &o.container})
    cap_text(*text, kPodTextMax);
}

void parse_slurm_job(const Loc& loc, object obj, SlurmJob& o) {
  enum class Key { GD_SLURM_JOB_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_SLURM_JOB_FIELDS(GD_KEY_NAME)};
  GD_SLURM_JOB_FIELDS(GD_CLEAR)
  bool have_id = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_SLURM_JOB_FIELDS(GD_CASE)
      case Key::id:
        if (f.value.type() != element_type::STRING)
          wrong_type(loc, f.key, "a string", f.value);
        if (!is_slurm_job_id(f.value.get_string().value_unsafe()))
          fail(loc, f.key, "not a Slurm job id (1..10 digits)");
        o.id.assign(f.value.get_string().value_unsafe());
        have_id = true;
        break;
    }
  }
  if (!have_id) missing(loc, "id");
  cap_text(o.name, kSlurmJobNameMax);
  cap_text(o.user, kSlurmUserMax);
  cap_text(o.partition, kSlurmUserMax);
}

#define GD_DEVICE_HOLDER_FIELDS(X) \
  X(pid, custom)                   \
  X(devices, custom)

void parse_device_holder(const Loc& loc, object obj, DeviceHolder& o) {
  enum class Key { GD_DEVICE_HOLDER_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_DEVICE_HOLDER_FIELDS(GD_KEY_NAME)};
  bool have_pid = false;
  o.devices.clear();
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      case Key::pid:
        o.pid = integer_of<uint32_t>(loc, f.key, f.value);
        have_pid = true;
        break;
      case Key::devices:
        read_string_list(loc, f.key, f.value, o.devices);
        break;
    }
  }
  if (!have_pid) missing(loc, "pid");
}

// A sample's processes within `budget`. Past max_processes, only each
// element's pid and ppid are read first and only the elements the budget
// keeps are decoded (in processes_to_keep's order), so a line listing a
// million processes holds what 512 would; the rest are counted.
void read_processes(const Loc& loc, element v, const ProcessBudget& budget,
                    Sample& out) {
  constexpr std::string_view kKey = "processes";
  array arr;
  if (v.is_null() || v.get_array().get(arr) ||
      arr.size() <= budget.max_processes) {
    read_object_array(loc, kKey, v, out.processes, parse_process);
    cap_cmdlines(out.processes, budget);
    return;
  }
  std::vector<std::pair<uint32_t, uint32_t>> pid_ppid;
  size_t i = 0;
  for (element e : arr) {
    const Loc item = loc.child(kKey, i++);
    object obj;
    if (e.get_object().get(obj)) wrong_type(item, "", "an object", e);
    element pid, ppid;
    if (obj["pid"].get(pid)) missing(item, "pid");
    uint32_t parent = 0;
    if (!obj["ppid"].get(ppid) && !ppid.is_null())
      parent = integer_of<uint32_t>(item, "ppid", ppid);
    pid_ppid.emplace_back(integer_of<uint32_t>(item, "pid", pid), parent);
  }
  const std::vector<size_t> keep =
      processes_to_keep(pid_ppid, gpu_process_pids(out), budget.max_processes);
  constexpr size_t kLeftOut = ~size_t{0};
  std::vector<size_t> slot(pid_ppid.size(), kLeftOut);
  for (size_t k = 0; k < keep.size(); ++k) slot[keep[k]] = k;
  out.processes.resize(keep.size());
  i = 0;
  for (element e : arr) {
    if (slot[i] != kLeftOut)
      parse_process(loc.child(kKey, i), e.get_object().value_unsafe(),
                    out.processes[slot[i]]);
    ++i;
  }
  out.processes_left_out += pid_ppid.size() - keep.size();
  cap_cmdlines(out.processes, budget);
}

}  // namespace

void parse_sample(simdjson::dom::parser& parser, const char* data, size_t len,
                  const std::string& where, Sample& out,
                  const ProcessBudget& budget) {
  enum class Key { GD_SAMPLE_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_SAMPLE_FIELDS(GD_KEY_NAME)};
  const Loc loc{where, nullptr, {}, 0};
  const object obj = root_object(parser, data, len, loc);
  bool have_t = false, have_gpus = false, have_host = false,
       have_events = false, have_holders = false, have_slurm_jobs = false,
       have_allocations = false;
  // Read after the loop: the budget keeps the GPUs' processes first.
  element processes;
  bool have_processes = false;
  out.processes_left_out = 0;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      case Key::t:
        if (!is_number(f.value.type())) {
          wrong_type(loc, f.key, "a number (Unix seconds)", f.value);
        }
        out.t = number_of(f.value);
        have_t = true;
        break;
      case Key::gpus:
        read_object_array(loc, f.key, f.value, out.gpus, parse_gpu_sample);
        have_gpus = true;
        break;
      case Key::host:
        parse_host_sample(loc, f.value, out.host);
        have_host = true;
        break;
      case Key::processes:
        processes = f.value;
        have_processes = true;
        break;
      case Key::processes_left_out:
        if (!f.value.is_null())
          out.processes_left_out = integer_of<uint64_t>(loc, f.key, f.value);
        break;
      case Key::events:
        read_object_array(loc, f.key, f.value, out.events, parse_event);
        have_events = true;
        break;
      case Key::slurm_jobs: {
        array jobs;
        if (!f.value.is_null() && !f.value.get_array().get(jobs) &&
            jobs.size() > kSlurmJobsMax)
          fail(loc, f.key,
               "more than " + std::to_string(kSlurmJobsMax) + " jobs");
        read_object_array(loc, f.key, f.value, out.slurm_jobs, parse_slurm_job);
        have_slurm_jobs = true;
        break;
      }
      case Key::pod_allocations: {
        array list;
        if (!f.value.is_null() && !f.value.get_array().get(list) &&
            list.size() > kPodAllocationsMax)
          fail(loc, f.key,
               "more than " + std::to_string(kPodAllocationsMax) +
                   " allocations");
        read_optional_array(loc, f.key, f.value, out.pod_allocations,
                            have_allocations, parse_pod_allocation);
        break;
      }
      case Key::device_holders:
        if (f.value.is_null()) break;
        if (!out.device_holders) out.device_holders.emplace();
        read_object_array(loc, f.key, f.value, *out.device_holders,
                          parse_device_holder);
        have_holders = true;
        break;
    }
  }
  if (!have_t) missing(loc, "t");
  if (!have_gpus) out.gpus.clear();
  if (!have_host) clear_host_sample(out.host);
  if (have_processes)
    read_processes(loc, processes, budget, out);
  else
    out.processes.clear();
  if (!have_events) out.events.clear();
  if (!have_holders) out.device_holders.reset();
  if (!have_slurm_jobs) out.slurm_jobs.clear();
  if (!have_allocations) out.pod_allocations.reset();
  trace_checks::check_sample(out, where);
}

}  // namespace gd::json_in
