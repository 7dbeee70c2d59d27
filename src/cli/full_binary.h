// gpudoctor is two executables, built from the same command files. The
// lean `gpudoctor` that people run links no HTTP, TLS or SQLite library:
// those (libmicrohttpd and GnuTLS, cpp-httplib and OpenSSL, SQLite, yaml-cpp)
// cost a resident process several MiB and run their own initialisers at
// every start, and `top`, `status`, `who` and `kill` never use them. The
// commands that do (serve, db, export, top --connect, and ps or a live
// diagnose asking a running serve for its history: serve_client.h) live in
// gpudoctor-full, installed beside it, and the lean binary hands their
// command line over unchanged with execv: same process, same pid, same
// terminal. (git keeps its HTTP transport out of `git` the same way.)
#pragma once

#include <string>
#include <string_view>

namespace gd {

// The commands that only gpudoctor-full runs: name, --help order, summary.
// cmd_<name>.cc registers the real one; the lean binary registers a
// forwarder with the same name, order and summary (full_commands.cc).
struct FullOnlyCommand {
  const char* name;
  int order;
  const char* summary;
};
inline constexpr FullOnlyCommand kServeCommand{
    "serve", 70,
    "run as a daemon: Prometheus /metrics (dcgm-exporter compatible), JSON "
    "API, history and alerting on findings (sampling follows the global "
    "--interval and --deadline)"};
inline constexpr FullOnlyCommand kExportCommand{
    "export", 80,
    "write the history kept by `serve --db` as a trace (for diagnose --from)"};
inline constexpr FullOnlyCommand kReportCommand{
    "report", 82,
    "where the GPU-hours and the energy went: usage, waste and energy per "
    "job, user, container or GPU, from a trace or the history of `serve "
    "--db`"};
inline constexpr FullOnlyCommand kDbCommand{
    "db", 85, "check or repair the history database of `serve --db`"};
// The manual and the completions are made from gpudoctor-full's command
// table, the one that holds every command's flags (command_docs.h).
inline constexpr FullOnlyCommand kManCommand{
    "man", 1010,
    "the manual page of gpudoctor, or of COMMAND, as roff for man(1); --dir "
    "DIR writes every page (gpudoctor.1, gpudoctor-COMMAND.1)"};
inline constexpr FullOnlyCommand kCompletionCommand{
    "completion", 1020,
    "the shell completion script for bash, zsh or fish (source it, or let "
    "the packages install it)"};

inline constexpr const char* kFullBinaryName = "gpudoctor-full";

// main() keeps its argv here, for exec_full_binary.
void remember_command_line(int argc, char** argv);

// Replaces this process with gpudoctor-full (found beside this executable)
// running the same command line. Returns only by exiting, with a one-line
// error naming the file when it cannot be started. `what` names the feature
// in that message ("serve", "top --connect").
[[noreturn]] void exec_full_binary(std::string_view what);

// The same, but returns when gpudoctor-full cannot be started: "PATH, which
// cannot be started: why" (for a command that can go on without it).
std::string try_exec_full_binary();

}  // namespace gd
