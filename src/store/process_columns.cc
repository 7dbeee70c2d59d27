#include "store/process_columns.h"

#include <bit>
#include <iterator>
#include <map>
#include <tuple>

#include "common/slurm_job_id.h"
#include "store/column_codec.h"

namespace gd::store {
namespace {

// Per-sample list markers.
constexpr uint8_t kNotListed = 0;  // GPU lists only: processes unknown
constexpr uint8_t kSameList = 1;   // as the previous sample
constexpr uint8_t kNewList = 2;    // count, then entry numbers

// Statics flags of a process entry.
constexpr uint8_t kHasCgroup = 1;
constexpr uint8_t kHasStartTime = 2;
constexpr uint8_t kHasNsPid = 4;
constexpr uint8_t kHasSlurmJob = 8;
constexpr uint8_t kHasPod = 16;
constexpr uint8_t kKnownFlags =
    kHasCgroup | kHasStartTime | kHasNsPid | kHasSlurmJob | kHasPod;

// A pod: which of uid, namespace, name, container follow (bits 0-3), and
// deleted: unknown, false, true (bits 4-5).
constexpr uint8_t kPodDeletedFalse = 16, kPodDeletedTrue = 32;

std::optional<std::string> ProcessPod::*const kPodTexts[] = {
    &ProcessPod::uid, &ProcessPod::namespace_, &ProcessPod::name,
    &ProcessPod::container};

void write_pod(ByteWriter& w, const ProcessPod& pod) {
  uint8_t mask = 0;
  for (size_t i = 0; i < std::size(kPodTexts); ++i)
    if (pod.*kPodTexts[i]) mask |= static_cast<uint8_t>(1u << i);
  if (pod.deleted) mask |= *pod.deleted ? kPodDeletedTrue : kPodDeletedFalse;
  w.byte(mask);
  for (auto field : kPodTexts)
    if (pod.*field) w.str(*(pod.*field));
}

ProcessPod read_pod(ByteReader& r) {
  const uint8_t mask = r.byte();
  if (mask & ~0x3F || (mask & kPodDeletedFalse && mask & kPodDeletedTrue))
    throw CodecError("bad pod fields");
  ProcessPod pod;
  for (size_t i = 0; i < std::size(kPodTexts); ++i)
    if (mask & (1u << i)) {
      std::string_view text = r.str();
      if (text.size() > kPodTextMax) throw CodecError("pod text too long");
      pod.*kPodTexts[i] = std::string(text);
    }
  if (mask & kPodDeletedFalse) pod.deleted = false;
  if (mask & kPodDeletedTrue) pod.deleted = true;
  return pod;
}

// The pod as one comparable value (Identity's last member).
std::optional<std::string> pod_identity(const std::optional<ProcessPod>& pod) {
  if (!pod) return std::nullopt;
  std::string key;
  for (auto field : kPodTexts) {
    const auto& v = (*pod).*field;
    key.append(v ? "+" + *v : "-").push_back('\0');
  }
  key += pod->deleted ? (*pod->deleted ? "d" : "l") : "?";
  return key;
}

template <typename T>
Cell cell_of(const std::optional<T>& v) {
  Cell c;
  if (!v) return c;
  c.present = true;
  if constexpr (std::is_same_v<T, double>) {
    c.is_double = true;
    c.d = *v;
  } else {
    c.i = static_cast<int64_t>(*v);
  }
  return c;
}

// What makes a process entry: everything kept per process that is not a
// per-sample number. A process whose strings change (exec, a library
// loaded) continues as a new entry.
using Identity =
    std::tuple<uint32_t, std::string, std::string, std::string,
               std::optional<std::string>, std::vector<std::string>,
               std::optional<uint64_t>, std::optional<uint32_t>,
               std::optional<std::string>, std::optional<std::string>>;

Identity identity_of(const ProcessSample& p) {
  std::optional<uint64_t> start;
  if (p.start_time) start = std::bit_cast<uint64_t>(*p.start_time);
  return {p.pid,  p.user, p.name,   p.cmdline,      p.cgroup,
          p.libs, start,  p.ns_pid, p.slurm_job_id, pod_identity(p.pod)};
}

void write_list(ByteWriter& w, const std::vector<uint32_t>* list,
                const std::vector<uint32_t>* prev, bool have_prev) {
  if (!list) {
    w.byte(kNotListed);
    return;
  }
  if (have_prev && prev && *prev == *list) {
    w.byte(kSameList);
    return;
  }
  w.byte(kNewList);
  w.varint(list->size());
  for (uint32_t e : *list) w.varint(e);
}

// What listing an entry costs once decoded: its place in the list and in
// the entry's positions, and the sample's copy of the entry, strings
// included (apply_processes). One entry with a long command line listed by
// every sample is many times the block's size.
size_t listing_cost(const ProcessSample& p) {
  size_t n = 2 * sizeof(uint32_t) + sizeof(ProcessSample) + p.user.size() +
             p.name.size() + p.cmdline.size() +
             (p.cgroup ? p.cgroup->size() : 0);
  for (const auto& lib : p.libs) n += sizeof(std::string) + lib.size();
  if (p.pod)
    for (auto field : kPodTexts)
      if ((*p.pod).*field) n += ((*p.pod).*field)->size();
  return n;
}

size_t listing_cost(const ProcessColumns::GpuProc& p) {
  return 2 * sizeof(uint32_t) + sizeof(GpuProcess) + p.type.size();
}

// Reads one sample's list into `lists` (its last one the list before,
// if any); kNotListed only where allowed. Each listing is charged its
// entry's cost[e]: a byte that repeats a whole list costs what the copies
// will.
void read_list(ByteReader& r, ProcessLists& lists,
               const std::vector<size_t>& cost, bool may_be_unlisted) {
  const uint8_t mark = r.byte();
  if (mark == kNotListed && may_be_unlisted) {
    lists.add_unlisted();
    return;
  }
  if (mark == kSameList) {
    if (lists.size() == 0 || !lists.listed(lists.size() - 1))
      throw CodecError("process list repeats a missing list");
    for (uint32_t e : lists[lists.size() - 1])
      r.budget().charge(1, cost[e], "process listings");
    lists.add_repeat();
    return;
  }
  if (mark != kNewList) throw CodecError("bad process list marker");
  const size_t count = r.count(1, "listed processes");
  lists.add_new();
  for (size_t k = 0; k < count; ++k) {
    const uint64_t v = r.varint();
    if (v >= cost.size()) throw CodecError("process list names no entry");
    const auto e = static_cast<uint32_t>(v);
    r.budget().charge(1, cost[e], "process listings");
    lists.add_entry(e);
  }
}

// Entry e's sample positions, from the lists.
template <typename Lists, typename Get>
std::vector<std::vector<uint32_t>> positions(const Lists& lists, size_t entries,
                                             Get get) {
  std::vector<std::vector<uint32_t>> at(entries);
  for (size_t i = 0; i < lists.size(); ++i)
    if (const std::vector<uint32_t>* l = get(lists[i]))
      for (uint32_t e : *l)
        if (at[e].empty() || at[e].back() != i)
          at[e].push_back(static_cast<uint32_t>(i));
  return at;
}

std::vector<std::vector<uint32_t>> positions(const ProcessLists& lists,
                                             size_t entries) {
  std::vector<std::vector<uint32_t>> at(entries);
  for (size_t i = 0; i < lists.size(); ++i)
    if (lists.listed(i))
      for (uint32_t e : lists[i])
        if (at[e].empty() || at[e].back() != i)
          at[e].push_back(static_cast<uint32_t>(i));
  return at;
}

const std::vector<uint32_t>* plain(const std::vector<uint32_t>& l) {
  return &l;
}
const std::vector<uint32_t>* maybe(
    const std::optional<std::vector<uint32_t>>& l) {
  return l ? &*l : nullptr;
}

}  // namespace

void write_processes(ByteWriter& w, std::span<const Sample> samples,
                     const std::vector<int>& gpu_indices,
                     bool gpu_utilisation) {
  const size_t n = samples.size();
  // Host processes: the table in order of first appearance.
  std::map<Identity, uint32_t> index;
  std::vector<const ProcessSample*> first;
  std::vector<std::vector<uint32_t>> lists(n);
  for (size_t i = 0; i < n; ++i)
    for (const auto& p : samples[i].processes) {
      auto [it, added] = index.try_emplace(identity_of(p),
                                           static_cast<uint32_t>(first.size()));
      if (added) first.push_back(&p);
      lists[i].push_back(it->second);
    }
  w.varint(first.size());
  for (const ProcessSample* p : first) {
    w.varint(p->pid);
    w.str(p->user);
    w.str(p->name);
    w.str(p->cmdline);
    w.byte(static_cast<uint8_t>(
        (p->cgroup ? kHasCgroup : 0) | (p->start_time ? kHasStartTime : 0) |
        (p->ns_pid ? kHasNsPid : 0) | (p->slurm_job_id ? kHasSlurmJob : 0) |
        (p->pod ? kHasPod : 0)));
    if (p->cgroup) w.str(*p->cgroup);
    if (p->start_time) w.varint(std::bit_cast<uint64_t>(*p->start_time));
    if (p->ns_pid) w.varint(*p->ns_pid);
    if (p->slurm_job_id) w.str(*p->slurm_job_id);
    if (p->pod) write_pod(w, *p->pod);
    w.varint(p->libs.size());
    for (const auto& lib : p->libs) w.str(lib);
  }
  for (size_t i = 0; i < n; ++i)
    write_list(w, &lists[i], i > 0 ? &lists[i - 1] : nullptr, i > 0);
  // Each entry's numbers over the samples that list it.
  auto at = positions(lists, first.size(), plain);
  for (size_t e = 0; e < first.size(); ++e) {
    // The process of entry e in sample i (its first listing there).
    auto proc_in = [&](uint32_t i) -> const ProcessSample& {
      const auto& procs = samples[i].processes;
      for (size_t k = 0; k < lists[i].size(); ++k)
        if (lists[i][k] == e) return procs[k];
      throw CodecError("process table out of step");  // cannot happen
    };
    std::vector<std::string> states;
    std::vector<Cell> ppid, state, cpu, threads, rss, shm;
    for (uint32_t i : at[e]) {
      const ProcessSample& p = proc_in(i);
      ppid.push_back(cell_of(p.ppid));
      size_t s = 0;
      while (s < states.size() && states[s] != p.state) ++s;
      if (s == states.size()) states.push_back(p.state);
      state.push_back(cell_of(std::optional<uint64_t>(s)));
      cpu.push_back(cell_of(p.cpu_pct));
      threads.push_back(cell_of(p.threads));
      rss.push_back(cell_of(p.rss_bytes));
      shm.push_back(cell_of(p.dev_shm_bytes));
    }
    w.varint(states.size());
    for (const auto& s : states) w.str(s);
    write_column(w, ppid, false);
    write_column(w, state, false);
    write_column(w, cpu, true);
    write_column(w, threads, false);
    write_column(w, rss, false);
    write_column(w, shm, false);
  }

  // NVML's process list of each GPU.
  for (int g : gpu_indices) {
    std::map<std::pair<uint32_t, std::string>, uint32_t> gindex;
    std::vector<const GpuProcess*> gfirst;
    std::vector<std::optional<std::vector<uint32_t>>> glists(n);
    for (size_t i = 0; i < n; ++i) {
      const GpuSample* gs = nullptr;
      for (const auto& x : samples[i].gpus)
        if (x.index == g) gs = &x;
      if (!gs || !gs->processes) continue;
      glists[i].emplace();
      for (const auto& p : *gs->processes) {
        auto [it, added] = gindex.try_emplace(
            {p.pid, p.type}, static_cast<uint32_t>(gfirst.size()));
        if (added) gfirst.push_back(&p);
        glists[i]->push_back(it->second);
      }
    }
    w.varint(gfirst.size());
    for (const GpuProcess* p : gfirst) {
      w.varint(p->pid);
      w.str(p->type);
    }
    for (size_t i = 0; i < n; ++i)
      write_list(w, maybe(glists[i]), i > 0 ? maybe(glists[i - 1]) : nullptr,
                 i > 0 && glists[i - 1].has_value());
    auto gat = positions(glists, gfirst.size(), maybe);
    for (size_t e = 0; e < gfirst.size(); ++e) {
      std::vector<Cell> used, sm, mem, gi, ci;
      for (uint32_t i : gat[e]) {
        const GpuSample* gs = nullptr;
        for (const auto& x : samples[i].gpus)
          if (x.index == g) gs = &x;
        const auto& list = *glists[i];
        for (size_t k = 0; k < list.size(); ++k)
          if (list[k] == e) {
            const GpuProcess& p = (*gs->processes)[k];
            used.push_back(cell_of(p.used_bytes));
            sm.push_back(cell_of(p.sm_util_pct));
            mem.push_back(cell_of(p.mem_util_pct));
            gi.push_back(cell_of(p.gi_id));
            ci.push_back(cell_of(p.ci_id));
            break;
          }
      }
      write_column(w, used, false);
      if (!gpu_utilisation) continue;
      write_column(w, sm, true);
      write_column(w, mem, true);
      write_column(w, gi, false);
      write_column(w, ci, false);
    }
  }
}

ProcessColumns read_processes(ByteReader& r, size_t n,
                              const std::vector<int>& gpu_indices, bool keep,
                              bool gpu_utilisation, bool tree_only) {
  const bool keep_all = keep && !tree_only;
  ProcessColumns pc;
  // An entry: pid, three strings, flags and its library count here, then
  // its state count and six columns: >= 13 bytes.
  const size_t entries = r.count(13, "processes");
  r.budget().charge(entries, sizeof(ProcessColumns::Proc), "processes");
  pc.procs.resize(entries);
  for (auto& e : pc.procs) {
    ProcessSample& p = e.statics;
    const uint64_t pid = r.varint();
    if (pid > UINT32_MAX) throw CodecError("bad pid");
    p.pid = static_cast<uint32_t>(pid);
    p.user = r.str();
    p.name = r.str();
    p.cmdline = r.str();
    const uint8_t flags = r.byte();
    if (flags & ~kKnownFlags) throw CodecError("bad process flags");
    if (flags & kHasCgroup) p.cgroup = std::string(r.str());
    if (flags & kHasStartTime) p.start_time = std::bit_cast<double>(r.varint());
    if (flags & kHasNsPid) p.ns_pid = static_cast<uint32_t>(r.varint());
    if (flags & kHasSlurmJob) {
      std::string_view id = r.str();
      if (!is_slurm_job_id(id)) throw CodecError("bad Slurm job id");
      p.slurm_job_id = std::string(id);
    }
    if (flags & kHasPod) p.pod = read_pod(r);
    p.libs.resize(r.count(1, "libraries"));
    r.budget().charge(p.libs.size(), sizeof(std::string), "libraries");
    for (auto& lib : p.libs) lib = r.str();
  }
  std::vector<size_t> cost;
  for (const auto& e : pc.procs) cost.push_back(listing_cost(e.statics));
  r.budget().charge(n, sizeof(std::vector<uint32_t>), "process lists");
  for (size_t i = 0; i < n; ++i) read_list(r, pc.lists, cost, false);
  auto at = positions(pc.lists, entries);
  for (size_t e = 0; e < entries; ++e) {
    auto& proc = pc.procs[e];
    proc.at = std::move(at[e]);
    const size_t m = proc.at.size();
    proc.states.resize(r.count(1, "process states"));
    r.budget().charge(proc.states.size(), sizeof(std::string), "states");
    for (auto& s : proc.states) s = r.str();
    proc.ppid = read_column(r, m, keep);
    proc.state = read_column(r, m, keep_all);
    proc.cpu_pct = read_column(r, m, keep_all);
    proc.threads = read_column(r, m, keep_all);
    proc.rss = read_column(r, m, keep_all);
    proc.dev_shm = read_column(r, m, keep_all);
    if (keep_all)
      for (const Cell& c : proc.state)
        if (c.present && (c.is_double || c.i < 0 ||
                          static_cast<size_t>(c.i) >= proc.states.size()))
          throw CodecError("bad process state");
  }
  for (int g : gpu_indices) {
    ProcessColumns::Gpu gpu;
    gpu.index = g;
    // An entry: pid, type, then one column (five from format 3) >= 1 byte.
    gpu.entries.resize(r.count(gpu_utilisation ? 7 : 3, "GPU processes"));
    r.budget().charge(gpu.entries.size(), sizeof(ProcessColumns::GpuProc),
                      "GPU processes");
    for (auto& e : gpu.entries) {
      const uint64_t pid = r.varint();
      if (pid > UINT32_MAX) throw CodecError("bad pid");
      e.pid = static_cast<uint32_t>(pid);
      e.type = r.str();
    }
    std::vector<size_t> gcost;
    for (const auto& e : gpu.entries) gcost.push_back(listing_cost(e));
    r.budget().charge(n, sizeof(std::optional<std::vector<uint32_t>>),
                      "GPU process lists");
    for (size_t i = 0; i < n; ++i) read_list(r, gpu.lists, gcost, true);
    auto gat = positions(gpu.lists, gpu.entries.size());
    for (size_t e = 0; e < gpu.entries.size(); ++e) {
      gpu.entries[e].at = std::move(gat[e]);
      auto& entry = gpu.entries[e];
      const size_t m = entry.at.size();
      entry.used = read_column(r, m, keep);
      if (gpu_utilisation) {
        entry.sm_util = read_column(r, m, keep);
        entry.mem_util = read_column(r, m, keep_all);
        entry.gi = read_column(r, m, keep_all);
        entry.ci = read_column(r, m, keep_all);
      }
    }
    pc.gpus.push_back(std::move(gpu));
  }
  if (!keep) return {};
  return pc;
}

}  // namespace gd::store
