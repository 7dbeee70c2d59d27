// The manual pages and the shell completions, generated from the command
// table itself (the CLI11 app every command registered its flags on), so
// they cannot drift from what the parser accepts: `gpudoctor man` and
// `gpudoctor completion bash|zsh|fish` print them, the build writes them
// for `cmake --install` and the packages.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gd {

// One flag as the docs show it.
struct FlagDoc {
  std::vector<std::string> names;  // "--json", "-n"
  std::string value;               // "DURATION", "" for a switch
  std::string description;
};

// One command: its name ("" for gpudoctor itself), description and the
// flags a user may type (hidden ones left out), --help included.
struct CommandDoc {
  std::string name;
  std::string description;
  std::vector<FlagDoc> flags;
  std::vector<std::string> positionals;  // "COMMAND"
  // A command's own commands (db check, db repair), their flags apart.
  std::vector<CommandDoc> subcommands;
};

// gpudoctor's own (global) flags, then each visible command in --help's
// order.
std::vector<CommandDoc> command_docs(const CLI::App& app);

// roff for man(1): gpudoctor(1) when `command` is "", else
// gpudoctor-COMMAND(1). Throws std::invalid_argument for no such command.
std::string man_page(const CLI::App& app, const std::string& command,
                     const std::string& version);

std::string bash_completion(const CLI::App& app);
std::string zsh_completion(const CLI::App& app);
std::string fish_completion(const CLI::App& app);

}  // namespace gd
