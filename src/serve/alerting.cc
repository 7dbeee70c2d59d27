#include "serve/alerting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/int_list.h"

namespace gd {
namespace {

constexpr const char* kPrefix = "alerting.";
constexpr const char* kForPrefix = "alerting.for_s.";

int severity_order(const std::string& s) {
  return s == "critical" ? 2 : s == "warning" ? 1 : 0;
}

}  // namespace

double AlertPolicy::for_s(const Finding& f) const {
  auto it = for_by_id.find(f.id);
  if (it != for_by_id.end()) return it->second;
  if (f.severity == "critical") return for_critical_s;
  if (f.severity == "warning") return for_warning_s;
  return for_info_s;
}

AlertPolicy AlertPolicy::from_config(const Config& config,
                                     const std::vector<std::string>& keys) {
  AlertPolicy p;
  auto get = [&](const char* name, double def) {
    return config.get(std::string(kPrefix) + name, def);
  };
  p.window_s = get("window_s", p.window_s);
  p.evaluate_every_s = get("evaluate_every_s", p.evaluate_every_s);
  p.resend_every_s = get("resend_every_s", p.resend_every_s);
  p.for_critical_s = get("for_critical_s", p.for_critical_s);
  p.for_warning_s = get("for_warning_s", p.for_warning_s);
  p.for_info_s = get("for_info_s", p.for_info_s);
  for (const auto& k : keys)
    if (k.rfind(kForPrefix, 0) == 0)
      p.for_by_id[k.substr(std::string(kForPrefix).size())] = config.get(k, 0);
  auto positive = [](double v, const char* what) {
    if (!(v > 0) || !std::isfinite(v))
      throw std::runtime_error(fmt::format("alerting.{} must be > 0", what));
  };
  positive(p.window_s, "window_s");
  positive(p.evaluate_every_s, "evaluate_every_s");
  positive(p.resend_every_s, "resend_every_s");
  for (double v : {p.for_critical_s, p.for_warning_s, p.for_info_s})
    if (!(v >= 0)) throw std::runtime_error("alerting.for_*_s must be >= 0");
  for (const auto& [id, v] : p.for_by_id)
    if (!(v >= 0))
      throw std::runtime_error(
          fmt::format("alerting.for_s.{} must be >= 0", id));
  return p;
}

std::string AlertTracker::key_of(const Finding& f) {
  return f.id + "|" + join_ints(f.gpus, ",");
}

std::vector<TrackedAlert> AlertTracker::update(
    const std::vector<Finding>& findings, double now,
    const AlertPolicy& policy) {
  std::vector<TrackedAlert> changed;
  std::map<std::string, const Finding*> present;
  // Findings come most severe first: the first of a key wins.
  for (const auto& f : findings) present.emplace(key_of(f), &f);

  for (auto it = alerts_.begin(); it != alerts_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.state == "firing") {
      it->second.state = "resolved";
      it->second.resolved_at = now;
      changed.push_back(it->second);
    }
    it = alerts_.erase(it);
  }
  for (const auto& [key, f] : present) {
    auto [it, inserted] = alerts_.try_emplace(key);
    TrackedAlert& a = it->second;
    if (inserted) {
      a.key = key;
      a.state = "pending";
      a.since = now;
    }
    a.finding = *f;
    if (a.state == "pending" && now - a.since >= policy.for_s(*f)) {
      a.state = "firing";
      a.fired_at = now;
      changed.push_back(a);
    }
  }
  return changed;
}

std::vector<TrackedAlert> AlertTracker::active() const {
  std::vector<TrackedAlert> out;
  for (const auto& [k, a] : alerts_) out.push_back(a);
  std::stable_sort(out.begin(), out.end(),
                   [](const TrackedAlert& a, const TrackedAlert& b) {
                     return severity_order(a.finding.severity) >
                            severity_order(b.finding.severity);
                   });
  return out;
}

std::vector<TrackedAlert> AlertTracker::firing() const {
  std::vector<TrackedAlert> out;
  for (const auto& [k, a] : alerts_)
    if (a.state == "firing") out.push_back(a);
  return out;
}

std::string rfc3339(double unix_s) {
  double whole = std::floor(unix_s);
  auto secs = static_cast<time_t>(whole);
  int ms = static_cast<int>(std::lround((unix_s - whole) * 1000));
  if (ms >= 1000) {
    ms -= 1000;
    ++secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, ms);
}

std::string alertmanager_payload(const std::vector<TrackedAlert>& alerts,
                                 double now, const AlertPolicy& policy,
                                 const std::string& instance,
                                 const std::string& generator_url) {
  using nlohmann::json;
  json arr = json::array();
  for (const auto& a : alerts) {
    const Finding& f = a.finding;
    json labels = {{"alertname", f.id},
                   {"severity", f.severity},
                   {"instance", instance},
                   {"job", "gpudoctor"}};
    if (!f.gpus.empty()) labels["gpu"] = join_ints(f.gpus, ",");
    std::string description = f.evidence;
    if (!f.action.empty())
      description += (description.empty() ? "" : "\n") + f.action;
    const double ends =
        a.state == "resolved" ? a.resolved_at : now + 4 * policy.resend_every_s;
    arr.push_back(
        {{"labels", labels},
         {"annotations", {{"summary", f.title}, {"description", description}}},
         {"startsAt", rfc3339(a.since)},
         {"endsAt", rfc3339(ends)},
         {"generatorURL", generator_url}});
  }
  return arr.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace gd
