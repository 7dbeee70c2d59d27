// gpudoctor watch-leak [PID] [--duration 60s] [--gpu LIST] [--json]
// Follows the GPU memory of one process (or of every GPU process) at the
// global --interval and reports its growth rate (least-squares slope, MiB
// per minute) and when its GPU would be full at that rate. Ctrl-C ends the
// watch early and prints the summary. Exit 0 nothing grows, 1 error, 2
// usage, 3 a process's memory grows (possible leak).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <iostream>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "collect/sampler.h"
#include "common/terminal_text.h"
#include "views/format.h"
#include "views/leak_view.h"
#include "views/status_view.h"

namespace gd {
namespace {

std::atomic<bool> g_leak_interrupted{false};
extern "C" void on_leak_interrupt(int) { g_leak_interrupted.store(true); }

// A process's GPU memory grows (the summary says "GROWING: possible leak"):
// a script sees it in the exit status, as it sees diagnose's findings.
constexpr int kExitLeakGrowing = 3;

struct LeakFlags {
  std::optional<uint32_t> pid;
  // As given: indices, UUIDs, PCI addresses or /dev/nvidiaN.
  std::vector<std::string> gpus;
  double duration_s = 60;
  bool json = false;
};

int run_watch_leak(const GlobalOptions& g, const LeakFlags& f) {
  Sampler sampler(g.sampler_options());
  const TraceHeader& header = sampler.header();
  if (header.nvml_status != kNvmlOk) {
    std::fprintf(stderr, "gpudoctor: watch-leak: cannot read GPU memory: %s\n",
                 explain_nvml_status(header).c_str());
    return kExitError;
  }
  std::map<int, uint64_t> totals;
  for (const GpuInfo& info : header.gpus)
    if (info.memory_total_bytes) totals[info.index] = *info.memory_total_bytes;
  GpuSelection gpus = gpu_flag_indices(header, f.gpus);
  if (auto missing = gpus_missing(header, gpus); !missing.empty()) {
    std::fprintf(stderr,
                 "gpudoctor: watch-leak: no GPU %s: this host has %zu GPU(s)\n",
                 join_ints(missing).c_str(), header.gpus.size());
    return kExitError;
  }
  procmgmt::LeakTracker tracker(totals, f.pid, std::move(gpus));

  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = on_leak_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  bool progress = !f.json && isatty(STDERR_FILENO);
  std::function<void(size_t)> on_sample;
  if (progress)
    on_sample = [](size_t n) {
      std::fprintf(stderr, "\rgpudoctor: %zu samples (Ctrl-C for the summary)",
                   n);
    };
  procmgmt::watch_leaks(
      tracker, [&sampler] { return sampler.sample(); }, g.interval_s,
      f.duration_s, g_leak_interrupted, on_sample);
  if (progress) std::fprintf(stderr, "\r\033[K");
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);

  auto estimates = tracker.estimates();
  if (f.json) {
    std::cout << leaks_to_json(estimates, tracker.samples()) << "\n";
  } else {
    std::cout << render_leaks(estimates, tracker.samples());
  }
  if (f.pid && estimates.empty()) {
    std::fprintf(
        stderr,
        "gpudoctor: watch-leak: pid %u: NVML never listed it on a GPU\n",
        *f.pid);
    return kExitError;
  }
  for (const auto& e : estimates)
    if (e.leaking && !e.ended) return kExitLeakGrowing;
  return kExitOk;
}

}  // namespace

void add_watch_leak_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd =
      app.add_subcommand("watch-leak",
                         "follow GPU memory of a process (or every GPU "
                         "process): growth in MiB/min and time "
                         "until the GPU is full; Ctrl-C prints the summary "
                         "(exit 0 stable, 1 error, 2 usage, 3 growing: "
                         "possible leak)");
  auto f = std::make_shared<LeakFlags>();
  cmd->add_option("pid", f->pid,
                  "process to follow (default: every GPU process)")
      ->transform(decimal_in(1, kMaxPid));
  add_gpu_list_option(*cmd, "--gpu", f->gpus,
                      "only these GPUs, e.g. 0,2: indices, UUIDs, PCI "
                      "addresses or /dev/nvidiaN");
  // A short watch is a quick check of one process (two samples suffice).
  add_duration_option(*cmd, "--duration", f->duration_s, {0.1, 30 * 86400.0},
                      "how long to watch (default 60s); samples every "
                      "--interval");
  cmd->add_flag("--json", f->json, "print the summary as JSON");
  cmd->callback([&global, f] {
    try {
      command_exit_code() = run_watch_leak(global, *f);
    } catch (const CLI::ParseError&) {
      throw;  // a usage error (--gpu naming no GPU here): exit 2
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: watch-leak: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitError;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(50, "watch-leak", add_watch_leak_command);

}  // namespace gd
