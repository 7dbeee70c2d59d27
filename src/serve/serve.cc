// run_serve: wires sampler, sampling loop, history, alerting and HTTP together
// and handles signals (TERM/INT: stop, HUP: reload the config).
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <stdexcept>

#include "http_client/url.h"
#include "monitor/fleet_feed.h"
#include "promsource/fleet_state.h"
#include "serve/alertmanager_client.h"
#include "serve/event_stream.h"
#include "serve/fleet_view.h"
#include "serve/history.h"
#include "serve/host_check.h"
#include "serve/http_server.h"
#include "serve/log.h"
#include "serve/memory_history.h"
#include "serve/sampling_loop.h"
#include "serve/serve_config.h"
#include "serve/serve_options.h"
#include "serve/slurm_drainer.h"

namespace gd {
namespace {

// How often the signal loop also checks that the HTTP thread is alive.
constexpr long kSignalPollMs = 250;

void log_config_warnings(const ServeConfig& c) {
  for (const auto& k : c.unknown_keys)
    spdlog::warn("msg=\"config key not used by any rule\" file={} key={}",
                 serve_log::q(c.rules.where(k)), serve_log::q(k));
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// The node name Slurm knows by default: the host name up to its first dot.
std::string short_host_name() {
  std::string h = host_name();
  return h.substr(0, h.find('.'));
}

// --allow-remote-kill ends processes on request: every request must be
// authenticated, or anyone who reaches the port could.
void check_remote_kill_allowed(const ServeOptions& o,
                               const std::optional<WebConfig>& web) {
  if (!web)
    throw ServeUsageError(
        "--allow-remote-kill needs every request authenticated: give "
        "--web-config FILE with basic_auth_users (and tls_server_config "
        "unless serve listens on loopback only)");
  if (web->basic_auth_users.empty())
    throw ServeUsageError(
        "--allow-remote-kill needs every request authenticated: the web "
        "config " +
        o.web_config_path + " has no basic_auth_users");
  for (const std::string& admin :
       o.remote_kill_admins.value_or(std::vector<std::string>{}))
    if (!web->basic_auth_users.count(admin))
      throw ServeUsageError("--remote-kill-admins: '" + admin +
                            "' is not a user of basic_auth_users in " +
                            o.web_config_path);
}

// --fleet-prometheus: the fleet read every 5 s (or serve's --interval, when
// longer), as top --prometheus reads it, each round within its deadline.
std::unique_ptr<FleetView> fleet_view(const ServeOptions& o, EventHub& events) {
  if (o.fleet_prometheus.empty()) return nullptr;
  http::Url url = http::parse_url(o.fleet_prometheus);
  monitor::FleetFeedOptions fo;
  // Shown to whoever reads the dashboard: the server, not a query that
  // might carry a token.
  fo.source = url.scheme_host_port + url.path;
  fo.match = o.fleet_match;
  fo.interval_s = std::max(5.0, o.interval_s);
  fo.round_deadline_s = std::clamp(3 * fo.interval_s, 10.0, 60.0);
  http::prom::Client client(std::move(url), o.fleet_credentials,
                            promsource::fleet_limits(fo.round_deadline_s));
  return std::make_unique<FleetView>(
      std::make_unique<monitor::FleetFeed>(std::move(client), fo), &events);
}

}  // namespace

void parse_listen_address(const std::string& text, std::string& host,
                          int& port) {
  std::string h, p;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() ||
        text[close + 1] != ':')
      throw std::invalid_argument("--listen: '" + text +
                                  "' is not [ADDRESS]:PORT");
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
  } else if (auto colon = text.rfind(':'); colon != std::string::npos) {
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
    if (h.empty()) h = "0.0.0.0";
  } else {
    h = "127.0.0.1";
    p = text;
  }
  int v = -1;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
  if (ec != std::errc() || end != p.data() + p.size() || v < 0 || v > 65535)
    throw std::invalid_argument("--listen: '" + text +
                                "': port must be a number 0..65535");
  host = h;
  port = v;
}

std::string default_db_path() {
  if (geteuid() == 0) return "/var/lib/gpudoctor/history.db";
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/gpudoctor/history.db";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") +
         "/.local/state/gpudoctor/history.db";
}

int run_serve(const ServeOptions& o) {
  serve_log::setup();
  // Signals are taken by sigtimedwait below, never by a handler: block them
  // before any thread exists so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a scraper that hangs up must not kill us

  // The web config first: a remote kill without authentication stops
  // serve before it samples or listens.
  std::optional<WebConfig> web;
  if (!o.web_config_path.empty()) web = load_web_config(o.web_config_path);
  if (o.remote_kill_admins && !o.allow_remote_kill)
    throw ServeUsageError("--remote-kill-admins needs --allow-remote-kill");
  if (o.allow_remote_kill) check_remote_kill_allowed(o, web);
  if (o.slurm_resume && !o.slurm_drain)
    throw ServeUsageError("--slurm-resume needs --slurm-drain");
  // A bad --alertmanager URL is a usage error, found before anything starts.
  std::unique_ptr<AlertmanagerClient> alertmanager;
  try {
    if (!o.alertmanager_url.empty())
      alertmanager = std::make_unique<AlertmanagerClient>(o.alertmanager_url);
  } catch (const std::invalid_argument& e) {
    throw ServeUsageError(e.what());
  }

  Sampler sampler(o.sampler);
  const TraceHeader& header = sampler.header();

  ConfigHolder config(load_serve_config(o.config_path, header));
  log_config_warnings(*config.get());

  std::unique_ptr<History> history;
  std::string db =
      o.no_db ? "" : (o.db_path.empty() ? default_db_path() : o.db_path);
  // --no-db keeps the last minutes in memory: the dashboard and the API
  // still have a short history, and nothing is written.
  history = o.no_db ? memory_history() : open_history(db, o.retention_s);
  history->set_header(header);

  SnapshotBox box;
  HttpServer http(box, history.get(), o.allowed_hosts);
  const bool tls = web && web->tls;
  if (web) http.use_web_config(std::move(*web));
  http.bind(o.listen_host, o.listen_port);
  const std::string shown_host =
      o.listen_host == "0.0.0.0" || o.listen_host == "::" ? host_name()
                                                          : o.listen_host;
  SamplingLoopOptions co;
  co.interval_s = o.interval_s;
  co.instance = host_name() + ":" + std::to_string(http.port());
  // The dashboard's address, as a user opens it (an IPv6 host bracketed).
  const std::string base_url =
      (tls ? "https://" : "http://") +
      (shown_host.find(':') != std::string::npos ? "[" + shown_host + "]"
                                                 : shown_host) +
      ":" + std::to_string(http.port());
  co.generator_url = base_url + "/api/v1/findings";
  co.version = o.version;
  co.show_cmdline = o.show_cmdline;
  co.on_publish = [&http](const Snapshot& s) { http.events().publish(s); };
  std::unique_ptr<SlurmDrainer> slurm;
  if (o.slurm_drain) {
    SlurmDrainConfig sc;
    sc.node = o.slurm_node.empty() ? short_host_name() : o.slurm_node;
    sc.period_s = o.slurm_drain_period_s;
    sc.resume = o.slurm_resume;
    const std::string scontrol = ScontrolNodeControl::default_program();
    slurm = std::make_unique<SlurmDrainer>(
        sc, std::make_unique<ScontrolNodeControl>(scontrol));
    http.enable_slurm(slurm.get());
    co.on_evaluate = [&slurm, &header](const std::vector<Finding>& findings,
                                       double now) {
      slurm->post(slurm_drain_candidate(findings, header), now);
    };
    spdlog::warn(
        "msg=\"slurm drain is on: a critical hardware finding drains this "
        "node\" node={} period_s={} resume={} scontrol={}",
        serve_log::q(sc.node), sc.period_s, sc.resume, serve_log::q(scontrol));
  }
  SamplingLoop loop(sampler, history.get(), box, config, alertmanager.get(),
                    co);
  std::unique_ptr<FleetView> fleet = fleet_view(o, http.events());
  if (fleet) http.enable_fleet(fleet.get());
  if (o.allow_remote_kill) {
    KillApiConfig kill;
    kill.enabled = true;
    kill.proc_root = o.sampler.proc_root;
    kill.dev_prefix = o.dev_prefix;
    kill.show_cmdline = o.show_cmdline;
    kill.admins = o.remote_kill_admins;
    kill.fresh_sample = [&loop] { return loop.sample_now(kKillSampleWait); };
    http.enable_kill(std::move(kill));
    spdlog::warn(
        "msg=\"remote kill is on: basic-auth users may end processes on this "
        "node (POST /api/v1/kill)\" tls={} admins={}",
        tls,
        o.remote_kill_admins ? serve_log::q(fmt::format(
                                   "{}", fmt::join(*o.remote_kill_admins, ",")))
                             : "all");
    if (!tls && !is_loopback_name(o.listen_host))
      spdlog::warn(
          "msg=\"remote kill over plain HTTP on a non-loopback address: "
          "passwords and kill requests cross the network readable; add "
          "tls_server_config to the web config\" listen={}",
          serve_log::q(o.listen_host));
  }
  http.start();
  if (slurm) slurm->start();
  loop.start();
  if (fleet) fleet->start();
  spdlog::info(
      "msg=\"serving\" dashboard={} listen={}:{} version={} nvml_status={} "
      "gpus={} interval_s={} db={} alertmanager={} config={} fleet={}",
      serve_log::q(base_url + "/"), o.listen_host, http.port(),
      serve_log::q(o.version), header.nvml_status, header.gpus.size(),
      o.interval_s,
      serve_log::q(db.empty() ? "none (the last 15m in memory)" : db),
      serve_log::q(o.alertmanager_url.empty() ? "off" : o.alertmanager_url),
      serve_log::q(config.get()->files.empty() ? "none" : config.get()->files),
      serve_log::q(o.fleet_prometheus.empty() ? "off" : o.fleet_prometheus));

  int exit_code = 0;
  for (;;) {
    timespec timeout{0, kSignalPollMs * 1000000L};
    int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig == SIGHUP) {
      try {
        auto fresh = load_serve_config(o.config_path, header);
        log_config_warnings(*fresh);
        const std::string files = fresh->files.empty() ? "none" : fresh->files;
        config.set(std::move(fresh));
        spdlog::info("msg=\"config reloaded\" file={}", serve_log::q(files));
      } catch (const std::exception& e) {
        spdlog::error(
            "msg=\"config reload failed; keeping the old one\" "
            "error={}",
            serve_log::q(e.what()));
      }
      continue;
    }
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("msg=\"shutting down\" signal={}",
                   sig == SIGTERM ? "SIGTERM" : "SIGINT");
      break;
    }
    if (!http.healthy()) {
      exit_code = 1;
      break;
    }
  }
  http.stop();
  if (fleet) fleet->stop();
  loop.stop();
  if (slurm) slurm->stop();
  if (alertmanager) alertmanager->stop();
  if (history) {
    try {
      history->flush();
    } catch (const std::exception& e) {
      spdlog::error("msg=\"history flush failed\" error={}",
                    serve_log::q(e.what()));
      exit_code = 1;
    }
  }
  spdlog::info("msg=\"stopped\"");
  return exit_code;
}

}  // namespace gd
