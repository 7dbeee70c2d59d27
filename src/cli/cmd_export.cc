// gpudoctor export --db PATH [--since 1h] [--until T] -o FILE: writes the
// history that `gpudoctor serve --db` kept back out as a trace, so
// `gpudoctor diagnose --from FILE` works on yesterday's incident.
// gpudoctor export --prometheus URL --node NAME [--since 1h] [--until T]
// [--step 15s] [auth] -o FILE: the same from a fleet's Prometheus, one node
// (export_prometheus.h).
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "cli/export_prometheus.h"
#include "cli/flag_checks.h"
#include "cli/full_binary.h"
#include "common/time_point.h"
#include "store/history_store.h"
#include "trace/trace_io.h"
#include "views/format.h"

namespace gd {
namespace {

// --step: at least a second (finer than any scrape), at most an hour.
constexpr DurationRange kStepRange{1, 3600};
// --prometheus without --since: the last hour.
constexpr double kDefaultPrometheusWindowS = 3600;

struct Opts {
  std::string db, out, since, until;
  PrometheusExportFlags prom;
};

void run_db_export(const Opts& o, double since, double until) {
  StoreOptions so;
  so.path = o.db;
  so.read_only = true;
  auto store = HistoryStore::open(so);
  TraceWriter writer(o.out);
  ReadReport report;
  size_t n = store->export_trace(since, until, writer, &report);
  writer.close();
  if (n == 0)
    std::fprintf(
        stderr, "gpudoctor: export: no samples in %s between %s and %s\n",
        o.db.c_str(), utc_text(since).c_str(), utc_text(until).c_str());
  else if (o.out != "-")
    std::fprintf(stderr, "gpudoctor: exported %zu samples (%s .. %s) to %s\n",
                 n, utc_text(since).c_str(), utc_text(until).c_str(),
                 o.out.c_str());
  // The rest is written, but the trace has holes: exit 1 so a script
  // notices, and say what to run.
  if (report.skipped_blocks > 0)
    std::fprintf(stderr,
                 "gpudoctor: export: %s: skipped %zu corrupt history "
                 "block(s); the rest was exported (see `gpudoctor db check "
                 "--db %s`)\n",
                 o.db.c_str(), report.skipped_blocks, o.db.c_str());
  command_exit_code() = report.skipped_blocks > 0 ? kExitError : kExitOk;
}

void run_prometheus_export(Opts& o, double since, double until) {
  o.prom.out = o.out;
  o.prom.start = since;
  o.prom.end = until;
  size_t n = export_prometheus(o.prom);
  // No sample at all is most often a node name no series carries.
  if (n == 0) {
    std::fprintf(stderr,
                 "gpudoctor: export: %s has no series of node '%s' between "
                 "%s and %s (the node is dcgm-exporter's Hostname label or "
                 "the host of an instance label)\n",
                 o.prom.url.c_str(), o.prom.node.c_str(),
                 utc_text(since).c_str(), utc_text(until).c_str());
    command_exit_code() = kExitError;
    return;
  }
  if (o.out != "-")
    std::fprintf(stderr,
                 "gpudoctor: exported %zu samples of %s (%s .. %s) to %s\n", n,
                 o.prom.node.c_str(), utc_text(since).c_str(),
                 utc_text(until).c_str(), o.out.c_str());
  command_exit_code() = kExitOk;
}

}  // namespace

void add_export_command(CLI::App& app, const GlobalOptions&) {
  auto* cmd = app.add_subcommand(kExportCommand.name, kExportCommand.summary);
  auto o = std::make_shared<Opts>();
  auto* db = cmd->add_option(
      "--db", o->db, "history database written by `gpudoctor serve --db`");
  auto* prom = cmd->add_option(
      "--prometheus", o->prom.url,
      "instead of --db: a Prometheus that scrapes dcgm-exporter, "
      "node_exporter or serve (http[s]://HOST:PORT); needs --node");
  db->excludes(prom);
  cmd->add_option("--node", o->prom.node,
                  "with --prometheus: the node, as dcgm-exporter's Hostname "
                  "label or the host of the instance label");
  add_duration_option(*cmd, "--step", o->prom.step_s, kStepRange,
                      "with --prometheus: time between samples (default 15s)");
  cmd->add_option("--bearer-token-file", o->prom.bearer_token_file,
                  "with --prometheus: file whose first line is the token");
  cmd->add_option("--user", o->prom.user,
                  "with --prometheus: basic auth user (with --password-file)");
  cmd->add_option("--password-file", o->prom.password_file,
                  "with --prometheus: file whose first line is the password");
  cmd->add_option("--ca-file", o->prom.ca_file,
                  "with an https:// --prometheus: PEM certificate(s) to trust "
                  "(default: the system's)");
  cmd->add_option(
         "--since,--start", o->since,
         "start: a duration ago (1h, 2d), Unix seconds (a plain number: "
         "0 = everything) or a UTC time "
         "2024-11-22T08:00:00Z (default: everything kept; with "
         "--prometheus 1h)")
      ->check(check_time_point);
  cmd->add_option("--until,--end", o->until,
                  "end, same forms as --since (default: now)")
      ->check(check_time_point);
  cmd->add_option("-o,--output", o->out,
                  "trace file ('-' = stdout; a .zst name is compressed)")
      ->required();
  cmd->callback([o, cmd] {
    const bool from_prometheus = !o->prom.url.empty();
    if (o->db.empty() && !from_prometheus)
      throw CLI::RequiredError("--db or --prometheus");
    if (!from_prometheus)
      for (const char* flag : {"--node", "--step", "--bearer-token-file",
                               "--user", "--password-file", "--ca-file"})
        if (cmd->count(flag) > 0)
          throw CLI::ValidationError(flag, "is for --prometheus");
    if (from_prometheus && o->prom.node.empty())
      throw CLI::RequiredError("--node (with --prometheus)");
    double now = std::chrono::duration<double>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    double since = !o->since.empty() ? parse_time_point(o->since, now)
                   : from_prometheus ? now - kDefaultPrometheusWindowS
                                     : 0;
    double until = o->until.empty() ? now : parse_time_point(o->until, now);
    if (until < since)
      throw CLI::ValidationError(
          "--until", utc_text(until) + " is before --since " + utc_text(since));
    if (from_prometheus)
      run_prometheus_export(*o, since, until);
    else
      run_db_export(*o, since, until);
  });
}

GD_REGISTER_COMMAND(kExportCommand.order, add_export_command);

}  // namespace gd
