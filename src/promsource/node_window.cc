#include "promsource/node_window.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include "model/limits.h"
#include "promsource/node_match.h"

namespace gd::promsource {
namespace {

using http::prom::Series;

constexpr double kBytesPerMiB = 1024.0 * 1024.0;
// The "gpu" label as an index, -1 when it is not a number; any number at
// or past kMaxGpusPerNode is kMaxGpusPerNode (refused by the caller).
int gpu_index(const Series& s) {
  const std::string& text = s.label("gpu");
  if (text.empty()) return -1;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    if (v < kMaxGpusPerNode) v = v * 10 + (c - '0');
  }
  return std::min(v, kMaxGpusPerNode);
}

// A pid label ("pid", "ppid") as a pid; nullopt when it is not one.
opt<uint32_t> pid_label(const std::string& text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0 || v > 0xffffffffu) return std::nullopt;
  return static_cast<uint32_t>(v);
}

}  // namespace

NodeWindow::NodeWindow(NodeSelector node, double start, double end,
                       double step_s)
    : node_(std::move(node)), start_(start), step_(step_s) {
  if (!(step_s > 0) || !std::isfinite(start) || !std::isfinite(end) ||
      end < start)
    throw std::invalid_argument("the time range or step is not valid");
  const double steps = std::floor((end - start) / step_s + 1e-9) + 1;
  if (steps > static_cast<double>(kMaxSteps))
    throw std::invalid_argument(
        "the range asks for " + std::to_string(static_cast<long long>(steps)) +
        " samples, more than " + std::to_string(kMaxSteps) +
        " (two days at 15 s); use a longer --step or a shorter range");
  steps_ = static_cast<size_t>(steps);
  host_.resize(steps_);
}

size_t NodeWindow::step_of(double t) const {
  const double i = std::round((t - start_) / step_);
  // Prometheus writes times in milliseconds: a grid time is within 1 ms.
  if (!(i >= 0) || i >= static_cast<double>(steps_) ||
      std::fabs(start_ + i * step_ - t) > 0.001)
    return steps_;
  return static_cast<size_t>(i);
}

NodeWindow::Gpu& NodeWindow::gpu(int index, const Series& s) {
  auto [it, fresh] = gpus_.try_emplace(index);
  Gpu& g = it->second;
  if (fresh) g.info.index = index;
  // What labels say about the GPU, from the first series that says it.
  auto fill = [&](std::string& field, const char* label) {
    if (field.empty()) field = s.label(label);
  };
  fill(g.info.uuid, "UUID");
  fill(g.info.name, "modelName");
  fill(g.info.pci_bus_id, "pci_bus_id");
  fill(driver_version_, "DCGM_FI_DRIVER_VERSION");
  return g;
}

GpuSample& NodeWindow::sample_at(Gpu& g, size_t i) {
  auto [it, fresh] = g.at.try_emplace(i);
  if (fresh) it->second.index = g.info.index;
  return it->second;
}

void NodeWindow::add(const Entry& e, const std::vector<Series>& series) {
  if (e.scope == Scope::kGpu)
    add_gpu(e, series);
  else if (e.scope == Scope::kProcess)
    add_process(e, series);
  else
    add_host(e, series);
}

void NodeWindow::add_gpu(const Entry& e, const std::vector<Series>& series) {
  for (const Series& s : series) {
    const int index = gpu_index(s);
    // MIG instances' series (GPU_I_ID) are not the GPU's; a series of
    // another node is not this one's, whatever the server answered.
    if (index < 0 || !s.label("GPU_I_ID").empty() ||
        !is_node_of(node_, s.label("Hostname"), s.label("instance")))
      continue;
    if (index >= kMaxGpusPerNode)
      throw std::runtime_error(
          std::string("a series of ") + e.query + " names GPU " +
          (s.label("gpu").size() > 9 ? "index of 10 digits or more"
                                     : s.label("gpu")) +
          " of the node; a node has at most " +
          std::to_string(kMaxGpusPerNode) + " GPUs (gpu label 0 to " +
          std::to_string(kMaxGpusPerNode - 1) +
          "): the node's series are refused");
    if (!given_.emplace(e.field, index).second) continue;
    Gpu& g = gpu(index, s);
    switch (e.kind) {
      case Kind::kSample:
        for (const auto& p : s.points) {
          const size_t i = step_of(p.t);
          if (i == steps_ || !std::isfinite(p.v)) continue;
          e.gpu(sample_at(g, i), p.v);
        }
        break;
      case Kind::kFact:
        for (auto p = s.points.rbegin(); p != s.points.rend(); ++p)
          if (std::isfinite(p->v)) {
            e.gpu_fact(g.info, p->v);
            break;
          }
        break;
      case Kind::kXid:
        add_xid(index, s);
        break;
      case Kind::kFbFree:
        add_fb_free(g, s);
        break;
      case Kind::kCpuModes:  // a host kind
      case Kind::kProcessList:
      case Kind::kDeadProcess:
        break;
    }
  }
}

// DCGM keeps the last Xid's code: each change to a non-zero code is an Xid
// at that time (a value that is no Xid code, 0.5 or 70000, is none). A code
// already there when the window starts happened earlier, at a time no series
// tells, and is left out.
void NodeWindow::add_xid(int index, const Series& s) {
  opt<double> last;
  for (const auto& p : s.points) {
    const size_t i = step_of(p.t);
    if (i == steps_ || !std::isfinite(p.v)) continue;
    // Only a code the trace can carry (1 to kMaxXidCode, whole): what
    // export writes, diagnose --from reads.
    if (last && p.v != *last && p.v >= 1 && p.v <= kMaxXidCode &&
        p.v == std::floor(p.v)) {
      Event ev;
      ev.kind = "xid";
      ev.gpu = index;
      ev.code = static_cast<int>(p.v);
      ev.text = "DCGM_FI_DEV_XID_ERRORS became " + std::to_string(*ev.code);
      events_[i].push_back(std::move(ev));
    }
    last = p.v;
  }
}

// The total as used + free where both are known at one time, when no
// exact total came before.
void NodeWindow::add_fb_free(Gpu& g, const Series& s) {
  if (g.info.memory_total_bytes) return;
  for (const auto& p : s.points) {
    const size_t i = step_of(p.t);
    if (i == steps_ || !std::isfinite(p.v) || p.v < 0) continue;
    auto at = g.at.find(i);
    if (at == g.at.end() || !at->second.mem_used_bytes) continue;
    const double total =
        static_cast<double>(*at->second.mem_used_bytes) + p.v * kBytesPerMiB;
    if (total < 9.2e18)
      g.info.memory_total_bytes = static_cast<uint64_t>(total);
  }
}

void NodeWindow::add_host(const Entry& e, const std::vector<Series>& series) {
  if (e.kind == Kind::kCpuModes) {
    add_cpu_modes(series);
    return;
  }
  // The server aggregated the node's series into one; more is not ours.
  if (series.empty() || !given_.emplace(e.field, -1).second) return;
  const Series& s = series.front();
  if (e.kind == Kind::kFact) {
    for (auto p = s.points.rbegin(); p != s.points.rend(); ++p)
      if (std::isfinite(p->v)) {
        e.host_fact(host_info_, p->v);
        break;
      }
    return;
  }
  for (const auto& p : s.points) {
    const size_t i = step_of(p.t);
    if (i == steps_ || !std::isfinite(p.v)) continue;
    if (!host_[i]) host_[i].emplace();
    e.host(*host_[i], p.v);
  }
}

// The CPU shares as the procfs source counts them: busy is user, nice,
// system, irq and softirq, of the time of all modes node_exporter lists.
// A share is given at a step only where its modes and the total have
// values there (as 100 * sum(rate(busy)) / sum(rate(all)) would be), and a
// field only when some step has it (else serve's series may give it).
void NodeWindow::add_cpu_modes(const std::vector<Series>& series) {
  struct Share {
    const char* field;
    bool (*counts)(const std::string& mode);
    void (*set)(HostSample&, double);
  };
  static const Share kShares[] = {
      {"cpu_util_pct",
       [](const std::string& m) {
         return m == "user" || m == "nice" || m == "system" || m == "irq" ||
                m == "softirq";
       },
       [](HostSample& h, double v) { h.cpu_util_pct = v; }},
      {"cpu_iowait_pct", [](const std::string& m) { return m == "iowait"; },
       [](HostSample& h, double v) { h.cpu_iowait_pct = v; }},
      {"cpu_steal_pct", [](const std::string& m) { return m == "steal"; },
       [](HostSample& h, double v) { h.cpu_steal_pct = v; }},
  };
  std::vector<double> total(steps_, 0);
  std::vector<bool> any(steps_, false);
  for (const Series& s : series)
    for (const auto& p : s.points)
      if (const size_t i = step_of(p.t); i != steps_ && std::isfinite(p.v)) {
        total[i] += p.v;
        any[i] = true;
      }
  for (const Share& share : kShares) {
    if (given_.count({share.field, -1})) continue;
    std::vector<double> part(steps_, 0);
    std::vector<bool> has(steps_, false);
    for (const Series& s : series) {
      if (!share.counts(s.label("mode"))) continue;
      for (const auto& p : s.points)
        if (const size_t i = step_of(p.t); i != steps_ && std::isfinite(p.v)) {
          part[i] += p.v;
          has[i] = true;
        }
    }
    bool gave = false;
    for (size_t i = 0; i < steps_; ++i) {
      if (!has[i] || !any[i] || !(total[i] > 0)) continue;
      if (!host_[i]) host_[i].emplace();
      share.set(*host_[i], 100 * part[i] / total[i]);
      gave = true;
    }
    if (gave) given_.emplace(share.field, -1);
  }
}

void NodeWindow::add_process(const Entry& e,
                             const std::vector<Series>& series) {
  size_t kept = 0;
  for (const Series& s : series) {
    if (!is_node_of(node_, s.label("Hostname"), s.label("instance"))) continue;
    if (kept == kMaxProcessSeries) break;
    const int index = gpu_index(s);
    if (e.kind == Kind::kProcessList) {
      if (index >= 0) add_process_list(index, s), ++kept;
      continue;
    }
    const opt<uint32_t> pid = pid_label(s.label("pid"));
    if (!pid) continue;
    ++kept;
    if (e.kind == Kind::kDeadProcess)
      add_dead_process(*pid, s);
    else if (e.gpu_proc && index >= 0)
      add_gpu_process(e, index, *pid, s);
    else if (e.proc)
      add_node_process(e, *pid, s);
  }
}

// Opens the GPU's process list at each step serve counted it, where the
// GPU has a sample.
void NodeWindow::add_process_list(int index, const Series& s) {
  auto it = gpus_.find(index);
  if (it == gpus_.end()) return;
  Gpu& g = it->second;
  for (const auto& p : s.points) {
    const size_t i = step_of(p.t);
    if (i == steps_ || !std::isfinite(p.v) || !g.at.count(i) || p.v < 0 ||
        p.v > 1e6)
      continue;
    g.lists[i].size = static_cast<int>(p.v);
  }
}

// A value of a listed process, into the lists its GPU has open.
void NodeWindow::add_gpu_process(const Entry& e, int index, uint32_t pid,
                                 const Series& s) {
  auto it = gpus_.find(index);
  if (it == gpus_.end() || it->second.lists.empty()) return;
  Gpu& g = it->second;
  // The series' values at steps with an open list, in step order.
  std::vector<std::pair<size_t, double>> values;
  for (const auto& p : s.points) {
    const size_t i = step_of(p.t);
    if (i == steps_ || !std::isfinite(p.v) || !g.lists.count(i)) continue;
    values.emplace_back(i, p.v);
  }
  if (values.empty()) return;
  std::stable_sort(
      values.begin(), values.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  auto [slot, fresh] = g.slot_of.try_emplace(pid, g.where.size());
  if (fresh) g.where.emplace_back();
  // The pid's places merged with the series' steps: one walk of both.
  std::vector<std::pair<size_t, uint32_t>>& where = g.where[slot->second];
  std::vector<std::pair<size_t, uint32_t>> merged;
  merged.reserve(where.size() + values.size());
  size_t k = 0;
  for (const auto& [i, v] : values) {
    while (k < where.size() && where[k].first < i) merged.push_back(where[k++]);
    std::vector<GpuProcess>& list = g.lists[i].listed;
    uint32_t at = 0;
    if (k < where.size() && where[k].first == i) {
      at = where[k].second;
    } else if (!merged.empty() && merged.back().first == i) {
      at = merged.back().second;
    } else {
      at = static_cast<uint32_t>(list.size());
      list.emplace_back().pid = pid;
      merged.emplace_back(i, at);
    }
    e.gpu_proc(list[at], v);
  }
  while (k < where.size()) merged.push_back(where[k++]);
  where.swap(merged);
}

void NodeWindow::add_node_process(const Entry& e, uint32_t pid,
                                  const Series& s) {
  Proc proc;
  proc.pid = pid;
  proc.ppid = pid_label(s.label("ppid"));
  proc.name = s.label("comm");
  proc.user = s.label("user");
  proc.set = e.proc;
  keep_process(std::move(proc), s, false);
}

// A dead holder, as the local trace has it: a process entry with the state
// serve saw ("Z", or "missing" from /proc), at each step it was seen.
void NodeWindow::add_dead_process(uint32_t pid, const Series& s) {
  Proc proc;
  proc.pid = pid;
  proc.state = s.label("state") == "Z" ? "Z" : "missing";
  keep_process(std::move(proc), s, true);
}

void NodeWindow::keep_process(Proc proc, const Series& s, bool only_ones) {
  if (proc_at_.empty()) proc_at_.resize(steps_);
  const size_t at = procs_.size();
  bool any = false;
  for (const auto& p : s.points) {
    const size_t i = step_of(p.t);
    if (i == steps_ || !std::isfinite(p.v) || (only_ones && p.v != 1)) continue;
    proc_at_[i].emplace_back(at, p.v);
    any = true;
  }
  if (any) procs_.push_back(std::move(proc));
}

TraceHeader NodeWindow::header() const {
  TraceHeader h;
  h.host = host_info_;
  h.host.hostname = node_.node;
  // The exporters carry no kernel-log lines: the rules that live on them
  // list themselves as not judged instead of passing for "all is well".
  h.kernel_log_error =
      "not in Prometheus: the exporters carry no kernel-log lines (PCIe AER, "
      "OOM kills; Xid only as DCGM_FI_DEV_XID_ERRORS' last code)";
  if (!driver_version_.empty()) {
    DriverInfo d;
    d.driver_version = driver_version_;
    h.driver = d;
  }
  for (const auto& [index, g] : gpus_) h.gpus.push_back(g.info);
  return h;
}

void NodeWindow::each_sample(
    const std::function<void(const Sample&)>& fn) const {
  std::unordered_set<uint32_t> seen;  // the pids of a sample's processes
  for (size_t i = 0; i < steps_; ++i) {
    Sample s;
    s.t = start_ + static_cast<double>(i) * step_;
    for (const auto& [index, g] : gpus_) {
      auto at = g.at.find(i);
      if (at == g.at.end()) continue;
      s.gpus.push_back(at->second);
      if (auto l = g.lists.find(i);
          l != g.lists.end() &&
          l->second.listed.size() >= static_cast<size_t>(l->second.size))
        s.gpus.back().processes = l->second.listed;
    }
    if (!proc_at_.empty()) {
      seen.clear();
      for (const auto& [at, value] : proc_at_[i]) {
        const Proc& proc = procs_[at];
        // A pid that two series give (its name changed): the first.
        if (!seen.insert(proc.pid).second) continue;
        ProcessSample& p = s.processes.emplace_back();
        p.pid = proc.pid;
        p.ppid = proc.ppid;
        p.name = proc.name;
        p.user = proc.user;
        p.state = proc.state;
        if (proc.set) proc.set(p, value);
      }
    }
    if (auto ev = events_.find(i); ev != events_.end()) s.events = ev->second;
    if (s.gpus.empty() && !host_[i] && s.events.empty()) continue;
    if (host_[i]) s.host = *host_[i];
    fn(s);
  }
}

}  // namespace gd::promsource
