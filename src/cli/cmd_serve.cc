// gpudoctor serve [--listen 127.0.0.1:9856] [--db PATH | --no-db]
//                 [--retention 7d] [--config FILE] [--alertmanager URL]
//                 [--allowed-host NAME]... [--web-config FILE]
//                 [--allow-remote-kill [--remote-kill-admins U,...]]
//                 [--hostname NAME]
//                 [--slurm-drain [--slurm-drain-period 1h] [--slurm-resume]
//                  [--slurm-node NAME]]
//                 [--fleet-prometheus URL [--fleet-match '{...}']
//                  [--fleet-ca-file PEM] [--fleet-bearer-token-file F |
//                  --fleet-basic-auth-user U --fleet-password-file F]]
// The daemon: Prometheus /metrics (dcgm-exporter compatible + gpudoctor_*),
// JSON API, SQLite history and alerting on diagnosis findings. Sampling
// interval and GPU deadline are the global --interval and --deadline.
#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/full_binary.h"
#include "cli/prometheus_credentials.h"
#include "cli/version.h"
#include "common/terminal_text.h"
#include "diagnose/config.h"
#include "promsource/label_matcher.h"
#include "promsource/node_match.h"
#include "serve/host_check.h"
#include "serve/serve_options.h"
#include "views/format.h"

namespace gd {
namespace {

// History kept: an hour is the shortest that is still history; ten years
// bounds the database (and the arithmetic on it).
constexpr DurationRange kRetentionRange{3600, 3650 * 86400.0};
// --slurm-drain-period: a second at least (tests), a month at most.
constexpr DurationRange kDrainPeriodRange{1, 31 * 86400.0};
// What the fleet's flags are named after: --fleet-prometheus,
// --fleet-bearer-token-file, ...
constexpr const char* kFleetFlagPrefix = "--fleet-";

struct ServeFlags {
  std::string listen = "127.0.0.1:" + std::to_string(kDefaultServePort);
  std::string db;
  bool no_db = false;
  std::string retention = "7d";
  std::string config;
  std::string alertmanager;
  std::string show_cmdline = "redacted";
  std::vector<std::string> allowed_hosts;
  std::string web_config;
  bool allow_remote_kill = false;
  std::vector<std::string> remote_kill_admins;
  std::string hostname;
  bool slurm_drain = false;
  bool slurm_resume = false;
  std::string slurm_drain_period = "1h";
  std::string slurm_node;
  // --fleet-prometheus and its --fleet-* credentials, checked as top
  // --prometheus checks its own (prometheus_credentials.h).
  PrometheusFlags fleet;
  std::string fleet_match;
};

CLI::Validator duration_in(DurationRange range) {
  return CLI::Validator(
      [range](std::string& t) -> std::string {
        std::string error;
        auto v = try_parse_duration(t, &error);
        return v ? check_duration_range(t, *v, range) : error;
      },
      "DURATION");
}

// --fleet-prometheus, --fleet-match and the --fleet-* credentials as top
// --prometheus checks its --prometheus, --match and credentials; throws
// CLI::ValidationError or std::invalid_argument naming the flag.
void set_fleet_options(const ServeFlags& f, ServeOptions& o) {
  if (f.fleet.url.empty()) return;
  prometheus_url(f.fleet, kFleetFlagPrefix);
  if (!f.fleet_match.empty()) {
    try {
      promsource::check_label_matcher(f.fleet_match);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--fleet-match: ") + e.what());
    }
  }
  o.fleet_credentials = prometheus_credentials(f.fleet, kFleetFlagPrefix);
  o.fleet_prometheus = f.fleet.url;
  o.fleet_match = f.fleet_match;
}

}  // namespace

void add_serve_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(kServeCommand.name, kServeCommand.summary);
  auto f = std::make_shared<ServeFlags>();
  cmd->add_option("--listen", f->listen,
                  "HOST:PORT to serve HTTP on (default 127.0.0.1:9856; "
                  "':9856' for all interfaces)");
  auto* db = cmd->add_option("--db", f->db,
                             "SQLite history file (default "
                             "/var/lib/gpudoctor/history.db as root, else "
                             "$XDG_STATE_HOME/gpudoctor/history.db)");
  cmd->add_flag("--no-db", f->no_db,
                "write no history: keep the last 15 min in memory only")
      ->excludes(db);
  cmd->add_option("--retention", f->retention,
                  "how long history is kept (default 7d; " +
                      duration_range_text(kRetentionRange) + ")")
      ->check(CLI::Validator(
          [](std::string& t) -> std::string {
            std::string error;
            auto v = try_parse_duration(t, &error);
            return v ? check_duration_range(t, *v, kRetentionRange) : error;
          },
          "DURATION"));
  cmd->add_option("--config", f->config,
                  "TOML file: rule thresholds and the [alerting] section "
                  "(reloaded on SIGHUP; default: the files diagnose reads)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--alertmanager", f->alertmanager,
                  "Alertmanager base URL (http://host:9093): firing findings "
                  "are sent to its API v2");
  cmd->add_option("--show-cmdline", f->show_cmdline,
                  "command lines in the API, history, metrics and alerts: "
                  "redacted (default: secrets replaced by <redacted>), full, "
                  "none");
  cmd->add_option("--allowed-host", f->allowed_hosts,
                  "Host header name to answer besides loopback names "
                  "(repeatable; '*' for any). Default: loopback names when "
                  "listening on loopback, any Host otherwise");
  cmd->add_option("--web-config", f->web_config,
                  "TLS and basic auth: a Prometheus exporter-toolkit web "
                  "config file (tls_server_config, basic_auth_users)");
  cmd->add_flag("--allow-remote-kill", f->allow_remote_kill,
                "accept POST /api/v1/kill (top --connect's k): basic-auth "
                "users may end GPU processes here, through the checks of "
                "`gpudoctor kill`. Needs --web-config with basic_auth_users "
                "(and TLS off loopback). Default off");
  auto* admins =
      cmd->add_option("--remote-kill-admins", f->remote_kill_admins,
                      "with --allow-remote-kill: the basic-auth users who may "
                      "end any user's processes (comma-separated); the others "
                      "only those of the Unix user of their own name. "
                      "Default: every basic-auth user may")
          ->delimiter(',');
  cmd->add_option("--hostname", f->hostname,
                  "the node's name in every series' Hostname label, the "
                  "API and history (default: this host's name); the name a "
                  "fleet's `diagnose --prometheus` joins the node by, e.g. "
                  "the Kubernetes node name behind a Service")
      ->check(CLI::Validator(
          [](std::string& t) -> std::string {
            try {
              promsource::check_node_name(t);
              return {};
            } catch (const std::invalid_argument& e) {
              return e.what();
            }
          },
          "NAME"));
  auto* drain = cmd->add_flag(
      "--slurm-drain", f->slurm_drain,
      "drain this Slurm node (scontrol update state=drain) when a critical "
      "hardware finding appears (docs/slurm.md), at most once per "
      "--slurm-drain-period, never a node already drained or down or whose "
      "reason someone else set. scontrol is $GPUDOCTOR_SCONTROL or on PATH. "
      "Default off");
  cmd->add_option("--slurm-drain-period", f->slurm_drain_period,
                  "with --slurm-drain: at most one drain per this long "
                  "(default 1h; " +
                      duration_range_text(kDrainPeriodRange) + ")")
      ->check(duration_in(kDrainPeriodRange))
      ->needs(drain);
  cmd->add_flag("--slurm-resume", f->slurm_resume,
                "with --slurm-drain: resume the node once the finding has "
                "cleared, only if serve drained it and its reason is still "
                "serve's. Default off")
      ->needs(drain);
  cmd->add_option("--slurm-node", f->slurm_node,
                  "with --slurm-drain: this node's name in Slurm (default: "
                  "the host name up to its first dot)")
      ->check(CLI::Validator(
          [](std::string& t) -> std::string {
            if (t.empty() || t.size() > 64) return "1 to 64 characters";
            for (char c : t)
              if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' &&
                  c != '_' && c != '.')
                return "'" + t + "': letters, digits, '-', '_' and '.' only";
            return {};
          },
          "NAME"))
      ->needs(drain);
  auto* fleet = cmd->add_option(
      "--fleet-prometheus", f->fleet.url,
      "the fleet on the dashboard's Fleet page and GET /api/v1/fleet: every "
      "node of this Prometheus (http[s]://HOST:PORT[/prefix]) as `top "
      "--prometheus` shows it, read every 5 s on a thread of its own");
  cmd->add_option("--fleet-match", f->fleet_match,
                  "with --fleet-prometheus: only the nodes whose GPU series "
                  "carry these labels ('{label=\"v\", ...}')")
      ->needs(fleet);
  cmd->add_option("--fleet-ca-file", f->fleet.ca_file,
                  "with an https:// --fleet-prometheus: PEM certificate(s) "
                  "to trust (default: the system's)")
      ->needs(fleet);
  cmd->add_option("--fleet-bearer-token-file", f->fleet.bearer_token_file,
                  "with --fleet-prometheus: file whose first line is the "
                  "token")
      ->needs(fleet);
  cmd->add_option("--fleet-basic-auth-user", f->fleet.user,
                  "with --fleet-prometheus: basic auth user (with "
                  "--fleet-password-file)")
      ->needs(fleet);
  cmd->add_option("--fleet-password-file", f->fleet.password_file,
                  "with --fleet-prometheus: file whose first line is the "
                  "password")
      ->needs(fleet);
  cmd->callback([&global, f, admins] {
    try {
      ServeOptions o;
      try {
        parse_listen_address(f->listen, o.listen_host, o.listen_port);
        host_policy_for(o.listen_host, f->allowed_hosts);
        set_fleet_options(*f, o);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "gpudoctor: serve: %s\n",
                     terminal_safe(e.what(), kTerminalSentenceMax).c_str());
        command_exit_code() = kExitUsage;
        return;
      } catch (const CLI::ValidationError& e) {
        std::fprintf(stderr, "gpudoctor: serve: %s\n",
                     terminal_safe(e.what(), kTerminalSentenceMax).c_str());
        command_exit_code() = kExitUsage;
        return;
      }
      o.interval_s = global.interval_s;
      o.db_path = f->db;
      o.no_db = f->no_db;
      o.retention_s = parse_duration(f->retention);
      o.config_path = f->config;
      o.alertmanager_url = f->alertmanager;
      o.allowed_hosts = f->allowed_hosts;
      o.web_config_path = f->web_config;
      o.allow_remote_kill = f->allow_remote_kill;
      if (admins->count() > 0) o.remote_kill_admins = f->remote_kill_admins;
      o.dev_prefix = global.dev_prefix;
      o.slurm_drain = f->slurm_drain;
      o.slurm_resume = f->slurm_resume;
      o.slurm_drain_period_s = parse_duration(f->slurm_drain_period);
      o.slurm_node = f->slurm_node;
      o.version = GD_VERSION;
      auto show_cmdline = parse_cmdline_exposure(f->show_cmdline);
      if (!show_cmdline) {
        std::fprintf(stderr,
                     "gpudoctor: serve: --show-cmdline: '%s' is not one of "
                     "redacted, full, none\n",
                     f->show_cmdline.c_str());
        command_exit_code() = kExitUsage;
        return;
      }
      o.show_cmdline = *show_cmdline;
      o.sampler = global.sampler_options();
      o.sampler.hostname = f->hostname;
      command_exit_code() = run_serve(o);
    } catch (const ServeUsageError& e) {
      std::fprintf(stderr, "gpudoctor: serve: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitUsage;
    } catch (const ConfigError& e) {  // --config is user input: usage error
      std::fprintf(stderr, "gpudoctor: serve: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitUsage;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: serve: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kExitError;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(kServeCommand.order, kServeCommand.name,
                          add_serve_command);

}  // namespace gd
