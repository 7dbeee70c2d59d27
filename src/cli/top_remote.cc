// top --connect and top --prometheus in gpudoctor-full (see top_remote.h).
#include "cli/top_remote.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "api/kill_json.h"
#include "cli/commands.h"
#include "cli/prometheus_credentials.h"
#include "common/secret_file.h"
#include "common/terminal_text.h"
#include "monitor/fleet_feed.h"
#include "monitor/kill_job.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_kill.h"
#include "monitor/serve_fleet_feed.h"
#include "promsource/label_matcher.h"
#include "views/top/fleet.h"

namespace gd {
namespace {

// "user:password" on the first line of `path`.
std::pair<std::string, std::string> read_auth_file(const std::string& path) {
  std::string line;
  try {
    line = read_secret_line(path);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--auth-file", e.what());
  }
  auto colon = line.find(':');
  if (colon == std::string::npos || colon == 0)
    throw CLI::ValidationError("--auth-file",
                               path + ": the first line must be user:password");
  return {line.substr(0, colon), line.substr(colon + 1)};
}

// --connect URL,URL,... or @FILE: the fleet screen, a row per serve.
int run_top_serve_fleet(const GlobalOptions& g, const TopFlags& f,
                        const top::TopOptions& o) {
  monitor::ServeFleetOptions so;
  try {
    so.urls = f.connect[0] == '@'
                  ? monitor::read_serve_file(f.connect.substr(1))
                  : monitor::parse_serve_list(f.connect);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gpudoctor: top: --connect %s\n",
                 terminal_safe(e.what(), kTerminalSentenceMax).c_str());
    return kExitUsage;
  }
  so.source =
      f.connect[0] == '@'
          ? fmt::format("{} serves of {}", so.urls.size(), f.connect.substr(1))
          : fmt::format("{} serves", so.urls.size());
  if (!f.auth_file.empty())
    std::tie(so.who.user, so.who.password) = read_auth_file(f.auth_file);
  if (!f.ca_file.empty()) {
    if (std::none_of(so.urls.begin(), so.urls.end(), [](const auto& u) {
          return u.rfind("https://", 0) == 0;
        })) {
      std::fprintf(stderr,
                   "gpudoctor: top: --ca-file is for https:// serves\n");
      return kExitUsage;
    }
    if (!std::ifstream(f.ca_file))
      throw CLI::ValidationError("--ca-file", f.ca_file + ": cannot read it");
    so.who.ca_file = f.ca_file;
  }
  // Without --interval, every 5 s, as --prometheus.
  so.interval_s = g.interval_given ? std::max(0.5, g.interval_s) : 5;
  so.request_timeout_s = f.timeout_s > 0 ? f.timeout_s : 2;
  std::signal(SIGPIPE, SIG_IGN);  // as below: a TLS close_notify
  monitor::ServeFleetFeed feed(std::move(so));
  top::FleetTopOptions t;
  t.monochrome = o.monochrome;
  t.exit_after_frames = f.exit_after_frames;
  return top::run_fleet_top(feed, t);
}

}  // namespace

int run_top_remote(const GlobalOptions& g, const TopFlags& f,
                   top::TopOptions& o) {
  if (f.connect.find(',') != std::string::npos || f.connect[0] == '@')
    return run_top_serve_fleet(g, f, o);
  monitor::RemoteOptions r;
  r.request_timeout_s = f.timeout_s > 0 ? f.timeout_s : 2;
  r.url = f.connect;
  // Without --interval, serve's own: its samples come at that pace.
  r.interval_s = g.interval_given ? g.interval_s : 0;
  if (!f.auth_file.empty())
    std::tie(r.who.user, r.who.password) = read_auth_file(f.auth_file);
  if (!f.ca_file.empty()) {
    if (f.connect.rfind("https://", 0) != 0) {
      std::fprintf(stderr,
                   "gpudoctor: top: --ca-file is for an https:// --connect\n");
      return kExitUsage;
    }
    if (!std::ifstream(f.ca_file))
      throw CLI::ValidationError("--ca-file", f.ca_file + ": cannot read it");
    r.who.ca_file = f.ca_file;
  }
  // A TLS connection ended on our side (a deadline, a cancel at quit) is
  // still written to by OpenSSL's close_notify: EPIPE, not a SIGPIPE that
  // kills top with the terminal still in its modes.
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<monitor::Feed> feed;
  try {
    feed = std::make_unique<monitor::RemoteFeed>(r);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gpudoctor: top: --connect %s\n",
                 terminal_safe(e.what(), kTerminalSentenceMax).c_str());
    return kExitUsage;
  }
  if (f.kill_timeout_s > api::kKillApiMaxTimeoutS) {
    std::fprintf(stderr,
                 "gpudoctor: top: --kill-timeout: at most 60s with "
                 "--connect (serve's bound)\n");
    return kExitUsage;
  }
  // k: serve ends the processes on its node, if it was started with
  // --allow-remote-kill (else its refusal is shown).
  o.kill_backend = [r] { return monitor::remote_kill_backend(r); };
  o.kill.timeout_s = f.kill_timeout_s;
  return top::run_top(*feed, o);
}

int run_top_fleet(const GlobalOptions& g, const TopFlags& f, bool mono) {
  if (!f.match.empty()) {
    try {
      promsource::check_label_matcher(f.match);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--match", e.what());
    }
  }
  PrometheusFlags pf;
  pf.url = f.prometheus;
  pf.ca_file = f.ca_file;
  pf.bearer_token_file = f.bearer_token_file;
  pf.user = f.prom_user;
  pf.password_file = f.password_file;
  monitor::FleetFeedOptions o;
  o.source = f.prometheus;
  o.match = f.match;
  // Without --interval, every 5 s: Prometheus scrapes every 15 to 60 s.
  o.interval_s = g.interval_given ? std::max(1.0, g.interval_s) : 5;
  o.round_deadline_s = std::clamp(3 * o.interval_s, 10.0, 60.0);
  http::prom::Client client(prometheus_url(pf), prometheus_credentials(pf),
                            promsource::fleet_limits(o.round_deadline_s));
  std::signal(SIGPIPE, SIG_IGN);  // as top --connect: a TLS close_notify
  monitor::FleetFeed feed(std::move(client), o);
  top::FleetTopOptions t;
  t.monochrome = mono;
  t.exit_after_frames = f.exit_after_frames;
  return top::run_fleet_top(feed, t);
}

}  // namespace gd
