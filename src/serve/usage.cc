#include "serve/usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "accounting/accountant.h"
#include "accounting/node_totals.h"
#include "diagnose/engine.h"
#include "diagnose/pushed_sample_source.h"

namespace gd {
namespace {

using accounting::Dimension;
using accounting::kJoulesPerKwh;

double hours(double s) { return s / 3600.0; }
double kwh(double j) { return j / kJoulesPerKwh; }

int bounded_int(const QueryParams& params, const char* name, int fallback,
                int max) {
  const std::optional<int> v = int_param(params, name);
  if (!v) return fallback;
  if (*v < 1 || *v > max)
    throw std::invalid_argument(
        fmt::format("parameter '{}': {} is not 1..{}", name, *v, max));
  return *v;
}

// Each group's running held seconds and joules at each bucket boundary
// (index k: the intervals that ended by since + k x bucket_s).
struct Cumulative {
  std::vector<double> held_s, energy_j;
};

class BucketRecorder {
 public:
  BucketRecorder(const accounting::Accountant& acc, const UsageQuery& q)
      : acc_(acc), q_(q), step_((q.until - q.since) / q.buckets) {}

  // Before the sample at `t` is accounted: closes the buckets that end
  // before it.
  void before(double t) {
    while (next_ < q_.buckets && t > boundary(next_)) record(next_++);
  }
  // After the last sample: the remaining boundaries hold the totals.
  void finish() {
    while (next_ <= q_.buckets) record(next_++);
  }
  double step() const { return step_; }
  // Group `key`'s per-bucket GPU-hours held and kWh.
  void series(const std::string& key, std::vector<double>& held,
              std::vector<double>& energy) const {
    held.assign(q_.buckets, 0);
    energy.assign(q_.buckets, 0);
    auto it = cum_.find(key);
    if (it == cum_.end()) return;
    for (int b = 0; b < q_.buckets; ++b) {
      held[b] = hours(it->second.held_s[b + 1] - it->second.held_s[b]);
      energy[b] = kwh(it->second.energy_j[b + 1] - it->second.energy_j[b]);
    }
  }

 private:
  // The end of bucket k - 1 (k = 1..buckets); boundary 0 is `since`.
  double boundary(int k) const {
    return k >= q_.buckets ? q_.until : q_.since + k * step_;
  }
  void record(int k) {
    acc_.each_group(q_.by, [&](const accounting::GroupRow& row) {
      Cumulative& c = cum_[row.key];
      if (c.held_s.empty()) {
        c.held_s.assign(q_.buckets + 1, 0);
        c.energy_j.assign(q_.buckets + 1, 0);
      }
      c.held_s[k] = row.usage.held_s;
      c.energy_j[k] = row.usage.energy_j;
    });
  }

  const accounting::Accountant& acc_;
  const UsageQuery& q_;
  double step_;
  int next_ = 1;
  std::unordered_map<std::string, Cumulative> cum_;
};

std::vector<int> gpus_of(uint64_t mask) {
  std::vector<int> out;
  for (int i = 0; i < 64; ++i)
    if (mask & (uint64_t{1} << i)) out.push_back(i);
  return out;
}

api::UsageGroup group_of(const accounting::GroupRow& row) {
  api::UsageGroup g;
  g.key = row.key;
  g.label = row.label;
  g.other = row.folded;
  g.gpus = gpus_of(row.gpu_mask);
  g.first = row.first_t;
  g.last = row.last_t;
  const accounting::Usage& u = row.usage;
  g.gpu_hours_held = hours(u.held_s);
  g.busy_gpu_hours = hours(u.busy_s);
  g.idle_held_gpu_hours = hours(u.idle_held_s);
  g.energy_kwh = kwh(u.energy_j);
  g.split = accounting::split_text(u);
  g.energy_counter_kwh = kwh(u.energy_counter_j);
  g.energy_power_kwh = kwh(u.energy_power_j);
  for (const auto& f : row.findings) {
    if (g.waste.size() >= api::kUsageMaxFindings) break;
    g.waste.push_back({f.id, f.severity, f.seconds, f.share});
  }
  return g;
}

}  // namespace

UsageQuery parse_usage_query(const QueryParams& params, double now) {
  UsageQuery q;
  const std::string* since = single_param(params, "since");
  q.since = since ? parse_since(*since, now) : now - 86400;
  const std::string* until = single_param(params, "until");
  q.until = until ? parse_since(*until, now) : now;
  if (q.until < q.since)
    throw std::invalid_argument("'until' is before 'since'");
  if (!(q.until - q.since <= kUsageMaxRangeS))
    throw std::invalid_argument(
        "the range from 'since' to 'until' is longer than 7 days");
  if (const std::string* by = single_param(params, "by")) {
    if (*by == "job")
      q.by = Dimension::kJob;
    else if (*by == "user")
      q.by = Dimension::kUser;
    else if (*by == "container")
      q.by = Dimension::kContainer;
    else if (*by == "pod")
      q.by = Dimension::kPod;
    else if (*by == "namespace")
      q.by = Dimension::kNamespace;
    else
      throw std::invalid_argument("parameter 'by': '" + *by +
                                  "' is not job, user, container, pod or "
                                  "namespace");
  }
  q.buckets = bounded_int(params, "buckets", q.buckets, api::kUsageMaxBuckets);
  q.top = bounded_int(params, "top", q.top, api::kUsageMaxTop);
  return q;
}

api::UsageReply compute_usage(const History& history, const UsageQuery& q,
                              double now) {
  accounting::AccountOptions o;
  o.start = q.since;
  o.end = q.until;
  const TraceHeader header = history.header();
  accounting::Accountant acc(header, o);
  BucketRecorder buckets(acc, q);
  // One pass: the scan feeds the diagnosis, and the accountant (with the
  // bucket boundaries) on the way, as `report --db --findings` does.
  DiagnoseResult d;
  {
    PushedSampleSource source(
        [&](const std::function<bool(Sample&)>& push) {
          history.scan(q.since, q.until, push, nullptr);
        },
        [&](const Sample& s) {
          buckets.before(s.t);
          acc.add(s);
        });
    d = diagnose(header, source, {});
  }
  buckets.finish();
  std::vector<accounting::Accountant::FindingSpan> spans;
  spans.reserve(d.findings.size());
  for (const Finding& x : d.findings)
    spans.push_back({x.id, x.severity, x.pids, x.start, x.end});
  acc.attribute(spans);
  const accounting::AccountReport r = acc.finish();

  api::UsageReply out;
  out.by = accounting::dimension_name(q.by);
  out.since = q.since;
  out.until = q.until;
  out.start = r.start;
  out.end = r.end;
  out.samples = r.samples;
  out.bucket_s = buckets.step();
  for (int b = 0; b < q.buckets; ++b)
    out.buckets.push_back(q.since + b * buckets.step());
  out.computed_at = now;

  const accounting::NodeTotals n = accounting::node_totals(r);
  out.node.gpus = n.gpus;
  out.node.gpu_hours_available = hours(n.wall_s);
  out.node.gpu_hours_held = hours(n.held_s);
  out.node.busy_gpu_hours = hours(n.busy_s);
  out.node.gpu_hours_unheld = hours(n.unheld_s);
  out.node.gpu_hours_unattributed = hours(n.unattributed_s);
  out.node.energy_kwh = kwh(n.energy_j);
  out.node.held_energy_kwh = kwh(n.held_energy_j);
  out.node.idle_energy_kwh = kwh(n.idle_energy_j);

  // The top groups by GPU-hours held (the accountant's order); the rest,
  // and the accountant's own "other", added up in one row.
  const auto& rows = r.by(q.by);
  out.groups_total = r.groups_folded[static_cast<int>(q.by)];
  std::optional<api::UsageGroup> other;
  accounting::Usage other_usage;
  uint64_t other_mask = 0;
  for (const auto& row : rows) {
    if (!row.folded) ++out.groups_total;
    if (!row.folded && out.groups.size() < static_cast<size_t>(q.top)) {
      api::UsageGroup g = group_of(row);
      buckets.series(row.key, g.held_series, g.energy_series);
      out.groups.push_back(std::move(g));
      continue;
    }
    std::vector<double> held, energy;
    buckets.series(row.key, held, energy);
    if (!other) {
      other.emplace();
      other->key = "other";
      other->label = "other";
      other->other = true;
      other->groups = 0;
      other->held_series.assign(q.buckets, 0);
      other->energy_series.assign(q.buckets, 0);
    }
    other->groups +=
        row.folded ? r.groups_folded[static_cast<int>(q.by)] : size_t{1};
    other_usage.add(row.usage);
    other_mask |= row.gpu_mask;
    if (other->first == 0 || (row.first_t > 0 && row.first_t < other->first))
      other->first = row.first_t;
    other->last = std::max(other->last, row.last_t);
    for (int b = 0; b < q.buckets; ++b) {
      other->held_series[b] += held[b];
      other->energy_series[b] += energy[b];
    }
  }
  if (other) {
    accounting::GroupRow row;
    row.key = other->key;
    row.label = other->label;
    row.usage = other_usage;
    row.first_t = other->first;
    row.last_t = other->last;
    row.gpu_mask = other_mask;
    row.folded = true;
    api::UsageGroup g = group_of(row);
    g.groups = other->groups;
    g.held_series = std::move(other->held_series);
    g.energy_series = std::move(other->energy_series);
    out.groups.push_back(std::move(g));
  }
  return out;
}

ApiReply api_usage(const History* history, const QueryParams& params,
                   double now) {
  if (!history)
    return json_error(503, "usage needs the history (serve runs with --no-db)");
  if (!history->health().status.usable)
    return json_error(503, "history is not usable (see the serve log)");
  UsageQuery q;
  try {
    q = parse_usage_query(params, now);
  } catch (const std::invalid_argument& e) {
    return json_error(400, e.what());
  }
  // A store failure propagates: the HTTP layer logs it and answers 500.
  return {200, "application/json",
          api::usage_json(compute_usage(*history, q, now))};
}

ApiReply UsageCache::reply(const History* history, const QueryParams& params,
                           double now) {
  std::string key;
  for (const auto& [k, v] : params) {
    if (k != "since" && k != "until" && k != "by" && k != "buckets" &&
        k != "top")
      continue;
    key.append(k).append("=").append(v).append("&");
  }
  {
    std::lock_guard lock(mu_);
    for (const Entry& e : entries_)
      if (e.key == key && now - e.at >= 0 && now - e.at < kTtlS) return e.reply;
  }
  ApiReply r = api_usage(history, params, now);
  if (r.status != 200) return r;
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) { return e.key == key; });
  entries_.push_front({key, now, r});
  while (entries_.size() > kEntries) entries_.pop_back();
  return r;
}

}  // namespace gd
