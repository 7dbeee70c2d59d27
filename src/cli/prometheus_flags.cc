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

// A plain number ("0", "1732262400", "1732262400.5"): Unix seconds, as
// /api/v1/history reads it, so `--since 0` is the epoch (everything).
std::optional<double> parse_unix_seconds(const std::string& text) {
  if (text.empty() ||
      text.find_first_not_of("0123456789.") != std::string::npos)
    return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// "2024-11-22T08:00:00Z", "2024-11-22T08:00", "2024-11-22 08:00:00" (UTC).
std::optional<double> parse_utc_time(const std::string& text) {
  std::tm tm{};
  for (const char* fmt : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
                          "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d"}) {
    tm = std::tm{};
    const char* end = strptime(text.c_str(), fmt, &tm);
    if (end && (*end == '\0' || (end[0] == 'Z' && end[1] == '\0')))
      return static_cast<double>(timegm(&tm));
  }
  return std::nullopt;
}

}  // namespace

void add_prometheus_flags(CLI::App& cmd, PrometheusFlags& f,
                          const std::string& since_help) {
  add_duration_option(cmd, "--step", f.step_s, kStepRange,
                      "with --prometheus: time between samples (default 15s)");
  cmd.add_option("--bearer-token-file", f.bearer_token_file,
                 "with --prometheus: file whose first line is the token");
  cmd.add_option("--user", f.user,
                 "with --prometheus: basic auth user (with --password-file)");
  cmd.add_option("--password-file", f.password_file,
                 "with --prometheus: file whose first line is the password");
  cmd.add_option("--ca-file", f.ca_file,
                 "with an https:// --prometheus: PEM certificate(s) to trust "
                 "(default: the system's)");
  cmd.add_option("--since,--start", f.since,
                 "start: a duration ago (1h, 2d), Unix seconds or a UTC time "
                 "2024-11-22T08:00:00Z (default: " +
                     since_help + ")")
      ->check(check_time_point);
  cmd.add_option("--until,--end", f.until,
                 "end, same forms as --since (default: now)")
      ->check(check_time_point);
}

const std::vector<const char*>& prometheus_only_flags() {
  static const std::vector<const char*> flags{"--step", "--bearer-token-file",
                                              "--user", "--password-file",
                                              "--ca-file"};
  return flags;
}

double parse_time_point(const std::string& text, double now) {
  if (auto t = parse_utc_time(text)) return *t;
  if (auto t = parse_unix_seconds(text)) return *t;
  double v = 0;
  try {
    v = parse_duration(text);
  } catch (const std::exception&) {
    throw std::invalid_argument(
        "'" + text +
        "' is not a duration (1h), a Unix time or a UTC time "
        "(2024-11-22T08:00:00Z)");
  }
  return now - v;
}

std::string check_time_point(const std::string& text) {
  try {
    parse_time_point(text, 0);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string utc_text(double t) {
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

TimeWindow window_of(const PrometheusFlags& f, double default_s) {
  const double now = unix_now();
  TimeWindow w;
  w.start = f.since.empty() ? now - default_s : parse_time_point(f.since, now);
  w.end = f.until.empty() ? now : parse_time_point(f.until, now);
  if (w.end < w.start)
    throw CLI::ValidationError(
        "--until", utc_text(w.end) + " is before --since " + utc_text(w.start));
  return w;
}

}  // namespace gd
