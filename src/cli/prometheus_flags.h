// The flags every command that reads a fleet's Prometheus takes (export
// --prometheus, diagnose --prometheus), declared in one place: the server,
// its credentials, the window and its step.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/time_point.h"  // parse_time_point, check_time_point, utc_text
#include "promsource/read_node.h"

namespace gd {

struct PrometheusFlags {
  std::string url;
  std::string bearer_token_file, user, password_file, ca_file;
  std::string since, until;  // as the user gave them (parse_time_point)
  std::string node_label;    // --node-label: node_exporter's node label
  double step_s = 15;
  std::string read = "auto";  // --read: auto, remote-read, query-range
};

// --read as the reader's path.
promsource::ReadPath read_path_of(const PrometheusFlags& f);

// --step, --bearer-token-file, --basic-auth-user, --password-file, --ca-file,
// --node-label, --read,
// --since/--start, --until/--end. `since_help` says what --since defaults
// to for this command.
void add_prometheus_flags(CLI::App& cmd, PrometheusFlags& f,
                          const std::string& since_help);
// The same without the times, for a command with its own (report).
void add_prometheus_server_flags(CLI::App& cmd, PrometheusFlags& f);

// The flags above that mean nothing without --prometheus (not the times:
// export --db takes them too).
const std::vector<const char*>& prometheus_only_flags();

struct TimeWindow {
  double start = 0, end = 0;
};
// --since (default `now - default_s`) and --until (default now); throws
// CLI::ValidationError when the end is before the start.
TimeWindow window_of(const PrometheusFlags& f, double default_s);

}  // namespace gd
