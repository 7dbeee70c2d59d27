// gpudoctor burn [--duration 60s] [--gpu LIST]
//                [--tests compute,memory,pcie,collective] [--collective]
//                [--memory-fraction 0.9] [--json] [--record FILE] [--force]
// Stress, memory and link tests on every selected GPU with a verdict per
// GPU that says why. Exit codes: 0 all pass, 1 a warning, 2 a failure (or a
// usage error), 3 could not run (or stopped early with nothing failed).
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>

#include "burn/burn.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "common/terminal_text.h"
#include "views/burn_view.h"

namespace gd {
namespace {

// A burn runs for seconds to hours; a month is the longest anyone leaves
// a terminal command running.
constexpr DurationRange kBurnDuration{1, 30 * 86400.0};
constexpr int kExitCouldNotRun = 3;
// Non-terminal progress (logs, CI): one block of live lines this often.
constexpr double kLogEveryS = 10;

std::atomic<bool> g_stop{false};
extern "C" void on_burn_stop(int) { g_stop.store(true); }

struct BurnFlags {
  double duration_s = 60;
  std::vector<std::string> gpus;
  std::vector<std::string> tests;
  double memory_fraction = 0.9;
  bool json = false;
  std::string record;
  bool force = false;
  std::string cuda_lib = "libcuda.so.1";
  std::string cublas_lib;
  bool collective = false;
  std::string nccl_lib;
};

// A share of memory: a plain decimal number in (0, 1), no nan or exponent.
CLI::Validator fraction_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        bool ok = !text.empty() && text.size() < 16;
        int dots = 0;
        for (char c : text) {
          ok = ok && ((c >= '0' && c <= '9') || c == '.');
          dots += c == '.';
        }
        if (!ok || dots > 1 || text == ".")
          return "'" + text + "' is not a decimal number such as 0.9";
        const double v = std::stod(text);
        if (!(v >= 0.05 && v <= 0.98))
          return "'" + text + "' is out of range 0.05..0.98";
        return {};
      },
      "FRACTION");
}

int run(const GlobalOptions& global, const BurnFlags& f) {
  burn::BurnOptions o;
  o.duration_s = f.duration_s;
  o.gpus = f.gpus;
  if (!f.tests.empty()) {
    o.compute = o.memory = o.pcie = false;
    for (const auto& t : f.tests) {
      o.compute |= t == "compute";
      o.memory |= t == "memory";
      o.pcie |= t == "pcie";
      o.collective |= t == "collective";
    }
  }
  o.collective |= f.collective;
  o.nccl_lib = f.nccl_lib;
  o.memory_fraction = f.memory_fraction;
  o.force = f.force;
  o.cuda_lib = f.cuda_lib;
  o.cublas_lib = f.cublas_lib;
  o.record_path = f.record;
  o.interval_s = global.interval_s;
  o.sampler = global.sampler_options();

  const bool tty = isatty(fileno(stderr));
  burn::Callbacks cb;
  cb.on_start = [&](const burn::BurnStart& s) {
    std::fputs(format_burn_start(s, o).c_str(), stderr);
    std::fflush(stderr);
  };
  size_t drawn = 0;  // live lines on screen (terminal)
  double last_log = -kLogEveryS;
  cb.on_tick = [&](const burn::BurnTick& t) {
    const std::string lines = format_burn_tick(t);
    if (tty) {
      // Redraw the block in place.
      std::string out;
      for (size_t i = 0; i < drawn; ++i) out += "\033[A\r\033[K";
      out += lines;
      std::fputs(out.c_str(), stderr);
      drawn = t.gpus.size();
    } else if (!f.json && t.elapsed_s - last_log >= kLogEveryS) {
      std::fprintf(stderr, "-- %.0f s\n%s", t.elapsed_s, lines.c_str());
      last_log = t.elapsed_s;
    }
    std::fflush(stderr);
  };
  std::signal(SIGINT, on_burn_stop);
  std::signal(SIGTERM, on_burn_stop);
  burn::BurnReport report = burn::run_burn(o, g_stop, cb);
  const std::string text =
      f.json ? format_burn_json(report) + "\n" : format_burn_report(report);
  if (!f.json) std::fputs("\n", stdout);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return burn::burn_exit_code(report);
}

}  // namespace

void add_burn_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("burn",
                                 "stress, memory and PCIe tests on every GPU "
                                 "with a verdict per GPU that says why (exit 0 "
                                 "pass, 1 warn, 2 fail, 3 could not run)");
  auto f = std::make_shared<BurnFlags>();
  add_duration_option(
      *cmd, "--duration", f->duration_s, kBurnDuration,
      "length of the whole run, split between the tests (default 60s)");
  cmd->add_option("--gpu", f->gpus,
                  "GPUs to test, e.g. 0,2,3: indices, UUIDs, PCI addresses "
                  "or /dev/nvidiaN (default: all)")
      ->delimiter(',')
      ->check(gpu_name_value());
  cmd->add_option("--tests", f->tests,
                  "which tests: compute,memory,pcie,collective (default: the "
                  "first three)")
      ->delimiter(',')
      ->check(CLI::IsMember({"compute", "memory", "pcie", "collective"}));
  cmd->add_flag("--collective", f->collective,
                "also run NCCL's all-reduce across the GPUs and judge its bus "
                "bandwidth (needs libnccl.so.2)");
  cmd->add_option(
         "--memory-fraction", f->memory_fraction,
         "share of the free GPU memory the memory test covers (default 0.9)")
      ->transform(fraction_check());
  cmd->add_flag("--json", f->json, "print the verdicts as JSON");
  cmd->add_option("--record", f->record,
                  "also write a trace of the burn (for `diagnose --from`; .zst "
                  "compresses)");
  cmd->add_flag("--force", f->force, "run on GPUs that have processes");
  cmd->add_option("--cuda-lib", f->cuda_lib,
                  "CUDA driver library to dlopen (default libcuda.so.1)");
  cmd->add_option("--cublas-lib", f->cublas_lib,
                  "cuBLAS for the tensor-core GEMM (default: "
                  "libcublas.so.13/.12/.11 if found; none: no GEMM)");
  cmd->add_option("--nccl-lib", f->nccl_lib,
                  "NCCL library to dlopen for --collective (default "
                  "libnccl.so.2)");
  cmd->callback([&global, f] {
    try {
      command_exit_code() = run(global, *f);
    } catch (const burn::BurnError& e) {
      std::fprintf(stderr, "gpudoctor: burn: %s\n",
                   terminal_safe(e.what()).c_str());
      command_exit_code() = e.kind() == "usage" ? kExitUsage : kExitCouldNotRun;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: burn: %s\n",
                   terminal_safe(e.what()).c_str());
      command_exit_code() = kExitCouldNotRun;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(35, "burn", add_burn_command);

}  // namespace gd
