#include "api/processes_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "common/slurm_job_id.h"
#include "trace/json_out.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

constexpr size_t kMaxItems = 100000;
constexpr size_t kMaxProcessText = 64 * 1024;

// "pod": names null where unknown; "deleted" null while not asked.
void append_pod(std::string& out, const ProcessPod& pod) {
  jo::lit(out, ",\"pod\":{\"container\":");
  jo::value(out, pod.container);
  jo::lit(out, ",\"deleted\":");
  jo::value(out, pod.deleted);
  jo::lit(out, ",\"name\":");
  jo::value(out, pod.name);
  jo::lit(out, ",\"namespace\":");
  jo::value(out, pod.namespace_);
  jo::lit(out, ",\"uid\":");
  jo::value(out, pod.uid);
  out += '}';
}

// Keys in the order serve has always sent them (nlohmann's sorted order,
// before this writer).
void append_row(std::string& out, const ProcessRow& p) {
  out += '{';
  if (p.in_proc) {
    jo::lit(out, "\"cgroup\":");
    jo::value(out, p.cgroup);
    out += ',';
  }
  jo::lit(out, "\"children\":[");
  for (size_t i = 0; i < p.children.size(); ++i) {
    const ProcessChild& c = p.children[i];
    if (i) out += ',';
    jo::lit(out, "{\"cpu_pct\":");
    jo::value(out, c.cpu_pct);
    jo::lit(out, ",\"name\":");
    jo::string(out, c.name);
    jo::lit(out, ",\"pid\":");
    jo::unsigned_integer(out, c.pid);
    jo::lit(out, ",\"state\":");
    jo::string(out, c.state);
    out += '}';
  }
  out += ']';
  if (p.in_proc) {
    jo::lit(out, ",\"cmdline\":");
    jo::string(out, p.cmdline);
    jo::lit(out, ",\"cpu_pct\":");
    jo::value(out, p.cpu_pct);
  }
  jo::lit(out, ",\"gpu\":");
  jo::integer(out, p.gpu);
  jo::lit(out, ",\"job\":{\"name\":");
  jo::string(out, p.job.name);
  jo::lit(out, ",\"pid\":");
  jo::unsigned_integer(out, p.job.pid);
  jo::lit(out, ",\"ranks\":");
  jo::unsigned_integer(out, p.job.ranks);
  out += '}';
  if (p.in_proc) {
    jo::lit(out, ",\"name\":");
    jo::string(out, p.name);
  }
  jo::lit(out, ",\"pid\":");
  jo::unsigned_integer(out, p.pid);
  if (p.in_proc && p.pod) append_pod(out, *p.pod);
  if (p.in_proc) {
    jo::lit(out, ",\"ppid\":");
    jo::value(out, p.ppid);
    jo::lit(out, ",\"rss_bytes\":");
    jo::value(out, p.rss_bytes);
    if (p.slurm_job_id) {
      jo::lit(out, ",\"slurm_job\":{\"id\":");
      jo::string(out, *p.slurm_job_id);
      jo::lit(out, ",\"name\":");
      jo::string(out, p.slurm_job_name);
      jo::lit(out, ",\"partition\":");
      jo::string(out, p.slurm_job_partition);
      jo::lit(out, ",\"user\":");
      jo::string(out, p.slurm_job_user);
      out += '}';
    }
    jo::lit(out, ",\"start_time\":");
    jo::value(out, p.start_time);
    jo::lit(out, ",\"state\":");
    jo::string(out, p.state);
    jo::lit(out, ",\"threads\":");
    jo::value(out, p.threads);
  } else {
    jo::lit(out, ",\"state\":\"unknown\"");
  }
  jo::lit(out, ",\"type\":");
  jo::string(out, p.type);
  jo::lit(out, ",\"used_bytes\":");
  jo::value(out, p.used_bytes);
  if (p.in_proc) {
    jo::lit(out, ",\"user\":");
    jo::string(out, p.user);
  }
  out += '}';
}

void append_holder(std::string& out, const OrphanHolderEntry& h) {
  jo::lit(out, "{\"action\":");
  jo::string(out, h.action);
  jo::lit(out, ",\"cmdline\":");
  jo::value(out, h.cmdline);
  jo::lit(out, ",\"dead_owners\":");
  jo::unsigned_list(out, h.dead_owners);
  jo::lit(out, ",\"evidence\":[");
  for (size_t i = 0; i < h.evidence.size(); ++i) {
    if (i) out += ',';
    jo::string(out, h.evidence[i]);
  }
  jo::lit(out, "],\"gpu\":");
  jo::integer(out, h.gpu);
  jo::lit(out, ",\"name\":");
  jo::value(out, h.name);
  jo::lit(out, ",\"pid\":");
  jo::unsigned_integer(out, h.pid);
  jo::lit(out, ",\"user\":");
  jo::value(out, h.user);
  out += '}';
}

// --- reading -------------------------------------------------------------

const char* const kProcessesWhat = "processes";

[[noreturn]] void refuse(const std::string& why) {
  throw std::runtime_error(std::string(kProcessesWhat) + ": " + why);
}

// The list `key` of `j` (absent or null: empty), at most kMaxItems long.
const json* list(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  if (!it->is_array()) refuse(std::string("'") + key + "' is not a list");
  if (it->size() > kMaxItems)
    refuse(std::string("'") + key + "' has more than 100000 items");
  return &*it;
}

const json& object_at(const json& item, const char* key) {
  if (!item.is_object())
    refuse(std::string("an item of '") + key + "' is not an object");
  return item;
}

uint32_t pid_at(const json& j, const char* key = "pid") {
  return static_cast<uint32_t>(
      optional_integer(j, key, 0, kMaxPid, kProcessesWhat).value_or(0));
}

int gpu_of(const json& j) {
  return static_cast<int>(
      optional_integer(j, "gpu", 0, kMaxGpu, kProcessesWhat).value_or(0));
}

std::optional<uint64_t> optional_bytes(const json& j, const char* key) {
  auto v = optional_integer(j, key, 0, INT64_MAX, kProcessesWhat);
  if (!v) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<std::string> optional_text(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return text_or_empty(j, key, kMaxProcessText, kProcessesWhat);
}

std::vector<uint32_t> pids_in(const json& j, const char* key) {
  std::vector<uint32_t> out;
  if (const json* arr = list(j, key))
    for (const json& p : *arr) {
      if (!p.is_number_integer() || p.get<int64_t>() < 0 ||
          p.get<int64_t>() > kMaxPid)
        refuse(std::string("a pid in '") + key + "' is not 0..4194304");
      out.push_back(p.get<uint32_t>());
    }
  return out;
}

std::optional<ProcessPod> pod_from(const json& j) {
  auto it = j.find("pod");
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) refuse("'pod' is not an object");
  ProcessPod pod;
  auto text = [&](const char* key) -> std::optional<std::string> {
    auto v = it->find(key);
    if (v == it->end() || v->is_null()) return std::nullopt;
    return text_or_empty(*it, key, kPodTextMax, kProcessesWhat);
  };
  pod.uid = text("uid");
  pod.namespace_ = text("namespace");
  pod.name = text("name");
  pod.container = text("container");
  auto deleted = it->find("deleted");
  if (deleted != it->end() && !deleted->is_null()) {
    if (!deleted->is_boolean()) refuse("'pod.deleted' is not a boolean");
    pod.deleted = deleted->get<bool>();
  }
  return pod;
}

ProcessRow row_from(const json& item) {
  const json& j = object_at(item, "processes");
  ProcessRow p;
  p.gpu = gpu_of(j);
  p.pid = pid_at(j);
  p.used_bytes = optional_bytes(j, "used_bytes");
  p.type = text_or_empty(j, "type", kMaxProcessText, kProcessesWhat);
  p.state = text_or_empty(j, "state", kMaxProcessText, kProcessesWhat);
  // serve sends the /proc fields together, name always among them.
  p.in_proc = j.contains("name");
  if (p.in_proc) {
    p.ppid = optional_integer(j, "ppid", 0, kMaxPid, kProcessesWhat);
    p.user = text_or_empty(j, "user", kMaxProcessText, kProcessesWhat);
    p.name = text_or_empty(j, "name", kMaxProcessText, kProcessesWhat);
    p.cmdline = text_or_empty(j, "cmdline", kMaxProcessText, kProcessesWhat);
    p.cpu_pct = optional_number(j, "cpu_pct", kProcessesWhat);
    p.threads = optional_integer(j, "threads", 0, INT32_MAX, kProcessesWhat);
    p.rss_bytes = optional_bytes(j, "rss_bytes");
    p.start_time = optional_number(j, "start_time", kProcessesWhat);
    p.cgroup = optional_text(j, "cgroup");
    auto slurm = j.find("slurm_job");
    if (slurm != j.end() && !slurm->is_null()) {
      if (!slurm->is_object()) refuse("'slurm_job' is not an object");
      std::string id =
          text_or_empty(*slurm, "id", kMaxProcessText, kProcessesWhat);
      if (!is_slurm_job_id(id))
        refuse("'slurm_job.id' is not a Slurm job id (1..10 digits)");
      p.slurm_job_id = std::move(id);
      p.slurm_job_name =
          text_or_empty(*slurm, "name", kMaxProcessText, kProcessesWhat);
      p.slurm_job_user =
          text_or_empty(*slurm, "user", kMaxProcessText, kProcessesWhat);
      p.slurm_job_partition =
          text_or_empty(*slurm, "partition", kMaxProcessText, kProcessesWhat);
    }
    p.pod = pod_from(j);
  } else {
    p.state = "unknown";
  }
  auto job = j.find("job");
  if (job != j.end() && !job->is_null()) {
    if (!job->is_object()) refuse("'job' is not an object");
    p.job.pid = pid_at(*job);
    p.job.name = text_or_empty(*job, "name", kMaxProcessText, kProcessesWhat);
    p.job.ranks = static_cast<uint64_t>(
        optional_integer(*job, "ranks", 0, kMaxItems, kProcessesWhat)
            .value_or(0));
  }
  if (const json* kids = list(j, "children"))
    for (const json& k : *kids) {
      const json& c = object_at(k, "children");
      p.children.push_back(
          {pid_at(c), text_or_empty(c, "name", kMaxProcessText, kProcessesWhat),
           text_or_empty(c, "state", kMaxProcessText, kProcessesWhat),
           optional_number(c, "cpu_pct", kProcessesWhat)});
    }
  return p;
}

OrphanHolderEntry holder_from(const json& item) {
  const json& j = object_at(item, "orphan_holders");
  OrphanHolderEntry h;
  h.gpu = gpu_of(j);
  h.pid = pid_at(j);
  h.user = optional_text(j, "user");
  h.name = optional_text(j, "name");
  h.cmdline = optional_text(j, "cmdline");
  h.dead_owners = pids_in(j, "dead_owners");
  if (const json* ev = list(j, "evidence"))
    for (const json& e : *ev) {
      if (!e.is_string()) refuse("an item of 'evidence' is not a string");
      h.evidence.push_back(
          e.get_ref<const std::string&>().substr(0, kMaxProcessText));
    }
  h.action = text_or_empty(j, "action", kMaxProcessText, kProcessesWhat);
  return h;
}

}  // namespace

std::string processes_json(const ProcessesReply& r) {
  std::string out;
  out += '{';
  if (r.orphan_holders) {
    jo::lit(out, "\"orphan_holders\":[");
    for (size_t i = 0; i < r.orphan_holders->size(); ++i) {
      if (i) out += ',';
      append_holder(out, (*r.orphan_holders)[i]);
    }
    jo::lit(out, "],");
  }
  jo::lit(out, "\"processes\":[");
  for (size_t i = 0; i < r.processes.size(); ++i) {
    if (i) out += ',';
    append_row(out, r.processes[i]);
  }
  jo::lit(out, "],\"t\":");
  jo::value(out, r.t);
  out += '}';
  return out;
}

ProcessesReply parse_processes_json(std::string_view body) {
  json j = parse_object(body, kProcessesWhat);
  auto arr = j.find("processes");
  if (arr == j.end() || !arr->is_array()) refuse("no 'processes' array");
  ProcessesReply r;
  r.t = optional_number(j, "t", kProcessesWhat);
  for (const json& item : *list(j, "processes"))
    r.processes.push_back(row_from(item));
  auto held = j.find("orphan_holders");
  if (held != j.end() && !held->is_null()) {
    r.orphan_holders.emplace();
    for (const json& item : *list(j, "orphan_holders"))
      r.orphan_holders->push_back(holder_from(item));
  }
  return r;
}

}  // namespace gd::api
