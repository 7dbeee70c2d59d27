// gpudoctor help [COMMAND]
// The help of gpudoctor, or of one command: what `--help` prints, as git
// and systemctl users type it.
#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/usage_hint.h"
#include "common/closest_word.h"
#include "common/terminal_text.h"

namespace gd {

void add_help_command(CLI::App& app, const GlobalOptions&) {
  auto* cmd = app.add_subcommand(
      "help", "the help of gpudoctor, or of COMMAND (as COMMAND --help)");
  auto name = std::make_shared<std::string>();
  cmd->add_option("command", *name, "a command, e.g. diagnose");
  cmd->callback([&app, name] {
    // The formatter directly: app.help() would hand over to the selected
    // subcommand, this one.
    if (name->empty()) {
      std::cout << app.get_formatter()->make_help(&app, app.get_name(),
                                                  CLI::AppFormatMode::Normal);
      return;
    }
    const auto names = command_names(app);
    if (std::find(names.begin(), names.end(), *name) == names.end()) {
      const std::string guess = closest_word(*name, names);
      throw CLI::ValidationError(
          "help", "no command '" + terminal_fit(*name, 64) + "'" +
                      (guess.empty() ? "" : " (did you mean " + guess + "?)"));
    }
    // As `COMMAND --help` prints it.
    const CLI::App* sub = app.get_subcommand(*name);
    std::cout << sub->get_formatter()->make_help(
        sub, app.get_name() + " " + sub->get_name(),
        CLI::AppFormatMode::Normal);
  });
}

GD_REGISTER_COMMAND(1000, add_help_command);

}  // namespace gd
