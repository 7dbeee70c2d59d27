// GET /api/v1/processes: since api/processes_json wrote it (json_out), the
// bytes are those of the nlohmann writer serve had before, copied below, on
// the scenario traces, a real orphaned-memory trace and hostile text.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "model/orphan_holders.h"
#include "model/process_tree.h"
#include "serve/api.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

using nlohmann::json;

// --- the writer before api/processes_json (serve/api.cc), as it was ------

template <typename T>
json opt_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json old_orphan_holders_json(const Snapshot& s, const ProcessTree& tree,
                             std::optional<int> gpu) {
  json held = json::array();
  const bool pids_visible =
      !s.header || s.header->host.pid_namespace != "container";
  for (const auto& g : probable_holders_in(*s.sample, tree, pids_visible)) {
    if (gpu && g.gpu != *gpu) continue;
    for (const auto& h : g.holders) {
      const ProcessSample* p = tree.find(h.pid);
      held.push_back({{"gpu", g.gpu},
                      {"pid", h.pid},
                      {"user", p ? json(p->user) : json(nullptr)},
                      {"name", p ? json(p->name) : json(nullptr)},
                      {"cmdline", p ? json(p->cmdline) : json(nullptr)},
                      {"dead_owners", g.dead_owners},
                      {"evidence", h.evidence},
                      {"action", fmt::format("gpudoctor kill {}", h.pid)}});
    }
  }
  return held;
}

std::string old_processes(const Snapshot& s, std::optional<int> gpu) {
  json out = {{"t", s.sample ? json(s.sample->t) : json(nullptr)}};
  json arr = json::array();
  if (s.sample) {
    ProcessTree tree(*s.sample);
    std::map<uint32_t, std::set<uint32_t>> members;
    for (const auto& g : s.sample->gpus)
      if (g.processes)
        for (const auto& gp : *g.processes)
          members[tree.job_group(gp.pid)].insert(gp.pid);
    std::map<uint32_t, size_t> ranks_of;
    for (const auto& [group, pids] : members) ranks_of[group] = pids.size();
    for (const auto& g : s.sample->gpus) {
      if (gpu && g.index != *gpu) continue;
      if (!g.processes) continue;
      for (const auto& gp : *g.processes) {
        json row = {{"gpu", g.index},
                    {"pid", gp.pid},
                    {"used_bytes", opt_json(gp.used_bytes)},
                    {"type", gp.type}};
        if (const ProcessSample* found = tree.find(gp.pid)) {
          const ProcessSample& p = *found;
          row["ppid"] = opt_json(p.ppid);
          row["user"] = p.user;
          row["name"] = p.name;
          row["cmdline"] = p.cmdline;
          row["state"] = p.state;
          row["cpu_pct"] = opt_json(p.cpu_pct);
          row["threads"] = opt_json(p.threads);
          row["rss_bytes"] = opt_json(p.rss_bytes);
          row["start_time"] = opt_json(p.start_time);
          row["cgroup"] = opt_json(p.cgroup);
        } else {
          row["state"] = "unknown";
        }
        const uint32_t group = tree.job_group(gp.pid);
        const ProcessSample* gproc = tree.find(group);
        row["job"] = {{"pid", group},
                      {"name", gproc ? gproc->name : std::string()},
                      {"ranks", ranks_of[group]}};
        json kids = json::array();
        for (uint32_t pid : tree.children(gp.pid)) {
          const ProcessSample* c = tree.find(pid);
          kids.push_back({{"pid", c->pid},
                          {"name", c->name},
                          {"state", c->state},
                          {"cpu_pct", opt_json(c->cpu_pct)}});
        }
        row["children"] = std::move(kids);
        arr.push_back(std::move(row));
      }
    }
    out["orphan_holders"] = old_orphan_holders_json(s, tree, gpu);
  }
  out["processes"] = std::move(arr);
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// --- the comparison ------------------------------------------------------

void expect_same_bytes(const Snapshot& s, const std::string& where) {
  std::vector<std::optional<int>> filters = {std::nullopt, 0, 1, 2, 3, 7};
  for (const auto& gpu : filters) {
    QueryParams q;
    if (gpu) q.emplace("gpu", std::to_string(*gpu));
    const ApiReply r = api_processes(s, q);
    ASSERT_EQ(r.status, 200) << where;
    EXPECT_EQ(r.body, old_processes(s, gpu))
        << where << " gpu=" << (gpu ? std::to_string(*gpu) : "all");
  }
}

// Every sample of `trace` (under tests/data), as serve's snapshot.
size_t compare_trace(const std::string& trace) {
  TraceReader reader(std::string(GD_TEST_DATA) + "/" + trace);
  Snapshot s;
  s.header = std::make_shared<TraceHeader>(reader.header());
  size_t n = 0;
  for (;;) {
    auto sample = std::make_shared<Sample>();
    if (!reader.next(*sample)) break;
    s.sample = sample;
    expect_same_bytes(s, trace + " sample " + std::to_string(n));
    ++n;
  }
  return n;
}

TEST(ProcessesBytes, AsBeforeOnTheScenarioTraces) {
  EXPECT_GT(compare_trace("scenario_4gpu.jsonl"), 0u);
}

TEST(ProcessesBytes, AsBeforeWithOrphanHolders) {
  EXPECT_GT(compare_trace("real_gpu/h200-orphaned-child.jsonl"), 0u);
  // The same holders are named in a container: pids not all visible.
  TraceReader reader(std::string(GD_TEST_DATA) +
                     "/real_gpu/h200-orphaned-child.jsonl");
  Snapshot s;
  auto header = std::make_shared<TraceHeader>(reader.header());
  header->host.pid_namespace = "container";
  s.header = header;
  auto sample = std::make_shared<Sample>();
  while (reader.next(*sample)) {
    s.sample = std::make_shared<Sample>(*sample);
    expect_same_bytes(s, "container");
  }
}

TEST(ProcessesBytes, AsBeforeWithoutASample) {
  Snapshot s;
  expect_same_bytes(s, "no sample");
  EXPECT_EQ(api_processes(s, {}).body, R"({"processes":[],"t":null})");
}

// Names and command lines are untrusted bytes from /proc: invalid UTF-8,
// control characters, quotes; numbers at their edges.
TEST(ProcessesBytes, AsBeforeWithHostileText) {
  auto sample = std::make_shared<Sample>();
  sample->t = 1732795000.25;
  GpuSample g;
  g.index = 0;
  g.processes.emplace();
  const std::vector<std::string> texts = {
      "",
      "plain",
      "quote \" backslash \\ slash /",
      std::string("nul \0 bel \x07 esc \x1b del \x7f", 22),
      "tab\tnl\ncr\rff\fbs\b",
      "bad \xff\xfe utf8 \xc3 cut \xe2\x82 end",
      "surrogate \xed\xa0\x80 overlong \xc0\xaf \xf4\x90\x80\x80",
      "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
  };
  uint32_t pid = 100;
  for (const auto& text : texts) {
    GpuProcess gp;
    gp.pid = pid;
    gp.used_bytes = (uint64_t{1} << 40) + pid;
    gp.type = text;
    g.processes->push_back(gp);
    ProcessSample p;
    p.pid = pid;
    p.ppid = 1;
    p.user = text;
    p.name = text;
    p.cmdline = text + " --flag";
    p.state = "S";
    p.cpu_pct = pid % 2 ? 99.5 : 0.0;
    p.threads = 12;
    p.rss_bytes = UINT64_MAX;
    p.start_time = 1732790000.0;
    p.cgroup = text;
    sample->processes.push_back(p);
    ProcessSample child;
    child.pid = pid + 1;
    child.ppid = pid;
    child.name = text;
    child.state = "Z";
    sample->processes.push_back(child);
    pid += 2;
  }
  GpuProcess unknown;
  unknown.pid = 999;
  g.processes->push_back(unknown);
  sample->gpus.push_back(g);
  Snapshot s;
  s.sample = sample;
  expect_same_bytes(s, "hostile");
}

}  // namespace
}  // namespace gd
