// Every subcommand registers itself on the CLI11 app; main.cc lists them.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/global_options.h"

namespace gd {

void add_status_command(CLI::App& app, const GlobalOptions& global);
void add_ps_command(CLI::App& app, const GlobalOptions& global);
void add_record_command(CLI::App& app, const GlobalOptions& global);
void add_diagnose_command(CLI::App& app, const GlobalOptions& global);

// A subcommand's callback stores its exit status here; main returns it.
int& command_exit_code();

// Exit codes shared by the commands (diagnose has its own, findings.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // runtime failure (cannot write, ...)
inline constexpr int kExitUsage = 2;  // bad flag or value (CLI11's default)

}  // namespace gd
