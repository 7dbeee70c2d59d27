// gpudoctor report [--from TRACE | --db PATH] [--since 24h] [--until T]
// [--by job|user|container|pod|namespace|gpu] [--json|--csv] [--price-kwh X]
// [--price-gpu-hour Y]: where the GPU-hours and the energy of a window went.
// Flags -> the accounting engine (fed from a trace or serve's history) ->
// the report view. In gpudoctor-full, because --db reads SQLite.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "accounting/accountant.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/fleet_plan.h"
#include "cli/fleet_report.h"
#include "cli/full_binary.h"
#include "collect/sampler.h"
#include "common/time_point.h"
#include "diagnose/engine.h"
#include "diagnose/pushed_sample_source.h"
#include "store/history_store.h"
#include "trace/trace_io.h"
#include "views/report_view.h"

namespace gd {
namespace {

struct ReportFlags {
  std::string from, db, since, end, by = "job";
  bool json = false, csv = false, findings = false;
  std::optional<double> price_kwh, price_gpu_hour;
  FleetReportFlags fleet;  // --prometheus: a fleet instead of one node
};

// A price: a plain non-negative decimal ("0.12", "2"); no sign, exponent,
// nan or inf.
std::string check_price(const std::string& text) {
  const bool plain = !text.empty() && text.size() <= 32 &&
                     text.find_first_not_of("0123456789.") == std::string::npos;
  char* end = nullptr;
  const double v = plain ? std::strtod(text.c_str(), &end) : -1;
  if (!plain || end != text.c_str() + text.size() || !std::isfinite(v))
    return "'" + text + "' is not a price (a plain number such as 0.12)";
  return {};
}

accounting::Dimension dimension_of(const std::string& by) {
  if (by == "user") return accounting::Dimension::kUser;
  if (by == "container") return accounting::Dimension::kContainer;
  if (by == "pod") return accounting::Dimension::kPod;
  if (by == "namespace") return accounting::Dimension::kNamespace;
  if (by == "gpu") return accounting::Dimension::kGpu;
  return accounting::Dimension::kJob;
}

// Reading a trace is most of the work (the accounting of one sample costs
// less than parsing it), so parser threads go as far as there are cores.
int parse_threads() {
  return static_cast<int>(
      std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

// The window's samples, each handed to the accountant on its way to the
// diagnosis: one pass over the trace does both.
class AccountingSource : public SampleSource {
 public:
  AccountingSource(TraceReader& reader, accounting::Accountant& acc,
                   const accounting::AccountOptions& o)
      : reader_(reader), acc_(acc), o_(o) {}
  bool next(Sample& out) override {
    while (reader_.next(out)) {
      if (o_.start && out.t < *o_.start) continue;
      if (o_.end && out.t > *o_.end) return false;  // in time order
      acc_.add(out);
      return true;
    }
    return false;
  }

 private:
  TraceReader& reader_;
  accounting::Accountant& acc_;
  const accounting::AccountOptions& o_;
};

// The efficiency findings behind the waste, given to the groups whose
// processes they name.
void attribute_findings(accounting::Accountant& acc, const DiagnoseResult& d) {
  std::vector<accounting::Accountant::FindingSpan> spans;
  spans.reserve(d.findings.size());
  for (const Finding& x : d.findings)
    spans.push_back({x.id, x.severity, x.pids, x.start, x.end});
  acc.attribute(spans);
}

// What the accountant reads of a sample, as a trace's reader or the
// history's scan asks for it: a week is read in seconds instead of
// rebuilding every field of it.
SampleFields accounted_fields() {
  SampleFields fields;
  for (std::string_view name : accounting::kGpuFieldsRead)
    fields.gpu.emplace_back(name);
  fields.gpu_processes = true;
  fields.process_tree = true;
  return fields;
}

accounting::AccountReport account_trace(const ReportFlags& f,
                                        const accounting::AccountOptions& o) {
  // The findings' rules read whole samples; the accounting alone, its
  // fields.
  TraceReader reader(
      f.from, {.parse_threads = parse_threads(),
               .process_budget = {},
               .fields = f.findings ? std::nullopt
                                    : std::optional(accounted_fields())});
  accounting::Accountant acc(reader.header(), o);
  AccountingSource source(reader, acc, o);
  if (!f.findings) {
    Sample s;
    while (source.next(s)) {
    }
    return acc.finish();
  }
  attribute_findings(acc, diagnose(reader.header(), source, {}));
  return acc.finish();
}

accounting::AccountReport account_history(const ReportFlags& f,
                                          const accounting::AccountOptions& o) {
  StoreOptions so;
  so.path = f.db;
  so.read_only = true;
  auto store = HistoryStore::open(so);
  const TraceHeader header = store->header();
  accounting::Accountant acc(header, o);
  ReadReport read;
  const double since = o.start.value_or(0), until = o.end.value_or(unix_now());
  if (f.findings) {
    // One pass: the scan feeds the diagnosis, and the accountant on the way.
    DiagnoseResult d;
    {
      PushedSampleSource source(
          [&](const std::function<bool(Sample&)>& push) {
            store->scan(since, until, push, &read);
          },
          [&acc](const Sample& s) { acc.add(s); });
      d = diagnose(header, source, {});
    }
    attribute_findings(acc, d);
  } else {
    store->scan_fields(
        since, until, accounted_fields(),
        [&acc](const Sample& s, bool same_processes) {
          acc.add(s, same_processes);
          return true;
        },
        &read);
  }
  if (read.skipped_blocks > 0)
    std::fprintf(stderr,
                 "gpudoctor: report: %s: skipped %zu corrupt history "
                 "block(s); their time counts as unattributed (see "
                 "`gpudoctor db check --db %s`)\n",
                 f.db.c_str(), read.skipped_blocks, f.db.c_str());
  return acc.finish();
}

void run_report(const ReportFlags& f) {
  accounting::AccountOptions o;
  const double now = unix_now();
  if (!f.end.empty()) o.end = parse_time_point(f.end, now);
  // A duration counts back from --end when one is given (parse_time_span).
  const double anchor = o.end.value_or(now);
  if (!f.since.empty()) o.start = parse_time_point(f.since, anchor);
  if (o.start && o.end && *o.end < *o.start)
    throw CLI::ValidationError("--until", "--until " + utc_text(*o.end) +
                                              " is before the start " +
                                              utc_text(*o.start));
  accounting::AccountReport r;
  ReportViewOptions view;
  if (!f.fleet.prom.url.empty()) {
    FleetReportFlags fleet = f.fleet;
    fleet.prom.since = f.since;
    fleet.prom.until = f.end;
    fleet.findings = f.findings;
    FleetReport fr = report_fleet(fleet, o);
    if (fr.not_checked.size() == fr.nodes)
      throw std::runtime_error("report: no node of " + f.fleet.prom.url +
                               " could be read: " + fr.not_checked.front());
    r = std::move(fr.report);
    view.fleet_nodes = fr.nodes;
    view.not_checked = std::move(fr.not_checked);
    o.start = r.start;
    o.end = r.end;
  } else {
    try {
      r = f.from.empty() ? account_history(f, o) : account_trace(f, o);
    } catch (const TraceError& e) {
      throw std::runtime_error(std::string("report: ") + e.what());
    }
  }
  view.by = dimension_of(f.by);
  view.source = !f.fleet.prom.url.empty() ? f.fleet.prom.url
                : f.from.empty()          ? f.db
                                          : f.from;
  if (f.price_kwh) view.prices.kwh = f.price_kwh;
  if (f.price_gpu_hour) view.prices.gpu_hour = f.price_gpu_hour;
  view.findings = f.findings;
  if (r.samples == 0)
    std::fprintf(
        stderr, "gpudoctor: report: no samples in %s between %s and %s\n",
        view.source.c_str(), o.start ? utc_text(*o.start).c_str() : "its start",
        o.end ? utc_text(*o.end).c_str() : "its end");
  const std::string out = f.json  ? report_json(r, view)
                          : f.csv ? report_csv(r, view)
                                  : report_text(r, view);
  std::fwrite(out.data(), 1, out.size(), stdout);
  command_exit_code() = kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, const GlobalOptions&) {
  auto* cmd = app.add_subcommand(kReportCommand.name, kReportCommand.summary);
  auto f = std::make_shared<ReportFlags>();
  auto* from = cmd->add_option("--from", f->from,
                               "trace to account ('-' = stdin; .zst read)")
                   ->check(file_or_stdin());
  auto* db = cmd->add_option(
      "--db", f->db, "history database written by `gpudoctor serve --db`");
  from->excludes(db);
  auto* prometheus = cmd->add_option(
      "--prometheus", f->fleet.prom.url,
      "account every node of a fleet from its Prometheus (serve's "
      "per-process series, dcgm-exporter, node_exporter; docs/fleet.md), "
      "the last 24h by default");
  prometheus->excludes(from)->excludes(db);
  add_prometheus_server_flags(*cmd, f->fleet.prom);
  cmd->add_option("--match", f->fleet.match,
                  "with --prometheus: only the nodes whose GPU series match "
                  "these label matchers ('{cluster=\"a\"}')");
  cmd->add_option("--concurrency", f->fleet.concurrency,
                  "with --prometheus: nodes read at once (default 4, 1 to 64)")
      ->transform(decimal_in(1, kMaxFleetConcurrency));
  add_duration_option(*cmd, "--node-timeout", f->fleet.node_timeout_s,
                      {kMinFleetTimeoutS, kMaxFleetTimeoutS},
                      "with --prometheus: the most one node's requests take "
                      "all together; a node that runs out is not checked "
                      "(default 10m)");
  add_duration_option(*cmd, "--timeout", f->fleet.timeout_s,
                      {kMinFleetTimeoutS, kMaxFleetTimeoutS},
                      "with --prometheus: the most the nodes' reading takes "
                      "all together; nodes not read by then are not checked "
                      "(default 1h)");
  // The window flags of diagnose and export: --since counts back from
  // --until (or now).
  cmd->add_option("--since,--start", f->since,
                  "start: a duration before --until or now (24h, 7d), Unix "
                  "seconds or a UTC time 2024-11-22T08:00:00Z (default: "
                  "everything; with --prometheus 24h)")
      ->check(time_point_value());
  cmd->add_option("--until,--end", f->end,
                  "end, same forms as --since (default: the last sample)")
      ->check(time_point_value());
  cmd->add_option("--by", f->by,
                  "group by job (default), user, container, pod (Kubernetes "
                  "namespace/name), namespace or gpu")
      ->check(CLI::IsMember(
          {"job", "user", "container", "pod", "namespace", "gpu"}));
  auto* json = cmd->add_flag("--json", f->json, "JSON instead of a table");
  auto* csv = cmd->add_flag("--csv", f->csv, "CSV, one row per group");
  json->excludes(csv);
  cmd->add_option_function<std::string>(
         "--price-kwh",
         [f](const std::string& v) { f->price_kwh = std::stod(v); },
         "price of one kWh: adds a cost column")
      ->check(check_price);
  cmd->add_option_function<std::string>(
         "--price-gpu-hour",
         [f](const std::string& v) { f->price_gpu_hour = std::stod(v); },
         "price of one GPU-hour held: adds a cost column")
      ->check(check_price);
  cmd->add_flag("--findings", f->findings,
                "also run the diagnosis over the window and give each "
                "group the findings that name its processes");
  cmd->callback([f, cmd] {
    if (f->from.empty() && f->db.empty() && f->fleet.prom.url.empty())
      throw CLI::RequiredError("--from, --db or --prometheus");
    if (f->fleet.prom.url.empty()) {
      std::vector<const char*> flags = prometheus_only_flags();
      flags.push_back("--match");
      flags.push_back("--concurrency");
      flags.push_back("--node-timeout");
      flags.push_back("--timeout");
      for (const char* flag : flags)
        if (cmd->count(flag) > 0)
          throw CLI::ValidationError(flag, "is for --prometheus");
    }
    run_report(*f);
  });
}

GD_REGISTER_NAMED_COMMAND(kReportCommand.order, kReportCommand.name,
                          add_report_command);

}  // namespace gd
