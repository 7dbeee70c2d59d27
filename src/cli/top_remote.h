// `gpudoctor top --connect URL`: the screen fed by a remote `gpudoctor
// serve`; `top --prometheus URL`: the fleet screen. Split from cmd_top.cc
// because it needs the HTTP client (and its TLS libraries): gpudoctor-full
// links top_remote.cc; the lean `gpudoctor` links top_remote_exec.cc, which
// hands the command line to gpudoctor-full (full_binary.h), so that a local
// `top` never loads them.
#pragma once

#include <string>

#include "cli/global_options.h"
#include "views/top/app.h"

namespace gd {

struct TopFlags {
  std::string from;
  std::string connect;
  std::string prometheus;  // --prometheus: the fleet screen
  std::string match;       // --match, with --prometheus
  std::string auth_file;
  std::string ca_file;
  // The Prometheus' credentials (--prometheus), as diagnose takes them.
  std::string bearer_token_file, prom_user, password_file;
  double speed = 1;
  bool readonly = false;
  bool mono = false;
  std::string config_path;
  double kill_timeout_s = 10;
  std::string dev_prefix = "/dev";
  int exit_after_frames = 0;
  // --timeout: each request's deadline with --connect (0: not given, 2 s).
  double timeout_s = 0;
};

// Runs top against f.connect with `o` (the options every source shares):
// one URL, that node's screen; URL,URL,... or @FILE, the fleet screen of
// those serves. Returns the exit status.
int run_top_remote(const GlobalOptions& g, const TopFlags& f,
                   top::TopOptions& o);

// Runs the fleet screen against f.prometheus (top --prometheus URL
// [--match]); returns the exit status.
int run_top_fleet(const GlobalOptions& g, const TopFlags& f, bool mono);

}  // namespace gd
