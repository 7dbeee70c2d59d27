#include "cli/prometheus_flags.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <stdexcept>

#include "cli/flag_checks.h"
#include "collect/sampler.h"
#include "common/duration.h"

namespace gd {
namespace {

// --step: at least a second (finer than any scrape), at most an hour.
constexpr DurationRange kStepRange{1, 3600};

}  // namespace

void add_prometheus_flags(CLI::App& cmd, PrometheusFlags& f,
                          const std::string& since_help) {
  add_prometheus_server_flags(cmd, f);
  cmd.add_option("--since,--start", f.since,
                 "start: a duration before --until or now (1h, 2d), Unix "
                 "seconds or a UTC time 2024-11-22T08:00:00Z (default: " +
                     since_help + ")")
      ->check(time_point_value());
  cmd.add_option("--until,--end", f.until,
                 "end, same forms as --since (default: now)")
      ->check(time_point_value());
}

void add_prometheus_server_flags(CLI::App& cmd, PrometheusFlags& f) {
  add_duration_option(cmd, "--step", f.step_s, kStepRange,
                      "with --prometheus: time between samples (default 15s)");
  cmd.add_option("--bearer-token-file", f.bearer_token_file,
                 "with --prometheus: file whose first line is the token");
  // --user is a Unix user in every command (ps, kill): the server's login
  // has a name of its own.
  cmd.add_option("--basic-auth-user", f.user,
                 "with --prometheus: basic auth user (with --password-file)");
  cmd.add_option("--password-file", f.password_file,
                 "with --prometheus: file whose first line is the password");
  cmd.add_option("--ca-file", f.ca_file,
                 "with an https:// --prometheus: PEM certificate(s) to trust "
                 "(default: the system's)");
  cmd.add_option("--node-label", f.node_label,
                 "with --prometheus: the label of node_exporter's series that "
                 "names the node (after relabelling, e.g. nodename), instead "
                 "of the host of their instance");
  cmd.add_option("--read", f.read,
                 "with --prometheus: how GPU series are read: remote-read "
                 "(/api/v1/read, raw chunks, far less work for the server), "
                 "query-range, or auto (remote read while the server answers "
                 "it, else query-range; default)")
      ->check(CLI::IsMember({"auto", "remote-read", "query-range"}));
}

const std::vector<const char*>& prometheus_only_flags() {
  static const std::vector<const char*> flags{
      "--step",          "--bearer-token-file", "--basic-auth-user",
      "--password-file", "--ca-file",           "--node-label",
      "--read"};
  return flags;
}

promsource::ReadPath read_path_of(const PrometheusFlags& f) {
  if (f.read == "remote-read") return promsource::ReadPath::kRemoteRead;
  if (f.read == "query-range") return promsource::ReadPath::kQueryRange;
  return promsource::ReadPath::kAuto;
}

TimeWindow window_of(const PrometheusFlags& f, double default_s) {
  try {
    const TimeSpan s = parse_time_span(f.since, f.until, unix_now(), default_s);
    return {s.start, s.end};
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--until", e.what());
  }
}

}  // namespace gd
