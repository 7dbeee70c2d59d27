// gpudoctor status [--json] [--wide]
// Exit 0 when NVML answered; when it cannot be used, the host is still
// shown and the exit code names the cause (commands.h: 3-6).
#include <iostream>

#include "cli/commands.h"
#include "collect/sampler.h"
#include "common/phase_timing.h"
#include "trace/trace_io.h"
#include "views/status_view.h"
#include "views/text_table.h"

namespace gd {
namespace {

// 0 when NVML answered, else the cause's code (commands.h).
int status_exit_code(const TraceHeader& h) {
  if (h.nvml_status == kNvmlOk) return kExitOk;
  if (h.nvml_status == kNvmlNoDriver) return kExitNoDriver;
  if (h.nvml_status == kNvmlNoPermission) return kExitNvmlNoPermission;
  if (h.nvml_status == kNvmlDriverMismatch) return kExitDriverMismatch;
  return kExitNvmlError;
}

}  // namespace

void add_status_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "status",
      "one screen: every GPU and the host beside it (exit 0 ok; NVML "
      "unusable: 3 no driver, 4 no permission, 5 driver/library mismatch, "
      "6 other NVML error)");
  auto json = std::make_shared<bool>(false);
  auto wide = std::make_shared<bool>(false);
  cmd->add_flag("--wide", *wide,
                "lines as long as they are, whatever the terminal's width "
                "(default: fit $COLUMNS or the terminal)");
  cmd->add_flag(
      "--json", *json,
      "print a two-line trace (header + one sample, trace-format.md)");
  cmd->callback([&global, json, wide] {
    Sampler sampler(global.sampler_options());
    // The text shows no device holders: their scan of every process's
    // open files runs only when it would change the other work shown.
    Sample s =
        sampler.sample_once(Sampler::kOneShotRateWindow,
                            *json ? Sampler::OneShotShows::kEverything
                                  : Sampler::OneShotShows::kNoDeviceHolders);
    if (*json) {
      std::cout << header_to_json(sampler.header()) << '\n'
                << sample_to_json(s) << '\n';
    } else {
      std::cout << render_status(sampler.header(), s,
                                 *wide ? 0 : output_width());
    }
    std::cout.flush();
    note_phase("status: written");
    command_exit_code() = status_exit_code(sampler.header());
  });
}

GD_REGISTER_NAMED_COMMAND(10, "status", add_status_command);

}  // namespace gd
