// gpudoctor ps [--json] [--tree] [--wide] [--user U] [--pod P] [--namespace N]
// [--gpu LIST] [--sort KEY]
// [--serve URL] Every GPU process with its workers; --tree groups DDP ranks
// under their launcher. When `gpudoctor serve` runs, each process's GPU memory
// over the last minutes is shown too (silently absent otherwise).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/serve_client.h"
#include "collect/sampler.h"
#include "model/orphan_holders.h"
#include "model/process_tree.h"
#include "monitor/serve_history.h"
#include "procmgmt/proc_snapshot.h"
#include "views/job_tree_view.h"
#include "views/ps_history_view.h"
#include "views/ps_view.h"
#include "views/status_view.h"
#include "views/text_table.h"

namespace gd {
namespace {

constexpr std::chrono::milliseconds kProcessRateWindow{100};

// serve listens on 127.0.0.1:9856 unless told otherwise.
constexpr const char* kPsDefaultServeUrl = "http://127.0.0.1:9856";
// The history ps asks serve for: the last minutes, in buckets a sparkline
// of ~20 characters can show.
constexpr const char* kHistorySince = "10m";
constexpr const char* kHistoryStep = "30s";

struct PsFlags {
  bool json = false, tree = false, wide = false;
  PsFilter filter;
  std::string sort = "gpu", serve = kPsDefaultServeUrl;
  std::vector<std::string> gpus;  // --gpu as given (flag_checks.h)
};

void run_ps(const GlobalOptions& global, const PsFlags& f) {
  const bool ask_serve = !f.serve.empty() && f.serve != "none";
  if (ask_serve) ask_serve_in_full_binary("ps --serve");
  check_serve_url("--serve", f.serve);
  Sampler sampler(global.sampler_options());
  // ps is about processes: their CPU% gets a longer window than status'
  // (a worker starved on a loaded host still shows what it got).
  Sample s = sampler.sample_once(kProcessRateWindow);
  const GpuSelection gpus = gpu_flag_indices(sampler.header(), f.gpus);
  auto rows = build_ps_rows(s);
  filter_ps_rows(rows, f.filter, gpus);
  auto holders = probable_holders_in(
      s, ProcessTree(s), sampler.header().host.pid_namespace != "container");
  std::erase_if(holders, [&](const GpuOrphanHolders& g) {
    return !selects(gpus, g.gpu);
  });
  sort_ps_rows(rows, f.sort);

  std::vector<uint32_t> pids;
  for (const auto& r : rows)
    if (std::find(pids.begin(), pids.end(), r.gpu_process.pid) == pids.end())
      pids.push_back(r.gpu_process.pid);
  ProcessHistory history;
  if (ask_serve)
    history = serve_memory_history(f.serve, pids, kHistorySince, kHistoryStep);

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
      std::cout << job_trees_to_json(s, trees) << '\n';
      return;
    }
    std::string why = explain_nvml_status(sampler.header());
    if (!why.empty()) std::cout << "!! " << why << "\n";
    std::cout << render_job_trees(s, trees)
              << render_ps_history(rows, history, kHistorySince);
    return;
  }
  if (f.json) {
    std::cout << ps_to_json_with_history(s, rows, history, holders) << '\n';
    return;
  }
  std::string why = explain_nvml_status(sampler.header());
  if (!why.empty()) std::cout << "!! " << why << "\n";
  std::cout << render_ps(s, rows, holders, PsFit{output_width(), f.wide})
            << render_ps_history(rows, history, kHistorySince);
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
  cmd->add_flag("--wide", f->wide,
                "every column and whole command lines, whatever the "
                "terminal's width (default: fit $COLUMNS or the terminal)");
  cmd->add_option("--user", f->filter.user, "only processes of this user");
  cmd->add_option("--pod", f->filter.pod,
                  "only processes of this Kubernetes pod: NAME or "
                  "NAMESPACE/NAME");
  cmd->add_option("--namespace", f->filter.namespace_,
                  "only processes of pods in this Kubernetes namespace");
  add_gpu_list_option(*cmd, "--gpu", f->gpus,
                      "only processes on these GPUs, e.g. 0,2: indices, "
                      "UUIDs, PCI addresses or /dev/nvidiaN");
  cmd->add_option("--sort", f->sort,
                  "order: mem, cpu, elapsed (largest first), pid, gpu")
      ->check(CLI::IsMember({"mem", "cpu", "pid", "elapsed", "gpu"}));
  cmd->add_option("--serve", f->serve,
                  "gpudoctor serve to ask for memory history (default "
                  "http://127.0.0.1:9856; none = do not ask)");
  cmd->callback([&global, f] {
    run_ps(global, *f);
    command_exit_code() = kExitOk;
  });
}

GD_REGISTER_NAMED_COMMAND(20, "ps", add_ps_command);

}  // namespace gd
