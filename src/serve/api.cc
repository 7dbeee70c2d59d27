#include "serve/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "api/error_json.h"
#include "api/findings_json.h"
#include "api/healthz_json.h"
#include "api/node_health_json.h"
#include "api/processes_json.h"
#include "api/status_json.h"
#include "common/duration.h"
#include "exporter/exporter.h"
#include "exporter/gpu_health.h"
#include "model/orphan_holders.h"
#include "model/process_tree.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

// Bounds a /api/v1/history answer: 11,000 points per series is what
// Prometheus allows per query, and keeps a reply in the low megabytes.
constexpr double kMaxPointsPerSeries = 11000;
// /healthz turns 503 when the newest sample is older than this many
// intervals (plus the GPU deadline slack below): collection has stalled.
constexpr double kStaleIntervals = 5;
constexpr double kStaleMinS = 30;

// The whole of `text` as a number; nullopt if it is not one.
std::optional<double> plain_number(const std::string& text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

const std::string* single_param(const QueryParams& params,
                                const std::string& name) {
  auto range = params.equal_range(name);
  if (range.first == range.second) return nullptr;
  if (std::next(range.first) != range.second)
    throw std::invalid_argument("parameter '" + name + "' given twice");
  return &range.first->second;
}

std::optional<int> int_param(const QueryParams& params,
                             const std::string& name) {
  const std::string* text = single_param(params, name);
  if (!text) return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || p != text->data() + text->size() || v < 0)
    throw std::invalid_argument(fmt::format(
        "parameter '{}': '{}' is not a non-negative integer", name, *text));
  return v;
}

ApiReply json_error(int status, const std::string& message) {
  return {status, "application/json", api::error_json(message)};
}

double parse_since(const std::string& text, double now) {
  // Not std::stod: it throws std::out_of_range for a subnormal ("1e-320"),
  // which no caller expects.
  if (auto number = plain_number(text)) {
    const double v = *number;
    if (!std::isfinite(v) || v < 0)
      throw std::invalid_argument("since: '" + text + "' is not a time");
    return v;  // Unix seconds
  }
  auto d = try_parse_duration(text);
  if (!d)
    throw std::invalid_argument(
        "since: '" + text +
        "' is neither a duration (10m, 1h) nor Unix seconds");
  return now - *d;
}

double parse_step(const std::string& text) {
  auto d = try_parse_duration(text);
  if (!d)
    throw std::invalid_argument("step: '" + text +
                                "' is not a duration (10s, 1m) or seconds");
  return *d;
}

ApiReply api_metrics(const Snapshot& s, double now) {
  ApiReply r;
  r.content_type = kPrometheusContentType;
  render_metrics(metrics_input(s, now), r.body);
  return r;
}

ApiReply MetricsPageCache::reply(const std::shared_ptr<const Snapshot>& s,
                                 double now) {
  std::shared_ptr<const std::string> page;
  {
    std::lock_guard lock(mu_);
    const bool same = page_ && !of_.owner_before(s) && !s.owner_before(of_);
    if (!same) {
      auto fresh = std::make_shared<std::string>();
      render_metrics_of_snapshot(metrics_input(*s, now), *fresh);
      page_ = std::move(fresh);
      of_ = s;
    }
    page = page_;
  }
  ApiReply r;
  r.content_type = kPrometheusContentType;
  r.body.reserve(page->size() + 512);
  r.body = *page;
  if (!page->empty()) render_age_families(metrics_input(*s, now), r.body);
  return r;
}

ApiReply api_status(const Snapshot& s, double now, bool remote_kill) {
  api::StatusCollect collect;
  collect.collections_total = s.collections_total;
  collect.collect_duration_s = s.collect_duration_s;
  collect.interval_s = s.interval_s;
  collect.started_at = s.started_at;
  collect.version = s.version;
  collect.remote_kill = remote_kill;
  if (s.sample) collect.sample_age_s = std::max(0.0, now - s.sample->t);
  collect.gpus.reserve(s.gpu_health.size());
  for (const auto& h : s.gpu_health)
    collect.gpus.push_back({h.index, h.success, h.lost, h.last_success_t});
  ApiReply r;
  api::append_status_json(r.body, *s.header, s.sample.get(), collect);
  return r;
}

namespace {

// Who probably keeps memory whose owner is gone (model/orphan_holders.h),
// with the evidence and the command that ends them.
std::vector<api::OrphanHolderEntry> orphan_holders(const Snapshot& s,
                                                   const ProcessTree& tree,
                                                   std::optional<int> gpu) {
  std::vector<api::OrphanHolderEntry> held;
  const bool pids_visible =
      !s.header || s.header->host.pid_namespace != "container";
  for (const auto& g : probable_holders_in(*s.sample, tree, pids_visible)) {
    if (gpu && g.gpu != *gpu) continue;
    for (const auto& h : g.holders) {
      api::OrphanHolderEntry e;
      e.gpu = g.gpu;
      e.pid = h.pid;
      if (const ProcessSample* p = tree.find(h.pid)) {
        e.user = p->user;
        e.name = p->name;
        e.cmdline = p->cmdline;
      }
      e.dead_owners = g.dead_owners;
      e.evidence = h.evidence;
      e.action = fmt::format("gpudoctor kill {}", h.pid);
      held.push_back(std::move(e));
    }
  }
  return held;
}

}  // namespace

ApiReply api_processes(const Snapshot& s, const QueryParams& params) {
  std::optional<int> gpu;
  try {
    gpu = int_param(params, "gpu");
  } catch (const std::invalid_argument& e) {
    return json_error(400, e.what());
  }
  api::ProcessesReply out;
  if (s.sample) {
    out.t = s.sample->t;
    ProcessTree tree(*s.sample);
    // Distinct GPU processes per job group, over every GPU.
    std::map<uint32_t, std::set<uint32_t>> members;
    for (const auto& g : s.sample->gpus)
      if (g.processes)
        for (const auto& gp : *g.processes)
          members[tree.job_group(gp.pid)].insert(gp.pid);
    std::map<uint32_t, size_t> ranks_of;
    for (const auto& [group, pids] : members) ranks_of[group] = pids.size();
    for (const auto& g : s.sample->gpus) {
      if (gpu && g.index != *gpu) continue;
      if (!g.processes) continue;
      for (const auto& gp : *g.processes) {
        api::ProcessRow row;
        row.gpu = g.index;
        row.pid = gp.pid;
        row.used_bytes = gp.used_bytes;
        row.type = gp.type;
        if (const ProcessSample* found = tree.find(gp.pid)) {
          const ProcessSample& p = *found;
          row.in_proc = true;
          row.ppid = p.ppid;
          row.user = p.user;
          row.name = p.name;
          row.cmdline = p.cmdline;
          row.state = p.state;
          row.cpu_pct = p.cpu_pct;
          row.threads = p.threads;
          row.rss_bytes = p.rss_bytes;
          row.start_time = p.start_time;
          row.cgroup = p.cgroup;
          row.slurm_job_id = p.slurm_job_id;
          row.pod = p.pod;
          if (p.slurm_job_id)
            if (const SlurmJob* j =
                    find_slurm_job(*s.sample, *p.slurm_job_id)) {
              row.slurm_job_name = j->name;
              row.slurm_job_user = j->user;
              row.slurm_job_partition = j->partition;
            }
        } else {
          row.state = "unknown";
        }
        // The job this rank belongs to: ranks that share a launcher (or a
        // common non-generic parent) are one job.
        const uint32_t group = tree.job_group(gp.pid);
        const ProcessSample* gproc = tree.find(group);
        row.job = {group, gproc ? gproc->name : std::string(), ranks_of[group]};
        for (uint32_t pid : tree.children(gp.pid)) {
          const ProcessSample* c = tree.find(pid);
          row.children.push_back({c->pid, c->name, c->state, c->cpu_pct});
        }
        out.processes.push_back(std::move(row));
      }
    }
    out.orphan_holders = orphan_holders(s, tree, gpu);
  }
  return {200, "application/json", api::processes_json(out)};
}

ApiReply api_findings(const Snapshot& s) {
  api::FindingsReply out;
  out.findings.reserve(s.alerts.size());
  for (const auto& a : s.alerts) {
    api::FindingAlert alert{a.state, a.since, s.policy.for_s(a.finding), {}};
    if (a.fired_at > 0) alert.firing_since = a.fired_at;
    out.findings.push_back({a.finding, std::move(alert)});
  }
  out.window.start = s.window.start;
  out.window.end = s.window.end;
  out.window.samples = s.window.samples;
  out.evaluated_at = s.evaluated_at;
  if (s.not_judged) out.not_judged = *s.not_judged;
  return {200, "application/json", api::findings_json(out)};
}

namespace {

// Metrics of one history request at most (metric=a,b,c).
constexpr size_t kMaxMetricsPerQuery = 32;
// step=auto aims at about this many points per series: more than a wide
// chart has pixels, few enough to answer a week in milliseconds.
constexpr double kAutoPoints = 1500;
// Steps step=auto picks from (seconds): what a person reads on an axis.
constexpr double kNiceSteps[] = {1,    2,    5,     10,    15,    30,
                                 60,   120,  300,   600,   900,   1800,
                                 3600, 7200, 10800, 21600, 43200, 86400};

std::vector<std::string> split_metrics(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (;;) {
    const size_t comma = text.find(',', begin);
    std::string m = text.substr(begin, comma - begin);
    if (m.empty())
      throw std::invalid_argument(
          "parameter 'metric': an empty name in the list");
    if (std::find(out.begin(), out.end(), m) == out.end())
      out.push_back(std::move(m));
    if (out.size() > kMaxMetricsPerQuery)
      throw std::invalid_argument(
          fmt::format("parameter 'metric': at most {} metrics per request",
                      kMaxMetricsPerQuery));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

}  // namespace

double auto_step(double since, double until, double now, double stored_step) {
  const double wanted = (until - since) / kAutoPoints;
  if (wanted <= 1 && stored_step <= 0) return 0;  // every sample fits
  const double at_least = std::max(wanted, stored_step);
  for (double s : kNiceSteps)
    if (s >= at_least) return s;
  (void)now;
  return std::ceil(at_least / 86400) * 86400;
}

ApiReply api_history(const History* history, const QueryParams& params,
                     double now) {
  if (!history)
    return json_error(503, "history is off (serve runs with --no-db)");
  if (!history->health().status.usable)
    return json_error(503, "history is not usable (see the serve log)");
  HistoryQuery q;
  try {
    const std::string* metric = single_param(params, "metric");
    if (!metric || metric->empty())
      return json_error(400,
                        "parameter 'metric' is required (e.g. "
                        "metric=gpu.util_pct, or a list: "
                        "metric=gpu.util_pct,gpu.temp_c)");
    q.metrics = split_metrics(*metric);
    q.metric = q.metrics.front();
    q.multi = metric->find(',') != std::string::npos;
    q.gpu = int_param(params, "gpu");
    q.pid = int_param(params, "pid");
    const std::string* since = single_param(params, "since");
    q.since = since ? parse_since(*since, now) : now - 3600;
    const std::string* until = single_param(params, "until");
    q.until = until ? parse_since(*until, now) : now;
    if (q.until < q.since) return json_error(400, "'until' is before 'since'");
    if (!std::isfinite(q.until - q.since))
      return json_error(400, "the range from 'since' to 'until' is too long");
    const std::string* step = single_param(params, "step");
    if (step && *step == "auto") {
      // The server picks the resolution: the stored tier of the range's
      // oldest data, coarser if that would exceed kAutoPoints.
      q.step = auto_step(q.since, q.until, now,
                         history->stored_step_s(std::max(0.0, now - q.since)));
    } else {
      q.step = step ? parse_step(*step) : 0;
    }
  } catch (const std::invalid_argument& e) {
    return json_error(400, e.what());
  }
  if (q.step > 0 && (q.until - q.since) / q.step > kMaxPointsPerSeries)
    return json_error(400, fmt::format("too many points: at most {} per "
                                       "series; use a larger step",
                                       kMaxPointsPerSeries));
  try {
    return {200, "application/json", history->query_json(q)};
  } catch (const HistoryQueryError& e) {
    return json_error(400, e.what());
  }
  // Any other failure (a store error) propagates: the HTTP layer logs its
  // text, which can name files, and answers 500 "internal error".
}

ApiReply api_alerts(const History* history, const QueryParams& params,
                    double now) {
  if (!history)
    return json_error(503,
                      "alert history is off (serve runs with --no-db); "
                      "/api/v1/findings has the current alerts");
  double since = now - 86400, until = now;
  try {
    if (const std::string* v = single_param(params, "since"))
      since = parse_since(*v, now);
    if (const std::string* v = single_param(params, "until"))
      until = parse_since(*v, now);
  } catch (const std::invalid_argument& e) {
    return json_error(400, e.what());
  }
  if (until < since) return json_error(400, "'until' is before 'since'");
  return {200, "application/json", history->alerts_json(since, until)};
}

// 503 only when collection itself has stalled: that is what a restart
// (a liveness probe) can cure. A full disk, quarantined history or a
// stale/lost GPU is "degraded" with 200: restarting would not help and
// would only lose the samples waiting in memory.
ApiReply api_node_health(const Snapshot& s, double now) {
  const MetricsInput in = metrics_input(s, now);
  const NodeHealth health = node_health(in);
  api::NodeHealthReply r;
  if (s.header) r.node = s.header->host.hostname;
  r.evaluated_at = s.evaluated_at;
  for (const GpuHealthVerdict& v : health.gpus)
    r.gpus.push_back(
        {v.gpu, v.uuid, v.state, v.reason, v.findings, v.recovery_action});
  r.host_findings = health.host_findings;
  r.state = api::worst_gpu_state(r.gpus);
  return {200, "application/json", api::node_health_json(r)};
}

ApiReply api_healthz(const Snapshot& s, double now) {
  const double limit = std::max(kStaleMinS, kStaleIntervals * s.interval_s);
  api::HealthReply out;
  out.collections_total = s.collections_total;
  auto& degraded = out.degraded;
  if (s.store) {
    const auto& st = *s.store;
    out.store = api::HealthStore{st.usable,
                                 st.writable,
                                 st.write_errors_total,
                                 st.pending_bytes,
                                 st.dropped_samples_total,
                                 st.quarantined_total};
    if (!st.usable)
      degraded.push_back({"store", std::nullopt, "not usable"});
    else if (!st.writable)
      degraded.push_back({"store", std::nullopt, "not writable"});
    if (st.dropped_samples_total > 0)
      degraded.push_back({"store", std::nullopt, "samples dropped"});
    if (st.quarantined_total > 0)
      degraded.push_back({"store", std::nullopt, "corrupt data quarantined"});
  }
  if (s.sample) {
    for (const auto& g : s.gpu_health)
      if (g.lost || !g.success)
        degraded.push_back({"gpu", g.index, g.lost ? "lost" : "stale"});
  }
  const char* fine = degraded.empty() ? "ok" : "degraded";
  if (!s.sample) {
    // Starting up: healthy until the first sample is overdue.
    bool ok = now - s.started_at < limit;
    out.status = ok ? (degraded.empty() ? "starting" : fine) : "stalled";
    return {ok ? 200 : 503, "application/json", api::healthz_json(out)};
  }
  double age = now - s.sample->t;
  out.sample_age_s = age;
  bool ok = age < limit;
  out.status = ok ? fine : "stalled";
  return {ok ? 200 : 503, "application/json", api::healthz_json(out)};
}

MetricsInput metrics_input(const Snapshot& s, double now) {
  MetricsInput in;
  in.header = s.header.get();
  in.sample = s.sample.get();
  in.gpu_health = s.gpu_health;
  in.last_xid = s.last_xid;
  in.collect_duration_s = s.collect_duration_s;
  in.collections_total = s.collections_total;
  in.processes_left_out_total = s.processes_left_out_total;
  in.now = now;
  in.version = s.version;
  in.store = s.store;
  in.jobs = s.jobs;
  in.evaluated = s.evaluated_at.has_value();
  for (const auto& a : s.alerts)
    in.findings.push_back(
        {a.finding.id, a.finding.severity, a.finding.gpus, a.state});
  return in;
}

}  // namespace gd
