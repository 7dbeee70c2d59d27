// gpudoctor ps [--json] [--tree] [--user U] [--gpu N] [--sort KEY] [--serve
// URL] Every GPU process with its workers; --tree groups DDP ranks under their
// launcher. When `gpudoctor serve` runs, each process's GPU memory over the
// last minutes is shown too (silently absent otherwise).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/format.h"
#include "cli/ps_view.h"
#include "cli/status_view.h"
#include "collect/sampler.h"
#include "procmgmt/job_tree.h"
#include "procmgmt/proc_snapshot.h"
#include "procmgmt/serve_history.h"

namespace gd {
namespace {

constexpr std::chrono::milliseconds kProcessRateWindow{100};

// interfaces.md: serve listens on 127.0.0.1:9856 unless told otherwise.
constexpr const char* kDefaultServeUrl = "http://127.0.0.1:9856";
// The history ps asks serve for: the last minutes, in buckets a sparkline
// of ~20 characters can show.
constexpr const char* kHistorySince = "10m";
constexpr const char* kHistoryStep = "30s";

struct PsFlags {
  bool json = false, tree = false;
  std::string user, sort = "gpu", serve = kDefaultServeUrl;
  std::optional<int> gpu;
};

// The series of `pid` on `gpu` (serve keeps one per GPU a pid is on).
const procmgmt::HistorySeries* series_for(
    const std::map<uint32_t, std::vector<procmgmt::HistorySeries>>& h,
    uint32_t pid, int gpu) {
  auto it = h.find(pid);
  if (it == h.end() || it->second.empty()) return nullptr;
  for (const auto& s : it->second)
    if (s.gpu && *s.gpu == gpu) return &s;
  return &it->second.front();
}

std::string history_text(
    const std::vector<PsRow>& rows,
    const std::map<uint32_t, std::vector<procmgmt::HistorySeries>>& h) {
  std::string out;
  for (const auto& r : rows) {
    const auto* s = series_for(h, r.gpu_process.pid, r.gpu);
    if (!s || s->points.empty()) continue;
    std::vector<double> v;
    for (const auto& p : s->points) v.push_back(p.second);
    auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    out += fmt::format("  {:<4} {:<8} {}  {} -> {}  (min {}, max {})\n", r.gpu,
                       r.gpu_process.pid, procmgmt::sparkline(v),
                       human_bytes(static_cast<uint64_t>(v.front())),
                       human_bytes(static_cast<uint64_t>(v.back())),
                       human_bytes(static_cast<uint64_t>(*mn)),
                       human_bytes(static_cast<uint64_t>(*mx)));
  }
  if (out.empty()) return out;
  return fmt::format("\nGPU memory, last {} (from gpudoctor serve):\n",
                     kHistorySince) +
         out;
}

nlohmann::json history_json(const procmgmt::HistorySeries& s) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : s.points) pts.push_back({p.first, p.second});
  return pts;
}

void run_ps(const GlobalOptions& global, const PsFlags& f) {
  Sampler sampler(global.sampler_options());
  // ps is about processes: their CPU% gets a longer window than status'
  // (a worker starved on a loaded host still shows what it got).
  Sample s = sampler.sample_once(kProcessRateWindow);
  auto rows = build_ps_rows(s);
  filter_ps_rows(rows, f.user, f.gpu);
  sort_ps_rows(rows, f.sort);

  std::vector<uint32_t> pids;
  for (const auto& r : rows)
    if (std::find(pids.begin(), pids.end(), r.gpu_process.pid) == pids.end())
      pids.push_back(r.gpu_process.pid);
  auto history = procmgmt::fetch_process_memory_history(
      f.serve, pids, kHistorySince, kHistoryStep);

  if (f.tree) {
    std::vector<procmgmt::TreeRank> ranks;
    for (const auto& r : rows) {
      auto it = std::find_if(ranks.begin(), ranks.end(), [&](const auto& t) {
        return t.pid == r.gpu_process.pid;
      });
      if (it == ranks.end()) {
        ranks.push_back({r.gpu_process.pid, {}, std::optional<uint64_t>(0)});
        it = ranks.end() - 1;
      }
      it->gpus.push_back(r.gpu);
      if (it->used_bytes && r.gpu_process.used_bytes)
        *it->used_bytes += *r.gpu_process.used_bytes;
      else
        it->used_bytes.reset();
    }
    auto procs = procmgmt::ProcSnapshot::read(global.proc_root);
    auto trees = procmgmt::build_job_trees(s, ranks, procs);
    if (f.json) {
      std::cout << procmgmt::job_trees_to_json(s, trees) << '\n';
      return;
    }
    std::string why = explain_nvml_status(sampler.header());
    if (!why.empty()) std::cout << "!! " << why << "\n";
    std::cout << procmgmt::render_job_trees(s, trees)
              << history_text(rows, history);
    return;
  }
  if (f.json) {
    auto j = nlohmann::json::parse(ps_to_json(s, rows));
    for (auto& p : j["processes"]) {
      const auto* hs =
          series_for(history, p["pid"].get<uint32_t>(), p["gpu"].get<int>());
      if (hs) p["memory_history"] = history_json(*hs);
    }
    std::cout << j.dump(-1, ' ', false,
                        nlohmann::json::error_handler_t::replace)
              << '\n';
    return;
  }
  std::string why = explain_nvml_status(sampler.header());
  if (!why.empty()) std::cout << "!! " << why << "\n";
  std::cout << render_ps(s, rows) << history_text(rows, history);
}

}  // namespace

void add_ps_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "ps", "every GPU process, with its workers folded under it");
  auto f = std::make_shared<PsFlags>();
  cmd->add_flag("--json", f->json, "print JSON");
  cmd->add_flag("--tree", f->tree,
                "group by job: launcher (torchrun, mpirun, deepspeed, "
                "accelerate, srun) -> "
                "ranks -> data-loader workers");
  cmd->add_option("--user", f->user, "only processes of this user");
  cmd->add_option("--gpu", f->gpu, "only processes on this GPU index")
      ->transform(decimal_in(0, kMaxGpuIndex));
  cmd->add_option("--sort", f->sort,
                  "order: mem, cpu, elapsed (largest first), pid, gpu")
      ->check(CLI::IsMember({"mem", "cpu", "pid", "elapsed", "gpu"}));
  cmd->add_option("--serve", f->serve,
                  "gpudoctor serve to ask for memory history (default "
                  "http://127.0.0.1:9856)");
  cmd->callback([&global, f] {
    run_ps(global, *f);
    command_exit_code() = kExitOk;
  });
}

GD_REGISTER_COMMAND(20, add_ps_command);

}  // namespace gd
