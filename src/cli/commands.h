// Every subcommand registers itself on the CLI11 app; main.cc lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/global_options.h"

namespace gd {

// Each cmd_*.cc registers its subcommand with GD_REGISTER_COMMAND(order, fn);
// main.cc adds them to the app sorted by `order`, which is the order --help
// lists them in. (A registry rather than a list in main.cc so that a new
// command is one new file.)
using AddCommandFn = void (*)(CLI::App& app, const GlobalOptions& global);
struct CommandRegistration {
  CommandRegistration(int order, AddCommandFn add);
};
struct RegisteredCommand {
  int order;
  AddCommandFn add;
};
std::vector<RegisteredCommand>& registered_commands();

#define GD_REGISTER_COMMAND(order, fn) \
  static const ::gd::CommandRegistration gd_registration_##fn(order, fn)

// A subcommand's callback stores its exit status here; main returns it.
int& command_exit_code();

// Exit codes shared by the commands (diagnose has its own, findings.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // runtime failure (cannot write, ...)
inline constexpr int kExitUsage = 2;  // bad flag or value (CLI11's default)
// Commands for scripts whose 2 means something else (epilog: memory not
// back) exit this on a usage error instead (sysexits' EX_USAGE).
inline constexpr int kExitUsageForScripts = 64;

// The usage-error exit code of a subcommand, by name: kExitUsage unless the
// command registered another with set_usage_exit_code.
int usage_exit_code(const std::string& command);
void set_usage_exit_code(const std::string& command, int code);

// `status` when NVML cannot be used (it still shows the host), one code per
// cause so that a script can tell them apart, as nvidia-smi's non-zero exit
// does: no driver (no libnvidia-ml.so.1, or the kernel module not loaded),
// no permission on /dev/nvidia*, kernel module and library of different
// versions, any other NVML error.
inline constexpr int kExitNoDriver = 3;
inline constexpr int kExitNvmlNoPermission = 4;
inline constexpr int kExitDriverMismatch = 5;
inline constexpr int kExitNvmlError = 6;

}  // namespace gd
