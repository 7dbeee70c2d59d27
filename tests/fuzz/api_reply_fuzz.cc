// The readers of serve's API messages (src/api): /api/v1/status,
// /api/v1/findings, /api/v1/history, /api/v1/alerts, /healthz, an error
// reply, /api/v1/processes, the sample event of /api/v1/events,
// /api/v1/usage and /api/v1/health, as a
// client reads them from the network; the first byte picks which (POST
// /api/v1/kill is http_request_fuzz's and remote_reply_fuzz's). Each reply is
// refused with a std::runtime_error, or accepted within its bounds; an accepted
// reply, written and read again, settles: from the second writing on, the bytes
// no longer change (the first may differ: a number too large for a double is
// read as infinity and written as null).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "api/alerts_json.h"
#include "api/error_json.h"
#include "api/findings_json.h"
#include "api/healthz_json.h"
#include "api/history_json.h"
#include "api/node_health_json.h"
#include "api/processes_json.h"
#include "api/sample_event_json.h"
#include "api/status_json.h"
#include "api/usage_json.h"
#include "fuzz_check.h"

namespace {

using namespace gd::api;

void check_status(std::string_view text) {
  StatusReply r;
  try {
    r = parse_status_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(r.collect.interval_s > 0 && r.collect.interval_s < 3600, text);
  FUZZ_CHECK(r.collect.version.size() <= 64, text);
  FUZZ_CHECK(r.collect.gpus.size() <= 1024, text);
  for (const auto& g : r.collect.gpus)
    FUZZ_CHECK(g.index >= 0 && g.index < 1024, text);
  std::string once;
  append_status_json(once, r.header, r.sample ? &*r.sample : nullptr,
                     r.collect);
  StatusReply back;
  try {
    back = parse_status_json(once);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
  FUZZ_CHECK(back.collect.gpus.size() == r.collect.gpus.size(), once);
  FUZZ_CHECK(back.sample.has_value() == r.sample.has_value(), once);
}

void check_findings(std::string_view text) {
  FindingsReply r;
  try {
    r = parse_findings_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(r.findings.size() <= 1000, text);
  for (const auto& a : r.findings) {
    const auto& f = a.finding;
    FUZZ_CHECK(f.severity == "critical" || f.severity == "warning" ||
                   f.severity == "info",
               text);
    FUZZ_CHECK(f.gpus.size() <= 1024 && f.pids.size() <= 4096, text);
    for (int g : f.gpus) FUZZ_CHECK(g >= 0 && g < 1024, text);
    FUZZ_CHECK(f.title.size() <= 64 * 1024, text);
    FUZZ_CHECK(a.alert.state.size() <= 16, text);
  }
  FUZZ_CHECK(r.not_judged.size() <= 1000, text);
  for (const auto& n : r.not_judged)
    FUZZ_CHECK(n.id.size() <= 64 * 1024 && n.reason.size() <= 64 * 1024, text);
  const std::string once = findings_json(r);
  try {
    const std::string twice = findings_json(parse_findings_json(once));
    FUZZ_CHECK(findings_json(parse_findings_json(twice)) == twice, twice);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
}

void check_history(std::string_view text) {
  HistoryReply r;
  try {
    r = parse_history_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(!r.results.empty() && r.results.size() <= 64, text);
  FUZZ_CHECK(r.multi || r.results.size() == 1, text);
  size_t series = 0;
  for (const auto& m : r.results) {
    FUZZ_CHECK(m.metric.size() <= 256, text);
    series += m.series.size();
    for (const auto& s : m.series) {
      FUZZ_CHECK(!s.gpu || (*s.gpu >= 0 && *s.gpu < 1024), text);
      FUZZ_CHECK(!s.pid || *s.pid >= 0, text);
    }
  }
  FUZZ_CHECK(series <= 4096, text);
  const std::string once = history_json(r);
  try {
    const std::string twice = history_json(parse_history_json(once));
    FUZZ_CHECK(history_json(parse_history_json(twice)) == twice, twice);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
}

void check_alerts(std::string_view text) {
  AlertsReply r;
  try {
    r = parse_alerts_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(r.alerts.size() <= 100000, text);
  for (const auto& a : r.alerts) {
    FUZZ_CHECK(a.gpus.size() <= 1024, text);
    for (int g : a.gpus) FUZZ_CHECK(g >= 0 && g < 1024, text);
    FUZZ_CHECK(a.evidence.size() <= 64 * 1024, text);
  }
  const std::string once = alerts_json(r);
  try {
    const std::string twice = alerts_json(parse_alerts_json(once));
    FUZZ_CHECK(alerts_json(parse_alerts_json(twice)) == twice, twice);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
}

void check_healthz(std::string_view text) {
  HealthReply r;
  try {
    r = parse_healthz_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(!r.status.empty() && r.status.size() <= 256, text);
  FUZZ_CHECK(r.degraded.size() <= 4096, text);
  for (const auto& d : r.degraded)
    FUZZ_CHECK(!d.gpu || (*d.gpu >= 0 && *d.gpu < 1024), text);
  const std::string once = healthz_json(r);
  try {
    const std::string twice = healthz_json(parse_healthz_json(once));
    FUZZ_CHECK(healthz_json(parse_healthz_json(twice)) == twice, twice);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
}

void check_node_health(std::string_view text) {
  NodeHealthReply r;
  try {
    r = parse_node_health_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(!r.state.empty() && r.state.size() <= 256, text);
  FUZZ_CHECK(r.gpus.size() <= 1024 && r.host_findings.size() <= 256, text);
  for (const auto& g : r.gpus)
    FUZZ_CHECK(g.gpu >= 0 && g.gpu < 1024 && g.findings.size() <= 256, text);
  const std::string once = node_health_json(r);
  try {
    const std::string twice = node_health_json(parse_node_health_json(once));
    FUZZ_CHECK(node_health_json(parse_node_health_json(twice)) == twice, twice);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
}

void check_error(std::string_view text) {
  const auto message = parse_error_json(text);
  if (!message) return;
  FUZZ_CHECK(!message->empty() && message->size() <= 1024, text);
  const std::string once = error_json(*message);
  const auto back = parse_error_json(once);
  FUZZ_CHECK(back.has_value(), once);
  FUZZ_CHECK(error_json(*back) == once || back->size() == 1024, once);
}

void check_processes(std::string_view text) {
  ProcessesReply r;
  try {
    r = parse_processes_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(r.processes.size() <= 100000, text);
  for (const auto& p : r.processes) {
    FUZZ_CHECK(p.gpu >= 0 && p.gpu < 1024, text);
    FUZZ_CHECK(p.pid <= 4194304 && p.job.pid <= 4194304, text);
    FUZZ_CHECK(p.cmdline.size() <= 64 * 1024, text);
    FUZZ_CHECK(p.children.size() <= 100000, text);
    FUZZ_CHECK(p.in_proc || p.state == "unknown", text);
  }
  if (r.orphan_holders)
    for (const auto& h : *r.orphan_holders) {
      FUZZ_CHECK(h.gpu >= 0 && h.gpu < 1024, text);
      FUZZ_CHECK(h.dead_owners.size() <= 100000, text);
      FUZZ_CHECK(h.evidence.size() <= 100000, text);
    }
  const std::string once = processes_json(r);
  try {
    const std::string twice = processes_json(parse_processes_json(once));
    FUZZ_CHECK(processes_json(parse_processes_json(twice)) == twice, twice);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
}

void check_sample_event(std::string_view text) {
  SampleEvent e;
  try {
    e = parse_sample_event_json(text);
  } catch (const std::runtime_error&) {  // TraceError is one too
    return;
  }
  FUZZ_CHECK(e.memory.size() <= 1024, text);
  for (const auto& m : e.memory) FUZZ_CHECK(m.gpu >= 0 && m.gpu < 1024, text);
  std::string once, twice, thrice;
  try {
    append_sample_event_json(once, e.sample, e.memory);
    SampleEvent back = parse_sample_event_json(once);
    append_sample_event_json(twice, back.sample, back.memory);
    back = parse_sample_event_json(twice);
    append_sample_event_json(thrice, back.sample, back.memory);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
  FUZZ_CHECK(twice == thrice, twice);
}

void check_usage(std::string_view text) {
  UsageReply r;
  try {
    r = parse_usage_json(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(r.buckets.size() <= static_cast<size_t>(kUsageMaxBuckets), text);
  FUZZ_CHECK(r.groups.size() <= static_cast<size_t>(kUsageMaxTop) + 1, text);
  for (const auto& g : r.groups) {
    FUZZ_CHECK(g.held_series.size() == r.buckets.size(), text);
    FUZZ_CHECK(g.energy_series.size() == r.buckets.size(), text);
    FUZZ_CHECK(g.waste.size() <= kUsageMaxFindings, text);
    FUZZ_CHECK(g.label.size() <= 4096 + 64 && g.key.size() <= 4096 + 64, text);
  }
  const std::string once = usage_json(r);
  try {
    const std::string twice = usage_json(parse_usage_json(once));
    FUZZ_CHECK(usage_json(parse_usage_json(twice)) == twice, twice);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, once);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  // Modulo 10: the seeds' first bytes (0-8) keep their meaning.
  switch (data[0] % 10) {
    case 0:
      check_status(text);
      break;
    case 1:
      check_findings(text);
      break;
    case 2:
      check_history(text);
      break;
    case 3:
      check_alerts(text);
      break;
    case 4:
      check_healthz(text);
      break;
    case 5:
      check_error(text);
      break;
    case 6:
      check_processes(text);
      break;
    case 8:
      check_usage(text);
      break;
    case 9:
      check_node_health(text);
      break;
    default:
      check_sample_event(text);
  }
  return 0;
}
