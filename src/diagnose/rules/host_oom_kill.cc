// host-oom-kill: the host kernel's OOM killer ended a process during the
// window (oom_kill events from the kernel log). Says who was killed (name
// from the previous sample or the kernel line), whether it was a GPU
// process, whether a cgroup (container) limit or the whole host ran out, and
// how low host memory got.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>
#include <vector>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr size_t kMaxVictims = 16;

// "Killed process 4242 (python)" -> pid and name from the kernel line.
bool parse_killed(std::string_view text, uint32_t& pid, std::string& name) {
  constexpr std::string_view kKilled = "Killed process ";
  auto at = text.find(kKilled);
  if (at == std::string_view::npos) return false;
  text.remove_prefix(at + kKilled.size());
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc()) return false;
  text.remove_prefix(static_cast<size_t>(p - text.data()));
  if (text.size() > 2 && text[0] == ' ' && text[1] == '(') {
    auto close = text.find(')');
    if (close != std::string_view::npos)
      name = std::string(text.substr(2, close - 2));
  }
  return true;
}

class HostOomKillRule : public Rule {
 public:
  const char* id() const override { return "host-oom-kill"; }

  void begin(const TraceHeader& header, const Config&) override {
    header_ = &header;
  }

  void observe(const Sample& s, const SampleContext&) override {
    // Events happened since the previous sample, so the victim is looked up
    // in the previous sample's process list before it is replaced.
    for (const auto& e : s.events) {
      if (e.kind != "oom_kill") continue;
      kills_.add(event_time(e, s.t));
      if (first_text_.empty()) first_text_ = e.text;
      if (e.text.find("Memory cgroup") != std::string::npos ||
          e.text.find("oom_memcg=") != std::string::npos)
        cgroup_limit_ = true;
      uint32_t pid = 0;
      std::string name;
      bool parsed = parse_killed(e.text, pid, name);
      if (e.pid) {
        pid = *e.pid;
        parsed = true;
      }
      if (!parsed || victims_.size() >= kMaxVictims) continue;
      auto prev = std::find_if(prev_names_.begin(), prev_names_.end(),
                               [&](const auto& e) { return e.first == pid; });
      if (name.empty() && prev != prev_names_.end()) name = prev->second;
      for (const auto& p : s.processes)  // still listed while it exits
        if (p.pid == pid && name.empty()) name = p.name;
      std::string v = name.empty() ? fmt::format("pid {}", pid)
                                   : fmt::format("{} (pid {})", name, pid);
      auto gpu = std::find_if(prev_gpu_.begin(), prev_gpu_.end(),
                              [&](const auto& e) { return e.first == pid; });
      if (gpu != prev_gpu_.end()) {
        v += fmt::format(" using GPU {}", gpu->second);
        gpus_.insert(gpu->second);
      }
      if (pids_.insert(pid).second) victims_.push_back(v);
    }
    // Assigned into the slots of the previous sample's copy: its strings
    // keep their storage, so a steady process list costs no allocation.
    prev_names_.resize(s.processes.size());
    for (size_t i = 0; i < s.processes.size(); ++i) {
      prev_names_[i].first = s.processes[i].pid;
      prev_names_[i].second.assign(s.processes[i].name);
    }
    prev_gpu_.clear();
    for (const auto& g : s.gpus)
      if (g.processes)
        for (const auto& p : *g.processes)
          prev_gpu_.emplace_back(p.pid, g.index);
    if (s.host.mem_available_bytes)
      mem_available_.add(static_cast<double>(*s.host.mem_available_bytes));
  }

  std::vector<Finding> finish() override {
    if (kills_.empty()) return {};
    Finding f;
    f.id = id();
    f.severity = "warning";
    f.gpus.assign(gpus_.begin(), gpus_.end());
    f.pids.assign(pids_.begin(), pids_.end());
    f.start = kills_.first;
    f.end = kills_.last;
    std::string who = victims_.empty() ? "a process" : victims_.front();
    if (kills_.count > 1)
      f.title =
          fmt::format("The kernel's OOM killer ended {} processes ({}{})",
                      kills_.count, who, victims_.size() > 1 ? ", ..." : "");
    else
      f.title = fmt::format("The kernel's OOM killer ended {}", who);
    std::vector<std::string> parts;
    parts.push_back(fmt::format("{} OOM kill{}, {}", kills_.count,
                                kills_.count == 1 ? "" : "s",
                                format_range(kills_.first, kills_.last)));
    if (!victims_.empty())
      parts.push_back(fmt::format("killed: {}", fmt::join(victims_, "; ")));
    if (!mem_available_.empty()) {
      std::string m =
          fmt::format("host MemAvailable min {}",
                      gib_text(static_cast<uint64_t>(mem_available_.min)));
      if (header_->host.mem_total_bytes)
        m += fmt::format(" of {}", gib_text(*header_->host.mem_total_bytes));
      parts.push_back(m);
    }
    parts.push_back(fmt::format("first line: \"{}\"", first_text_));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    if (cgroup_limit_)
      f.action =
          "A container/cgroup memory limit was hit, not the host's RAM: "
          "raise the memory limit of that container or job, or make the job "
          "use less host memory (fewer data-loader workers, smaller prefetch "
          "and pinned-memory buffers).";
    else
      f.action =
          "The host ran out of RAM: find the biggest consumers (ps/top by "
          "RSS at the time), reduce data-loader workers, prefetch and "
          "pinned-memory buffers, or dataset caching in RAM; set memory "
          "limits per job so one job cannot take the node down.";
    if (!gpus_.empty())
      f.action +=
          " The killed process used a GPU: its GPU memory is released only "
          "after "
          "it is fully gone — check that no zombie still holds it.";
    return {f};
  }

  std::optional<std::string> not_judged() const override {
    return needs_kernel_log(*header_, "OOM-killer");
  }

 private:
  const TraceHeader* header_ = nullptr;
  Span kills_;
  std::string first_text_;
  bool cgroup_limit_ = false;
  std::vector<std::string> victims_;  // bounded by kMaxVictims
  std::set<uint32_t> pids_;
  std::set<int> gpus_;
  // The previous sample only: bounded by the processes alive at one time.
  // The previous sample's (pid, name) and its GPU processes (pid, GPU); the
  // first entry of a pid counts.
  std::vector<std::pair<uint32_t, std::string>> prev_names_;
  std::vector<std::pair<uint32_t, int>> prev_gpu_;
  Stat mem_available_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_host_oom_kill_rule() {
  return std::make_unique<HostOomKillRule>();
}

}  // namespace gd
