// gpudoctor who [GPU,... | --gpu GPU,...] [--json]
// Explains every byte of a GPU's used memory: each process NVML lists (live,
// zombie, stuck in D state, missing from /proc), the driver's reservation,
// what no visible process accounts for, and processes that hold NVIDIA
// device files open without NVML listing them.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "collect/sampler.h"
#include "common/terminal_text.h"
#include "procmgmt/device_holders.h"
#include "procmgmt/proc_snapshot.h"
#include "views/status_view.h"
#include "views/who_render.h"

namespace gd {
namespace {

struct WhoFlags {
  // As given: indices, UUIDs, PCI addresses or /dev/nvidiaN.
  std::vector<std::string> gpus;
  bool json = false;
};

int run_who(const GlobalOptions& global, const WhoFlags& f) {
  Sampler sampler(global.sampler_options());
  const TraceHeader& header = sampler.header();
  if (header.nvml_status != kNvmlOk) {
    std::fprintf(stderr, "gpudoctor: who: cannot read GPU memory: %s\n",
                 explain_nvml_status(header).c_str());
    return kExitError;
  }
  const GpuSelection selected = gpu_flag_indices(header, f.gpus);
  if (auto missing = gpus_missing(header, selected); !missing.empty()) {
    std::fprintf(stderr,
                 "gpudoctor: who: no GPU %s: this host has %zu GPU(s)\n",
                 join_ints(missing).c_str(), header.gpus.size());
    return kExitError;
  }
  Sample s = sampler.sample();
  sampler.name_jobs(s);
  // In the order asked for; every GPU in index order when none was.
  GpuSelection gpus = selected;
  if (gpus.empty())
    for (const GpuInfo& g : header.gpus) gpus.push_back(g.index);
  auto procs = procmgmt::ProcSnapshot::read(global.proc_root);
  auto devices =
      procmgmt::scan_device_holders(global.proc_root, global.dev_prefix);
  std::vector<procmgmt::GpuMemoryAccount> accounts;
  for (int gpu : gpus)
    accounts.push_back(
        procmgmt::account_gpu_memory(header, s, gpu, procs, devices));
  if (f.json)
    std::cout << who_list_to_json(accounts) << "\n";
  else
    std::cout << render_who_list(accounts);
  return kExitOk;
}

}  // namespace

void add_who_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "who",
      "who holds a GPU's memory: every byte explained (processes, zombies, "
      "missing owners, driver reservation, device-file holders)");
  auto f = std::make_shared<WhoFlags>();
  auto* positional = add_gpu_list_option(
      *cmd, "gpu", f->gpus,
      "GPUs, e.g. 0,2: indices, UUIDs, PCI addresses or /dev/nvidiaN "
      "(default: every GPU)");
  // --gpu as in ps, kill, diagnose and watch-leak: the same GPUs.
  add_gpu_list_option(*cmd, "--gpu", f->gpus, "the same GPUs, as a flag")
      ->excludes(positional);
  cmd->add_flag("--json", f->json, "print JSON: {\"gpus\": [...]}");
  cmd->callback([&global, f] {
    try {
      command_exit_code() = run_who(global, *f);
    } catch (const CLI::ParseError&) {
      throw;  // a usage error (--gpu naming no GPU here): exit 2
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: who: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitError;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(40, "who", add_who_command);

}  // namespace gd
