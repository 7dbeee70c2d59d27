// Text and JSON of `gpudoctor who`.
#include "views/who_render.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/bytes_text.h"
#include "common/terminal_text.h"
#include "model/pod_label.h"
#include "views/pod_json.h"

namespace gd {

// The account and its holders are procmgmt's types; this file only shows
// them.
using namespace procmgmt;

namespace {

// Widest command shown in the table; the rest is cut with "~".
constexpr size_t kCommandWidth = 60;

// A table cell of untrusted text padded to its column.
std::string cell(std::string_view text, size_t width) {
  return terminal_cell(text, width);
}

std::string container_text(const ContainerRef& c,
                           const std::optional<ProcEntry>& p) {
  std::string out = c.describe();
  if (p && p->in_nested_pid_namespace()) {
    if (!out.empty()) out += ", ";
    out += fmt::format("pid {} inside", p->nspid.back());
  }
  return out.empty() ? "-" : out;
}

nlohmann::json opt_u64(const std::optional<uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json container_json(const ContainerRef& c) {
  if (c.empty()) return nullptr;
  return {{"runtime",
           c.runtime.empty() ? nlohmann::json() : nlohmann::json(c.runtime)},
          {"id", c.id.empty() ? nlohmann::json() : nlohmann::json(c.id)},
          {"pod_uid",
           c.pod_uid.empty() ? nlohmann::json() : nlohmann::json(c.pod_uid)},
          {"pod_qos",
           c.pod_qos.empty() ? nlohmann::json() : nlohmann::json(c.pod_qos)}};
}

nlohmann::json proc_json(const ProcEntry& p) {
  return {{"pid", p.pid},
          {"ppid", p.ppid},
          {"state", std::string(1, p.state)},
          {"user", p.user},
          {"uid", p.uid ? nlohmann::json(*p.uid) : nlohmann::json()},
          {"command", p.command()},
          {"cgroup", p.cgroup ? nlohmann::json(*p.cgroup) : nlohmann::json()},
          {"nspid", p.nspid}};
}

}  // namespace

std::string render_who(const GpuMemoryAccount& a) {
  std::string out = fmt::format(
      "GPU {}  {}", a.gpu, a.name.empty() ? "?" : terminal_fit(a.name, 64));
  if (!a.readable)
    return out + "\n!! cannot account for its memory: " +
           terminal_safe(a.unreadable_reason, kTerminalSentenceMax) + "\n";
  out += fmt::format("  used {} of {}\n\n",
                     a.used_bytes ? human_bytes_brief(*a.used_bytes) : "n/a",
                     a.total_bytes ? human_bytes_brief(*a.total_bytes) : "n/a");
  if (!a.processes_known)
    out += "!! NVML could not list the processes of this GPU\n";
  out += fmt::format("  {:<9} {:>10}  {:<16} {:<10} {:<28} {}\n", "PID", "USED",
                     "STATUS", "USER", "CONTAINER", "COMMAND");
  for (const auto& ap : a.processes) {
    std::string user = ap.proc ? ap.proc->user : "?";
    std::string cmd = ap.proc ? ap.proc->command() : "";
    out +=
        fmt::format("  {:<9} {:>10}  {:<16} {:<10} {:<28} {}\n", ap.pid,
                    ap.used_bytes ? human_bytes_brief(*ap.used_bytes) : "n/a",
                    holder_status_name(ap.status), cell(user, 10),
                    cell(container_text(ap.container, ap.proc), 28),
                    terminal_fit(cmd, kCommandWidth));
    if (!ap.job.empty())
      out += "            job: " + terminal_fit(ap.job, kCommandWidth) + "\n";
    if (ap.pod)
      out +=
          "            pod: " + terminal_fit(pod_label(ap.pod), kCommandWidth) +
          "\n";
    if (!ap.explanation.empty())
      out += "            -> " +
             terminal_safe(ap.explanation, kTerminalSentenceMax) + "\n";
  }
  if (a.processes.empty() && a.processes_known)
    out += "  (NVML lists no process)\n";
  if (a.driver_reserved_bytes)
    out += fmt::format(
        "  {:<9} {:>10}  {}\n", "driver",
        human_bytes_brief(*a.driver_reserved_bytes),
        "the driver's own reservation (used minus the listed processes)");
  if (a.unexplained_bytes && *a.unexplained_bytes > 0)
    out += fmt::format(
        "  {:<9} {:>10}  {}\n", "other",
        human_bytes_brief(*a.unexplained_bytes),
        a.unknown_size_processes
            ? "processes of unknown size and the driver's reservation"
            : "held by nothing NVML lists (beyond any driver reservation)");
  if (a.used_bytes)
    out += fmt::format("  {:<9} {:>10}  = used, as NVML reports it\n", "total",
                       human_bytes_brief(*a.used_bytes));
  if (a.orphaned && !a.in_container && a.not_owned_bytes &&
      *a.not_owned_bytes > 0)
    out += fmt::format("\n  {} of it not held by any live process\n",
                       human_bytes_brief(*a.not_owned_bytes));
  if (a.missing_bytes > 0)
    out += fmt::format(
        "\n  {} of it belongs to processes no visible process accounts for\n",
        human_bytes_brief(a.missing_bytes));
  if (!a.mig_instances.empty()) {
    out += "\nMIG instances (each has its own memory):\n";
    out += fmt::format("  {:<7} {:<12} {:>10} {:>10} {:>10}  {}\n", "GI/CI",
                       "PROFILE", "USED", "TOTAL", "PROCESSES", "PIDS");
    for (const auto& m : a.mig_instances) {
      std::string pids;
      for (uint32_t p : m.pids)
        pids += (pids.empty() ? "" : ",") + std::to_string(p);
      out += fmt::format(
          "  {:<7} {:<12} {:>10} {:>10} {:>10}  {}\n",
          fmt::format("{}/{}", m.gi_id, m.ci_id), cell(m.profile, 12),
          m.used_bytes ? human_bytes_brief(*m.used_bytes) : "n/a",
          m.total_bytes ? human_bytes_brief(*m.total_bytes) : "n/a",
          human_bytes_brief(m.listed_bytes), pids.empty() ? "-" : pids);
    }
  }

  auto holder_line = [](const OtherHolder& o) {
    std::string devs;
    for (const auto& d : o.devices) devs += (devs.empty() ? "" : ",") + d;
    std::string job =
        o.job.empty()
            ? ""
            : "            job: " + terminal_fit(o.job, kCommandWidth) + "\n";
    if (o.pod)
      job +=
          "            pod: " + terminal_fit(pod_label(o.pod), kCommandWidth) +
          "\n";
    return fmt::format("  {:<9} {:<10} {:<18} {:<28} {}{}\n{}", o.proc.pid,
                       cell(o.proc.user, 10), cell(devs, 18),
                       cell(container_text(o.container, o.proc), 28),
                       terminal_fit(o.proc.command(), kCommandWidth),
                       o.proc.zombie()            ? "  [zombie]"
                       : o.proc.uninterruptible() ? "  [D state]"
                                                  : "",
                       job);
  };
  const size_t probable = probable_holder_pids(a).size();
  if (probable > 0) {
    out += fmt::format(
        "\nProbable holder{} of the memory no live process accounts for "
        "(CUDA device files open, listed by NVML nowhere; most likely "
        "first):\n",
        probable == 1 ? "" : "s");
    for (const auto& o : a.other_holders) {
      if (!o.probable) continue;
      out += holder_line(o);
      std::string why;
      for (const auto& e : o.evidence) why += (why.empty() ? "" : "; ") + e;
      out +=
          "            -> " + terminal_safe(why, kTerminalSentenceMax) + "\n";
    }
  }
  if (a.other_holders.size() > probable) {
    out += probable > 0 ? "\nOther processes with NVIDIA device files open:\n"
                        : "\nOther processes with NVIDIA device files open "
                          "(NVML does not list them here):\n";
    for (const auto& o : a.other_holders)
      if (!o.probable) out += holder_line(o);
  }
  if (!a.advice.empty()) {
    out += "\nWhat to do:\n";
    for (const auto& s : a.advice)
      out += "  - " + terminal_safe(s, kTerminalSentenceMax) + "\n";
  }
  return out;
}

namespace {

// One GPU's account as a JSON tree, for who_to_json and who_list_to_json:
// `who --json` is written with nlohmann throughout (views cannot use the
// trace writer, and a command's JSON is written once, off any hot path).
nlohmann::json who_json(const GpuMemoryAccount& a) {
  nlohmann::json j;
  j["gpu"] = a.gpu;
  j["name"] = a.name;
  j["uuid"] = a.uuid;
  j["readable"] = a.readable;
  j["unreadable_reason"] =
      a.readable ? nlohmann::json() : nlohmann::json(a.unreadable_reason);
  j["total_bytes"] = opt_u64(a.total_bytes);
  j["used_bytes"] = opt_u64(a.used_bytes);
  j["processes_known"] = a.processes_known;
  j["pid_namespace"] = a.in_container ? "container" : "host";
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& ap : a.processes) {
    nlohmann::json p = {
        {"pid", ap.pid},
        {"used_bytes", opt_u64(ap.used_bytes)},
        {"type", ap.type},
        {"status", holder_status_name(ap.status)},
        {"proc", ap.proc ? proc_json(*ap.proc) : nlohmann::json()},
        {"parent", ap.parent ? proc_json(*ap.parent) : nlohmann::json()},
        {"container", container_json(ap.container)},
        {"slurm_job",
         ap.job.empty() ? nlohmann::json() : nlohmann::json(ap.job)},
        {"slurm_job_id", ap.proc && ap.proc->slurm_job_id
                             ? nlohmann::json(*ap.proc->slurm_job_id)
                             : nlohmann::json()},
        {"pod", pod_json(ap.pod)},
        {"devices", ap.devices},
        {"explanation", ap.explanation},
        {"action", ap.action},
        {"gi_id", ap.gi_id ? nlohmann::json(*ap.gi_id) : nlohmann::json()},
        {"ci_id", ap.ci_id ? nlohmann::json(*ap.ci_id) : nlohmann::json()}};
    procs.push_back(std::move(p));
  }
  j["processes"] = std::move(procs);
  j["listed_bytes"] = a.listed_bytes;
  j["missing_bytes"] = a.missing_bytes;
  j["unknown_size_processes"] = a.unknown_size_processes;
  j["driver_reserved_bytes"] = opt_u64(a.driver_reserved_bytes);
  j["unexplained_bytes"] = opt_u64(a.unexplained_bytes);
  j["not_owned_bytes"] = opt_u64(a.not_owned_bytes);
  nlohmann::json others = nlohmann::json::array();
  for (const auto& o : a.other_holders) {
    nlohmann::json p = proc_json(o.proc);
    p["devices"] = o.devices;
    p["this_gpu"] = o.this_gpu;
    p["container"] = container_json(o.container);
    p["slurm_job"] = o.job.empty() ? nlohmann::json() : nlohmann::json(o.job);
    p["pod"] = pod_json(o.pod);
    p["probable"] = o.probable;
    p["evidence"] = o.evidence;
    others.push_back(std::move(p));
  }
  j["other_holders"] = std::move(others);
  j["orphaned"] = a.orphaned;
  j["probable_holders"] = probable_holder_pids(a);
  j["unreadable_fd_pids"] = a.unreadable_fd_pids;
  j["advice"] = a.advice;
  nlohmann::json instances = nlohmann::json::array();
  for (const auto& m : a.mig_instances)
    instances.push_back({{"gi_id", m.gi_id},
                         {"ci_id", m.ci_id},
                         {"profile", m.profile},
                         {"uuid", m.uuid},
                         {"total_bytes", opt_u64(m.total_bytes)},
                         {"used_bytes", opt_u64(m.used_bytes)},
                         {"listed_bytes", m.listed_bytes},
                         {"pids", m.pids}});
  j["mig_instances"] = std::move(instances);
  return j;
}

// Process names and command lines are untrusted bytes: invalid UTF-8 is
// replaced, never thrown on.
std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string who_to_json(const GpuMemoryAccount& a) { return dump(who_json(a)); }

std::string render_who_list(const std::vector<GpuMemoryAccount>& accounts) {
  // Several GPUs to reset: what every reset needs is said once, at the end,
  // not in each GPU's advice.
  size_t resets = 0;
  for (const auto& a : accounts) resets += !a.reset_hint.empty();
  std::string out;
  for (size_t i = 0; i < accounts.size(); ++i) {
    GpuMemoryAccount a = accounts[i];
    if (resets > 1)
      for (auto& s : a.advice)
        if (s == a.reset_hint) s = a.reset_hint_short;
    out += (i ? "\n" : "") + render_who(a);
  }
  if (resets > 1) out += "\nWhat a GPU reset needs: " + reset_needs() + ".\n";
  return out;
}

std::string who_list_to_json(const std::vector<GpuMemoryAccount>& accounts) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& a : accounts) gpus.push_back(who_json(a));
  return dump(nlohmann::json{{"gpus", std::move(gpus)}});
}

}  // namespace gd
