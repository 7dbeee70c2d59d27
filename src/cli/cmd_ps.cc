// gpudoctor ps [--json]
#include <chrono>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/ps_view.h"
#include "cli/status_view.h"
#include "collect/sampler.h"

namespace gd {

void add_ps_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "ps", "every GPU process, with its workers folded under it");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON");
  cmd->callback([&global, json] {
    Sampler sampler(global.sampler_options());
    // cpu% of a process needs a previous reading of the same process.
    sampler.sample();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Sample s = sampler.sample();
    auto rows = build_ps_rows(s);
    if (*json) {
      std::cout << ps_to_json(s, rows) << '\n';
    } else {
      std::string why = explain_nvml_status(sampler.header());
      if (!why.empty()) std::cout << "!! " << why << "\n";
      std::cout << render_ps(s, rows);
    }
    command_exit_code() = kExitOk;
  });
}

GD_REGISTER_COMMAND(20, add_ps_command);

}  // namespace gd
