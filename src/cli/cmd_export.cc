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
#include "cli/prometheus_flags.h"
#include "collect/sampler.h"
#include "common/duration.h"
#include "common/time_point.h"
#include "store/history_store.h"
#include "trace/trace_io.h"
#include "views/format.h"

namespace gd {
namespace {

// --prometheus without --since: the last hour.
constexpr double kDefaultPrometheusWindowS = 3600;

struct Opts {
  std::string db, out;
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
        o.db.c_str(), local_text(since).c_str(), local_text(until).c_str());
  else if (o.out != "-")
    // The data's range: without --since the window starts at 1970.
    std::fprintf(stderr, "gpudoctor: exported %zu samples (%s .. %s) to %s\n",
                 n, local_text(report.first_t).c_str(),
                 local_text(report.last_t).c_str(), o.out.c_str());
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
                 o.prom.prom.url.c_str(), o.prom.node.c_str(),
                 local_text(since).c_str(), local_text(until).c_str());
    command_exit_code() = kExitError;
    return;
  }
  if (o.out != "-")
    std::fprintf(stderr,
                 "gpudoctor: exported %zu samples of %s (%s .. %s) to %s\n", n,
                 o.prom.node.c_str(), local_text(since).c_str(),
                 local_text(until).c_str(), o.out.c_str());
  command_exit_code() = kExitOk;
}

}  // namespace

void add_export_command(CLI::App& app, const GlobalOptions&) {
  auto* cmd = app.add_subcommand(kExportCommand.name, kExportCommand.summary);
  auto o = std::make_shared<Opts>();
  auto* db = cmd->add_option(
      "--db", o->db, "history database written by `gpudoctor serve --db`");
  auto* prom = cmd->add_option(
      "--prometheus", o->prom.prom.url,
      "instead of --db: a Prometheus that scrapes dcgm-exporter, "
      "node_exporter or serve (http[s]://HOST:PORT); needs --node");
  db->excludes(prom);
  cmd->add_option("--node", o->prom.node,
                  "with --prometheus: the node, as dcgm-exporter's Hostname "
                  "label or the host of the instance label");
  add_prometheus_flags(*cmd, o->prom.prom,
                       "everything kept; with --prometheus 1h");
  cmd->add_option("-o,--output", o->out,
                  "trace file ('-' = stdout; a .zst name is compressed)")
      ->required();
  cmd->callback([o, cmd] {
    const bool from_prometheus = !o->prom.prom.url.empty();
    if (o->db.empty() && !from_prometheus)
      throw CLI::RequiredError("--db or --prometheus");
    if (!from_prometheus)
      for (const char* flag : prometheus_only_flags())
        if (cmd->count(flag) > 0)
          throw CLI::ValidationError(flag, "is for --prometheus");
    if (!from_prometheus && cmd->count("--node") > 0)
      throw CLI::ValidationError("--node", "is for --prometheus");
    if (from_prometheus && o->prom.node.empty())
      throw CLI::RequiredError("--node (with --prometheus)");
    // --db with no --since: everything kept (the epoch on).
    const TimeWindow w = window_of(
        o->prom.prom, from_prometheus ? kDefaultPrometheusWindowS : unix_now());
    if (from_prometheus)
      run_prometheus_export(*o, w.start, w.end);
    else
      run_db_export(*o, w.start, w.end);
  });
}

GD_REGISTER_NAMED_COMMAND(kExportCommand.order, kExportCommand.name,
                          add_export_command);

}  // namespace gd
