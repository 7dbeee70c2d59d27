// gpudoctor: tells what is wrong with a GPU server and helps fix it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <string_view>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/full_binary.h"
#include "cli/usage_hint.h"
#include "cli/version.h"
#include "common/phase_timing.h"
#include "common/terminal_text.h"
#include "procfs/kept_file.h"

namespace gd {

SamplerOptions GlobalOptions::sampler_options() const {
  SamplerOptions o;
  o.nvml_lib = nvml_lib;
  o.proc_root = proc_root;
  o.sys_root = sys_root;
  o.kmsg_path = kmsg_path == "none" ? "" : kmsg_path;
  o.dev_prefix = dev_prefix;
  o.deadline = std::chrono::milliseconds(static_cast<long>(deadline_s * 1000));
  o.slow_read_interval =
      std::chrono::milliseconds(static_cast<long>(slow_reads_s * 1000));
  return o;
}

std::vector<RegisteredCommand>& registered_commands() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

CommandRegistration::CommandRegistration(int order, AddCommandFn add,
                                         const char* name) {
  registered_commands().push_back({order, add, name});
}

const char* command_word(int argc, char** argv) {
  // The global flags main() adds that take a value (the others would end
  // the search, as any unknown flag does: every command is added then).
  static constexpr std::string_view kWithValue[] = {
      "--nvml-lib", "--interval",  "--deadline", "--slow-reads",
      "--kmsg",     "--proc-root", "--sys-root", "--dev-prefix"};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.empty() || arg[0] != '-') return argv[i];
    const std::string_view flag = arg.substr(0, arg.find('='));
    if (std::find(std::begin(kWithValue), std::end(kWithValue), flag) ==
        std::end(kWithValue))
      return nullptr;
    if (flag.size() == arg.size()) ++i;  // "--kmsg none": skip the value
  }
  return nullptr;
}

int& command_exit_code() {
  static int code = 0;
  return code;
}

namespace {
std::vector<std::pair<std::string, int>>& usage_codes() {
  static std::vector<std::pair<std::string, int>> codes;
  return codes;
}
}  // namespace

int usage_exit_code(const std::string& command) {
  for (const auto& [name, code] : usage_codes())
    if (name == command) return code;
  return kExitUsage;
}

void set_usage_exit_code(const std::string& command, int code) {
  usage_codes().emplace_back(command, code);
}

}  // namespace gd

namespace {

// Ranges of the global flags: an interval of 0 would spin a core, and one
// beyond an hour is not monitoring; a GPU that needs more than a minute to
// answer is hung.
constexpr gd::DurationRange kIntervalRange{0.01, 3600};
constexpr gd::DurationRange kDeadlineRange{0.01, 60};
constexpr gd::DurationRange kSlowReadsRange{0, 3600};

}  // namespace

int main(int argc, char** argv) {
  gd::note_phase("main");
  gd::remember_command_line(argc, argv);
  // Sampling keeps a few /proc files open per watched process.
  gd::procfs::raise_open_files_limit();
  gd::procfs::reserve_descriptor_table();
  gd::GlobalOptions global;
  CLI::App app{"gpudoctor " GD_VERSION
               " — tells what is wrong with a GPU server and helps fix it"};
  app.set_version_flag("--version",
                       "gpudoctor " GD_VERSION " (commit " GD_COMMIT
                       ", built " GD_BUILD_DATE ")");
  app.require_subcommand(1);
  app.fallthrough();  // global flags may follow the subcommand too
  // One line naming what was wrong (scripts grep stderr), with a guess at a
  // mistyped command or flag; no usage dump.
  app.failure_message(gd::usage_failure_message);
  app.add_option("--nvml-lib", global.nvml_lib,
                 "NVML library to dlopen (default libnvidia-ml.so.1)");
  gd::add_duration_option(app, "--interval", global.interval_s, kIntervalRange,
                          "sampling interval, e.g. 500ms, 1s (default 1s; top "
                          "--connect: serve's own)")
      ->each([&global](const std::string&) { global.interval_given = true; });
  gd::add_duration_option(
      app, "--deadline", global.deadline_s, kDeadlineRange,
      "longest wait for one GPU's NVML reads before it is "
      "reported stale (default 1s; loading NVML and nvmlInit wait "
      "at least 20s)");
  gd::add_duration_option(
      app, "--slow-reads", global.slow_reads_s, kSlowReadsRange,
      "refresh the NVML reads that cost the driver milliseconds (PCIe "
      "throughput, energy, per-process utilisation, GPM activity, T.Limit "
      "margin, PCIe replays, BAR1) at most this often; samples between "
      "repeat them "
      "(default 5s; 0s: every sample)");
  app.add_option("--kmsg", global.kmsg_path,
                 "kernel log to follow for Xid/OOM events (default /dev/kmsg; "
                 "'none' disables)");
  app.add_option("--proc-root", global.proc_root, "procfs root (tests)")
      ->group("");
  app.add_option("--sys-root", global.sys_root, "sysfs root (tests)")
      ->group("");
  app.add_option("--dev-prefix", global.dev_prefix,
                 "directory of the NVIDIA device nodes (tests)")
      ->group("");

  auto commands = gd::registered_commands();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  // The command asked for alone when it is registered with its name (the
  // others would be built for nothing), else every command.
  const char* asked = gd::command_word(argc, argv);
  auto named = std::find_if(commands.begin(), commands.end(), [&](auto& c) {
    return asked && c.name && std::string_view(c.name) == asked;
  });
  if (named != commands.end())
    named->add(app, global);
  else
    for (const auto& c : commands) c.add(app, global);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0. Every real usage error
    // exits 2 (documented, and what scripts test), not CLI11's own codes
    // (104-109 and more, one per kind of mistake); check's are 64.
    int code = app.exit(e);
    if (code == 0) return 0;
    // A command for scripts (epilog) has its own usage code.
    for (const CLI::App* sub : app.get_subcommands())
      return gd::usage_exit_code(sub->get_name());
    return gd::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpudoctor: %s\n",
                 gd::terminal_safe(e.what(), gd::kTerminalSentenceMax).c_str());
    return gd::kExitError;
  }
  gd::note_phase("command done");
  return gd::command_exit_code();
}
