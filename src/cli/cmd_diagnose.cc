// gpudoctor diagnose [--from TRACE] [--duration 30s] [--json] [--gpu LIST]
//                    [--min-severity S] [--config FILE] [--serve URL]
//                    [--prometheus URL (every node of a fleet,
//                    fleet_diagnose.h)]
// Names the cause of a slow, under-used or out-of-memory GPU server
// (findings.md). Exit codes: 0 ok/info, 1 warning, 2 critical, 3 could not
// diagnose. Live, it starts from the last minutes of a running serve's
// history when there is one (cli/serve_client.h).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/fleet_diagnose.h"
#include "cli/prometheus_flags.h"
#include "cli/serve_client.h"
#include "collect/sampler.h"
#include "common/terminal_text.h"
#include "diagnose/config_files.h"
#include "diagnose/engine.h"
#include "diagnose/history_then_live.h"
#include "diagnose/live_sample_source.h"
#include "trace/trace_io.h"
#include "views/diagnose_report.h"
#include "views/format.h"

namespace gd {
namespace {

// A live diagnosis window: a second is one sample, a month is the longest
// anyone leaves a terminal command running.
constexpr DurationRange kDurationRange{1, 30 * 86400.0};

// Threads that parse trace lines while the rules run on this one. Parsing
// is about two thirds of the work, so two parsers keep the rules busy even
// on a two-core machine; past four the rules are the bottleneck.
int trace_parse_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 2u, 4u));
}

// serve listens here unless told otherwise (as for ps).
constexpr const char* kDefaultServeUrl = "http://127.0.0.1:9856";
// The history a live diagnose starts from: as long as the longest window a
// rule asks for (memory-leak, gpu-idle-allocated: 5 min), twice over.
constexpr const char* kServeHistoryPath =
    "/api/v1/export?since=10m&compress=zstd";

std::atomic<bool> g_interrupted{false};
extern "C" void on_diagnose_interrupt(int) { g_interrupted.store(true); }

struct DiagnoseFlags {
  std::string from;
  double duration_s = 30;
  bool json = false;
  std::vector<std::string> gpus;  // --gpu as given: indices, UUIDs...
  std::string min_severity = "info";
  std::string config_path;
  bool checklist = false;
  std::string serve = kDefaultServeUrl;  // "none": sample live only
  FleetDiagnoseFlags fleet;  // --prometheus: a fleet instead of this machine
  bool duration_given = false;
};

// serve's recent samples as the start of a live window, or null when serve
// is not there (the normal case) or sent something that is not a trace.
std::unique_ptr<HistoryThenLiveSource> from_serve(const DiagnoseFlags& f,
                                                  SampleSource& live) {
  if (f.serve == "none") return nullptr;
  auto body = serve_get(f.serve, kServeHistoryPath);
  if (!body) return nullptr;
  try {
    return std::make_unique<HistoryThenLiveSource>(*body, live);
  } catch (const TraceError& e) {
    std::fprintf(stderr,
                 "gpudoctor: warning: %s sent no usable history (%s); "
                 "diagnosing live samples only\n",
                 terminal_safe(f.serve).c_str(),
                 terminal_safe(e.what(), kTerminalSentenceMax).c_str());
    return nullptr;
  }
}

// --gpu names a GPU of the window; another index would hide every GPU
// finding and read as "nothing found", so it is a usage error.
void check_gpus_in_window(const GpuSelection& gpus, const TraceHeader& h) {
  const std::vector<int> missing = gpus_missing(h, gpus);
  if (missing.empty()) return;
  std::string have;
  for (const GpuInfo& g : h.gpus)
    have += (have.empty() ? "" : ",") + std::to_string(g.index);
  throw CLI::ValidationError(
      "--gpu",
      "GPU " + join_ints(missing) + " is not in the window (" +
          (have.empty() ? std::string("it has no GPU") : "its GPUs: " + have) +
          ")");
}

int run_diagnose(const GlobalOptions& global, const DiagnoseFlags& f) {
  if (!f.fleet.prom.url.empty()) {
    DiagnoseOptions options;
    // Each node has its own UUIDs and addresses: a fleet's GPU is an index.
    for (const std::string& name : f.gpus) {
      auto index = gpu_index_of(name);
      if (!index)
        throw CLI::ValidationError(
            "--gpu",
            "with --prometheus names GPU indices (each node's UUIDs "
            "and PCI addresses are its own)");
      if (std::find(options.gpus.begin(), options.gpus.end(), *index) ==
          options.gpus.end())
        options.gpus.push_back(*index);
    }
    options.min_severity = f.min_severity;
    options.config = load_config(f.config_path);
    FleetDiagnoseFlags fleet = f.fleet;
    fleet.json = f.json;
    if (f.duration_given) fleet.window_s = f.duration_s;
    return diagnose_fleet(fleet, options);
  }
  if (f.from.empty() && f.serve != "none")
    ask_serve_in_full_binary("diagnose --serve");
  check_serve_url("--serve", f.serve);
  DiagnoseOptions options;
  options.min_severity = f.min_severity;
  options.config = load_config(f.config_path);

  DiagnoseResult result;
  TraceHeader header;
  if (!f.from.empty()) {
    TraceReader reader(f.from, {.parse_threads = trace_parse_threads(),
                                .process_budget = {},
                                .fields = std::nullopt});
    header = reader.header();
    options.gpus = gpu_flag_indices(header, f.gpus);
    check_gpus_in_window(options.gpus, header);
    TraceSampleSource source(reader);
    result = diagnose(header, source, options);
  } else {
    std::signal(SIGINT, on_diagnose_interrupt);
    Sampler sampler(global.sampler_options());
    header = sampler.header();
    options.gpus = gpu_flag_indices(header, f.gpus);
    check_gpus_in_window(options.gpus, header);
    LiveSampleSource::Progress progress;
    if (!f.json && isatty(fileno(stderr))) {
      progress.on_sample = [](long taken, long total) {
        std::fprintf(stderr,
                     "\rgpudoctor: sampling %ld/%ld (Ctrl-C to stop early)",
                     taken, total);
      };
      progress.on_end = [](long taken) {
        if (taken > 0) std::fprintf(stderr, "\r\033[K");
      };
    }
    LiveSampleSource source([&sampler] { return sampler.sample(); },
                            global.interval_s, f.duration_s, g_interrupted,
                            progress);
    if (auto chained = from_serve(f, source)) {
      result = diagnose(header, *chained, options);
      result.window.parts = chained->parts(f.serve);
      if (!chained->history_error().empty())
        std::fprintf(stderr,
                     "gpudoctor: warning: %s: serve's history ended early "
                     "(%s); the window has what came before\n",
                     f.serve.c_str(), chained->history_error().c_str());
    } else {
      result = diagnose(header, source, options);
    }
  }
  for (const auto& key : result.unused_config_keys)
    // serve reads [alerting] from the same files.
    if (!key.starts_with("alerting."))
      std::fprintf(stderr, "gpudoctor: warning: %s: no rule uses key '%s'\n",
                   options.config.where(key).c_str(), key.c_str());
  if (result.window.samples == 0)
    throw std::runtime_error(f.from.empty()
                                 ? "no samples were taken"
                                 : f.from + ": trace has no samples");
  std::string report =
      f.json ? format_json_report(result) : format_text_report(result, header);
  std::fwrite(report.data(), 1, report.size(), stdout);
  if (report.empty() || report.back() != '\n') std::fputc('\n', stdout);
  return diagnose_exit_code(result);
}

}  // namespace

int run_checklist(const GlobalOptions& global, bool json);  // cmd_checklist.cc

void add_diagnose_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "diagnose",
      "name the cause of a slow or under-used GPU server, with evidence and "
      "the fix (exit 0 ok, 1 warning, 2 critical, 3 could not diagnose)");
  auto f = std::make_shared<DiagnoseFlags>();
  auto* from =
      cmd->add_option("--from", f->from,
                      "diagnose a recorded trace instead of the live machine "
                      "('-' = stdin)")
          ->check(file_or_stdin());
  auto* duration =
      add_duration_option(*cmd, "--duration", f->duration_s, kDurationRange,
                          "live sampling window (default 30s)");
  cmd->add_flag("--json", f->json, "print findings as JSON (findings.md)");
  auto* serve = cmd->add_option(
      "--serve", f->serve,
      "live: start from the last 10 min of this gpudoctor serve's history "
      "when it answers within 300 ms (default http://127.0.0.1:9856; none = "
      "sample live only)");
  from->excludes(serve);
  auto* prometheus = cmd->add_option(
      "--prometheus", f->fleet.prom.url,
      "diagnose every node of a fleet from its Prometheus (dcgm-exporter, "
      "node_exporter or serve series; docs/fleet.md) over the last "
      "--duration (default here 1h) or --since/--until, one report per "
      "node, then a fleet summary");
  prometheus->excludes(from)->excludes(serve);
  add_prometheus_flags(*cmd, f->fleet.prom, "--duration ago");
  cmd->add_option("--match", f->fleet.match,
                  "with --prometheus: only the nodes whose GPU series match "
                  "these labels, e.g. '{cluster=\"a\",rack=~\"r1.*\"}'");
  cmd->add_option("--html", f->fleet.html,
                  "with --prometheus: also write the fleet as one "
                  "self-contained HTML page (heat map, findings, charts) to "
                  "this file");
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
  auto* gpu = add_gpu_list_option(
      *cmd, "--gpu", f->gpus,
      "only findings about these GPUs, e.g. 0,2: indices, UUIDs, PCI "
      "addresses or /dev/nvidiaN (with --prometheus: indices)");
  auto* min_severity =
      cmd->add_option("--min-severity", f->min_severity,
                      "hide findings below this severity")
          ->check(CLI::IsMember({"info", "warning", "critical"}));
  auto* config =
      cmd->add_option("--config", f->config_path,
                      "TOML file overriding rule thresholds (default: "
                      "/etc/gpudoctor/gpudoctor.toml, then "
                      "~/.config/gpudoctor/gpudoctor.toml)")
          ->check(CLI::ExistingFile);
  // The checklist looks at the machine as it is now, all of it: the flags
  // that shape a sampled diagnosis would be silently ignored, so refuse them.
  cmd->add_flag("--checklist", f->checklist,
                "static self-check of driver, GPU and host settings")
      ->excludes(from)
      ->excludes(duration)
      ->excludes(gpu)
      ->excludes(min_severity)
      ->excludes(config)
      ->excludes(serve)
      ->excludes(prometheus);
  cmd->callback([&global, f, cmd] {
    f->duration_given = cmd->count("--duration") > 0;
    if (f->fleet.prom.url.empty()) {
      std::vector<const char*> flags = prometheus_only_flags();
      for (const char* flag : {"--match", "--concurrency", "--node-timeout",
                               "--timeout", "--since", "--until", "--html"})
        flags.push_back(flag);
      for (const char* flag : flags)
        if (cmd->count(flag) > 0)
          throw CLI::ValidationError(flag, "is for --prometheus");
    } else if (f->duration_given && cmd->count("--since") > 0) {
      throw CLI::ValidationError("--duration",
                                 "and --since exclude each other");
    }
    try {
      command_exit_code() = f->checklist ? run_checklist(global, f->json)
                                         : run_diagnose(global, *f);
    } catch (const ConfigError& e) {  // --config is user input: usage error
      std::fprintf(stderr, "gpudoctor: diagnose: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitUsage;
    } catch (const CLI::ParseError&) {
      throw;  // a bad flag: main's one line and exit 2
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: diagnose: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitCouldNotDiagnose;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(30, "diagnose", add_diagnose_command);

}  // namespace gd
