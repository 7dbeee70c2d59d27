// gpudoctor export --db PATH [--since 1h] [--until T] -o FILE: writes the
// history that `gpudoctor serve --db` kept back out as a trace, so
// `gpudoctor diagnose --from FILE` works on yesterday's incident.
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "cli/full_binary.h"
#include "common/time_point.h"
#include "store/history_store.h"
#include "trace/trace_io.h"
#include "views/format.h"

namespace gd {

void add_export_command(CLI::App& app, const GlobalOptions&) {
  auto* cmd = app.add_subcommand(kExportCommand.name, kExportCommand.summary);
  struct Opts {
    std::string db, out, since, until;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--db", o->db,
                  "history database written by `gpudoctor serve --db`")
      ->required();
  cmd->add_option(
         "--since", o->since,
         "start: a duration ago (1h, 2d), Unix seconds (a plain number: "
         "0 = everything) or a UTC time "
         "2024-11-22T08:00:00Z (default: everything kept)")
      ->check(check_time_point);
  cmd->add_option("--until", o->until,
                  "end, same forms as --since (default: now)")
      ->check(check_time_point);
  cmd->add_option("-o,--output", o->out,
                  "trace file ('-' = stdout; a .zst name is compressed)")
      ->required();
  cmd->callback([o] {
    double now = std::chrono::duration<double>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    double since = o->since.empty() ? 0 : parse_time_point(o->since, now);
    double until = o->until.empty() ? now : parse_time_point(o->until, now);
    if (until < since)
      throw std::invalid_argument("export: --until " + utc_text(until) +
                                  " is before --since " + utc_text(since));
    StoreOptions so;
    so.path = o->db;
    so.read_only = true;
    auto store = HistoryStore::open(so);
    TraceWriter writer(o->out);
    ReadReport report;
    size_t n = store->export_trace(since, until, writer, &report);
    writer.close();
    if (n == 0)
      std::fprintf(
          stderr, "gpudoctor: export: no samples in %s between %s and %s\n",
          o->db.c_str(), utc_text(since).c_str(), utc_text(until).c_str());
    else if (o->out != "-")
      std::fprintf(stderr, "gpudoctor: exported %zu samples (%s .. %s) to %s\n",
                   n, utc_text(since).c_str(), utc_text(until).c_str(),
                   o->out.c_str());
    // The rest is written, but the trace has holes: exit 1 so a script
    // notices, and say what to run.
    if (report.skipped_blocks > 0)
      std::fprintf(stderr,
                   "gpudoctor: export: %s: skipped %zu corrupt history "
                   "block(s); the rest was exported (see `gpudoctor db check "
                   "--db %s`)\n",
                   o->db.c_str(), report.skipped_blocks, o->db.c_str());
    command_exit_code() = report.skipped_blocks > 0 ? kExitError : kExitOk;
  });
}

GD_REGISTER_COMMAND(kExportCommand.order, add_export_command);

}  // namespace gd
