// Options of `gpudoctor serve` (the daemon: Prometheus exporter, JSON API,
// history, alerting).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collect/sampler.h"
#include "http_client/client.h"
#include "serve/cmdline_exposure.h"

namespace gd {

// Not used by node_exporter (9100), dcgm-exporter (9400) or
// nvidia_gpu_exporter (9835).
inline constexpr int kDefaultServePort = 9856;

struct ServeOptions {
  std::string listen_host = "127.0.0.1";  // loopback unless told otherwise
  int listen_port = kDefaultServePort;
  double interval_s = 1.0;
  std::string db_path;  // "" = default_db_path()
  bool no_db = false;
  double retention_s = 7 * 86400.0;
  std::string config_path;       // "" = built-in thresholds and policy
  std::string alertmanager_url;  // "" = do not send alerts
  std::string version;           // for gpudoctor_build_info
  CmdlineExposure show_cmdline = CmdlineExposure::kRedacted;
  // --allowed-host: Host header names answered besides loopback ones.
  std::vector<std::string> allowed_hosts;
  std::string web_config_path;  // "" = plain HTTP, no auth
  // --allow-remote-kill: POST /api/v1/kill ends processes (kill_api.h);
  // needs basic auth in the web config.
  bool allow_remote_kill = false;
  // --remote-kill-admins: the basic-auth users who may end any user's
  // processes; the others only their own Unix user's. Unset: everyone.
  std::optional<std::vector<std::string>> remote_kill_admins;
  std::string dev_prefix = "/dev";  // NVIDIA device nodes (tests)
  // --slurm-drain: drain this Slurm node on a critical hardware finding,
  // with brakes (slurm_drain.h).
  bool slurm_drain = false;
  bool slurm_resume = false;           // --slurm-resume
  double slurm_drain_period_s = 3600;  // --slurm-drain-period
  std::string slurm_node;              // --slurm-node; "" = short host name
  SamplerOptions sampler;
  // --fleet-prometheus: the fleet's Prometheus ("" none: no Fleet page),
  // --fleet-match (a checked label matcher list, "" all) and its client's
  // credentials (--fleet-ca-file). Checked by the command line.
  std::string fleet_prometheus;
  std::string fleet_match;
  http::Credentials fleet_credentials;
};

// A combination of options serve refuses to start with (exit 2).
struct ServeUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "HOST:PORT", ":PORT" (all interfaces), "PORT", "[v6]:PORT". Throws
// std::invalid_argument naming the text.
void parse_listen_address(const std::string& text, std::string& host,
                          int& port);

// /var/lib/gpudoctor/history.db for root, else
// $XDG_STATE_HOME/gpudoctor/history.db (default ~/.local/state).
std::string default_db_path();

// Runs the daemon until SIGTERM/SIGINT; returns the exit code. Startup
// failures (port in use, unreadable config, unopenable database) throw
// std::runtime_error with a one-line message; ServeUsageError for options
// that do not go together (--allow-remote-kill without basic auth).
int run_serve(const ServeOptions& options);

}  // namespace gd
