// gpudoctor top [--from TRACE [--speed X] | --connect URL[,URL...]|@FILE
//                [--auth-file F] [--ca-file PEM] [--timeout 2s] |
//                --prometheus URL [--match '{...}'] [--ca-file PEM]
//                [--bearer-token-file F | --basic-auth-user U
//                 --password-file F]]
//               [--readonly] [--mono] [--config FILE] [--kill-timeout 10s]
// The terminal view people keep open: every GPU, the host, the GPU
// processes, and the live findings of the diagnosis engine; `k` ends
// processes through the safe path of `gpudoctor kill`. The data comes from
// monitor/ (live, replay, remote), the screen from views/top/.
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/top_remote.h"
#include "common/long_run_memory.h"
#include "common/terminal_text.h"
#include "diagnose/config_files.h"
#include "monitor/kill_job.h"
#include "monitor/live_feed.h"
#include "monitor/replay_feed.h"
#include "trace/trace_io.h"
#include "views/top/app.h"
#include "views/top/terminal.h"

namespace gd {
namespace {

// --kill-timeout: how long SIGTERM gets before SIGKILL (and NVML to free the
// memory); as `kill --timeout`.
constexpr DurationRange kKillTimeoutRange{0, 3600};
// --timeout: each request to a serve (--connect).
constexpr DurationRange kRequestTimeoutRange{0.1, 60};

int run_top_command(const GlobalOptions& g, const TopFlags& f) {
  if ((!f.from.empty()) + (!f.connect.empty()) + (!f.prometheus.empty()) > 1) {
    std::fprintf(stderr,
                 "gpudoctor: top: --from, --connect and --prometheus exclude "
                 "each other\n");
    return kExitUsage;
  }
  if (!f.match.empty() && f.prometheus.empty()) {
    std::fprintf(stderr, "gpudoctor: top: --match is for --prometheus\n");
    return kExitUsage;
  }
  if (f.prometheus.empty() &&
      (!f.bearer_token_file.empty() || !f.prom_user.empty() ||
       !f.password_file.empty())) {
    std::fprintf(stderr, "gpudoctor: top: %s is for --prometheus\n",
                 !f.bearer_token_file.empty() ? "--bearer-token-file"
                 : !f.prom_user.empty()       ? "--basic-auth-user"
                                              : "--password-file");
    return kExitUsage;
  }
  if (f.timeout_s > 0 && f.connect.empty()) {
    std::fprintf(stderr, "gpudoctor: top: --timeout is for --connect\n");
    return kExitUsage;
  }
  if (!f.prometheus.empty()) {
    if (!f.auth_file.empty()) {
      std::fprintf(stderr, "gpudoctor: top: --auth-file is for --connect\n");
      return kExitUsage;
    }
    std::setlocale(LC_ALL, "");
    const char* no_color = std::getenv("NO_COLOR");
    return run_top_fleet(g, f, f.mono || (no_color && *no_color));
  }
  if (f.connect.empty() && (!f.auth_file.empty() || !f.ca_file.empty())) {
    std::fprintf(stderr, "gpudoctor: top: %s is for --connect\n",
                 f.auth_file.empty() ? "--ca-file" : "--auth-file");
    return kExitUsage;
  }
  // One node's view, a few threads: before the feed starts them. (The
  // fleet's view above parses many nodes' replies on threads of their own.)
  prefer_returning_memory();
  std::setlocale(LC_ALL, "");
  monitor::WindowOptions window;
  window.config = load_config(f.config_path);
  top::TopOptions o;
  const char* no_color = std::getenv("NO_COLOR");
  o.monochrome = f.mono || (no_color && *no_color);
  o.readonly = f.readonly;
  o.readonly_reason = "started with --readonly";
  o.exit_after_frames = f.exit_after_frames;

  std::unique_ptr<monitor::Feed> feed;
  if (!f.from.empty()) {
    feed = std::make_unique<monitor::ReplayFeed>(f.from, f.speed, window);
    o.replay = true;
    o.readonly = true;
    o.readonly_reason =
        "a replay shows a recording: its processes are not this machine's";
  } else if (!f.connect.empty()) {
    return run_top_remote(g, f, o);
  } else {
    auto live = std::make_unique<monitor::LiveFeed>(g.sampler_options(),
                                                    g.interval_s, window);
    o.live = true;
    o.proc_root = g.proc_root;
    o.dev_prefix = g.dev_prefix;
    o.kill_backend = [p = live.get()] {
      return monitor::local_kill_backend([p] { return p->sample_now(); },
                                         p->header());
    };
    o.kill.proc_root = g.proc_root;
    o.kill.dev_prefix = g.dev_prefix;
    o.kill.timeout_s = f.kill_timeout_s;
    feed = std::move(live);
  }
  return top::run_top(*feed, o);
}

}  // namespace

void add_top_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "top",
      "the live terminal view: GPUs, host, GPU processes and the current "
      "findings; k ends processes safely (h on the screen lists the keys)");
  auto f = std::make_shared<TopFlags>();
  cmd->add_option("--from", f->from,
                  "replay a recorded trace ('-' = stdin): Space pauses, +/- "
                  "change the speed, Left/Right seek")
      ->check(file_or_stdin());
  cmd->add_option("--speed", f->speed, "replay speed (1/16 .. 64, default 1)")
      ->check(CLI::Range(1.0 / 16, 64.0));
  cmd->add_option("--connect", f->connect,
                  "show a running `gpudoctor serve` instead of this machine: "
                  "http://HOST:PORT (k asks serve to end processes there, "
                  "if it runs with --allow-remote-kill); URL,URL,... or "
                  "@FILE (a URL a line): the fleet of those serves, a row "
                  "each, Enter opens one");
  add_duration_option(*cmd, "--timeout", f->timeout_s, kRequestTimeoutRange,
                      "with --connect: each request's deadline (default 2s); "
                      "a serve that does not answer in time is shown as not "
                      "answering");
  cmd->add_option("--bearer-token-file", f->bearer_token_file,
                  "with --prometheus: file whose first line is the token");
  cmd->add_option("--basic-auth-user", f->prom_user,
                  "with --prometheus: basic auth user (with --password-file)");
  cmd->add_option("--password-file", f->password_file,
                  "with --prometheus: file whose first line is the password");
  cmd->add_option("--prometheus", f->prometheus,
                  "the fleet, live: one row per node of this Prometheus "
                  "(http[s]://HOST:PORT[/prefix]), the worst first; Enter "
                  "opens a node");
  cmd->add_option("--match", f->match,
                  "with --prometheus: only the nodes whose GPU series carry "
                  "these labels ('{label=\"v\", ...}')");
  cmd->add_option("--auth-file", f->auth_file,
                  "user:password for a serve with basic auth (--web-config)");
  cmd->add_option("--ca-file", f->ca_file,
                  "with an https:// --connect or --prometheus: PEM "
                  "certificate(s) to trust, "
                  "serve's own self-signed one or its CA (default: the "
                  "system's)");
  cmd->add_flag("--readonly", f->readonly,
                "no key acts on processes (k is refused)");
  cmd->add_flag("--mono", f->mono, "no colours (also when NO_COLOR is set)");
  cmd->add_option("--config", f->config_path,
                  "diagnosis thresholds, as `diagnose --config`")
      ->check(CLI::ExistingFile);
  add_duration_option(*cmd, "--kill-timeout", f->kill_timeout_s,
                      kKillTimeoutRange,
                      "k: how long SIGTERM gets before the SIGKILL that f asks "
                      "for (default 10s; at most 60s with --connect)");
  cmd->add_option("--exit-after-frames", f->exit_after_frames,
                  "quit after N frames with a sample (benchmarks)")
      ->group("");
  cmd->callback([&global, f] {
    try {
      command_exit_code() = run_top_command(global, *f);
    } catch (const top::TerminalError& e) {
      std::fprintf(stderr, "gpudoctor: top: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitError;
    } catch (const TraceError& e) {
      std::fprintf(stderr, "gpudoctor: top: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitError;
    } catch (const ConfigError& e) {
      std::fprintf(stderr, "gpudoctor: top: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitUsage;
    } catch (const CLI::ValidationError& e) {
      std::fprintf(stderr, "gpudoctor: top: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitUsage;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: top: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitError;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(15, "top", add_top_command);

}  // namespace gd
