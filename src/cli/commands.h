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
// A command registered with its name (GD_REGISTER_NAMED_COMMAND) is the
// only one added when the command line asks for it (command_word()): a
// one-shot command such as `status` does not pay for building every other
// command's flags (~0.4 ms of CPU, as much as its whole host reading), nor
// `top` keep their code's pages mapped. Every command is named but those
// made from all the others (help, man, completion).
using AddCommandFn = void (*)(CLI::App& app, const GlobalOptions& global);
struct CommandRegistration {
  CommandRegistration(int order, AddCommandFn add, const char* name = nullptr);
};
struct RegisteredCommand {
  int order;
  AddCommandFn add;
  const char* name;  // nullptr: not known before `add` runs
};
std::vector<RegisteredCommand>& registered_commands();

#define GD_REGISTER_COMMAND(order, fn) \
  static const ::gd::CommandRegistration gd_registration_##fn(order, fn)
// `name` must be the name `fn` gives its subcommand.
#define GD_REGISTER_NAMED_COMMAND(order, name, fn) \
  static const ::gd::CommandRegistration gd_registration_##fn(order, fn, name)

// The command the command line names: its first word that is neither a
// global flag nor a global flag's value. nullptr when there is none, or
// when any other flag comes before it (--help, a mistyped one): then every
// command is added, for the help and the hints.
const char* command_word(int argc, char** argv);

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
