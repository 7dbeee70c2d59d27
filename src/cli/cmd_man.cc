// gpudoctor man [COMMAND] [--dir DIR]: the manual pages, made from the
// command table (command_docs.h).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command_docs.h"
#include "cli/commands.h"
#include "cli/full_binary.h"
#include "cli/usage_hint.h"
#include "cli/version.h"
#include "common/closest_word.h"
#include "common/terminal_text.h"

namespace gd {
namespace {

// Every page into `dir`: gpudoctor.1 and gpudoctor-COMMAND.1.
void write_pages(const CLI::App& app, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const CommandDoc& d : command_docs(app)) {
    const std::string path =
        dir + "/" + (d.name.empty() ? "gpudoctor" : "gpudoctor-" + d.name) +
        ".1";
    std::ofstream out(path, std::ios::trunc);
    out << man_page(app, d.name, GD_VERSION);
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path);
  }
}

void add_man_command(CLI::App& app, const GlobalOptions&) {
  auto* cmd = app.add_subcommand(kManCommand.name, kManCommand.summary);
  auto name = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  cmd->add_option("command", *name, "a command, e.g. diagnose");
  cmd->add_option("--dir", *dir, "write every page into DIR (created)");
  cmd->callback([&app, name, dir] {
    if (!dir->empty()) {
      if (!name->empty())
        throw CLI::ValidationError("--dir",
                                   "writes every page: give no COMMAND");
      write_pages(app, *dir);
      return;
    }
    const auto names = command_names(app);
    if (!name->empty() &&
        std::find(names.begin(), names.end(), *name) == names.end()) {
      const std::string guess = closest_word(*name, names);
      throw CLI::ValidationError(
          "man", "no command '" + terminal_fit(*name, 64) + "'" +
                     (guess.empty() ? "" : " (did you mean " + guess + "?)"));
    }
    std::cout << man_page(app, *name, GD_VERSION);
  });
}

}  // namespace

GD_REGISTER_COMMAND(kManCommand.order, add_man_command);

}  // namespace gd
