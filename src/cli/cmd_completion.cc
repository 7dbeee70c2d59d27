// gpudoctor completion bash|zsh|fish: the shell completion script, made
// from the command table (command_docs.h).
#include <iostream>

#include "cli/command_docs.h"
#include "cli/commands.h"
#include "cli/full_binary.h"

namespace gd {
namespace {

void add_completion_command(CLI::App& app, const GlobalOptions&) {
  auto* cmd =
      app.add_subcommand(kCompletionCommand.name, kCompletionCommand.summary);
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([&app, shell] {
    if (*shell == "bash") std::cout << bash_completion(app);
    if (*shell == "zsh") std::cout << zsh_completion(app);
    if (*shell == "fish") std::cout << fish_completion(app);
  });
}

}  // namespace

GD_REGISTER_COMMAND(kCompletionCommand.order, add_completion_command);

}  // namespace gd
