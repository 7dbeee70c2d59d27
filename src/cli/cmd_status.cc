// gpudoctor status [--json]
#include <iostream>

#include "cli/commands.h"
#include "collect/sampler.h"
#include "common/phase_timing.h"
#include "trace/trace_io.h"
#include "views/status_view.h"

namespace gd {

void add_status_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "status", "one screen: every GPU and the host beside it");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag(
      "--json", *json,
      "print a two-line trace (header + one sample, trace-format.md)");
  cmd->callback([&global, json] {
    Sampler sampler(global.sampler_options());
    Sample s = sampler.sample_once();
    if (*json) {
      std::cout << header_to_json(sampler.header()) << '\n'
                << sample_to_json(s) << '\n';
    } else {
      std::cout << render_status(sampler.header(), s);
    }
    std::cout.flush();
    note_phase("status: written");
    command_exit_code() = kExitOk;
  });
}

GD_REGISTER_COMMAND(10, add_status_command);

}  // namespace gd
