#include "api/findings_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

// Far beyond any real serve (a few dozen findings).
constexpr size_t kMaxFindings = 1000;
constexpr size_t kMaxText = 64 * 1024;
constexpr size_t kMaxFindingGpus = 1024;
constexpr size_t kMaxPids = 4096;
constexpr size_t kMaxStateBytes = 16;

// Keys in the order serve has always sent them (nlohmann's sorted order,
// before this writer), as in docs/findings.md.
void append_finding(std::string& out, const AlertedFinding& a) {
  const Finding& f = a.finding;
  jo::lit(out, "{\"action\":");
  jo::string(out, f.action);
  jo::lit(out, ",\"alert\":{");
  if (a.alert.firing_since) {
    jo::lit(out, "\"firing_since\":");
    jo::number(out, *a.alert.firing_since);
    out += ',';
  }
  jo::lit(out, "\"for_s\":");
  jo::number(out, a.alert.for_s);
  jo::lit(out, ",\"since\":");
  jo::number(out, a.alert.since);
  jo::lit(out, ",\"state\":");
  jo::string(out, a.alert.state);
  jo::lit(out, "},\"end\":");
  jo::number(out, f.end);
  jo::lit(out, ",\"evidence\":");
  jo::string(out, f.evidence);
  jo::lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < f.gpus.size(); ++i) {
    if (i) out += ',';
    jo::integer(out, f.gpus[i]);
  }
  jo::lit(out, "],\"id\":");
  jo::string(out, f.id);
  jo::lit(out, ",\"pids\":");
  jo::unsigned_list(out, f.pids);
  jo::lit(out, ",\"severity\":");
  jo::string(out, f.severity);
  jo::lit(out, ",\"start\":");
  jo::number(out, f.start);
  jo::lit(out, ",\"title\":");
  jo::string(out, f.title);
  out += '}';
}

FindingAlert alert_from(const json& item) {
  FindingAlert a;
  auto it = item.find("alert");
  if (it == item.end() || it->is_null()) return a;
  if (!it->is_object())
    throw std::runtime_error("findings: 'alert' is not an object");
  const char* what = "findings.alert";
  a.state = text_or_empty(*it, "state", kMaxStateBytes, what);
  a.since = number_or(*it, "since", 0, what);
  a.for_s = number_or(*it, "for_s", 0, what);
  a.firing_since = optional_number(*it, "firing_since", what);
  return a;
}

Finding finding_from(const json& item) {
  const char* what = "findings";
  Finding f;
  f.id = text_or_empty(item, "id", kMaxText, what);
  f.severity = text_or_empty(item, "severity", kMaxText, what);
  if (f.severity != "critical" && f.severity != "warning" &&
      f.severity != "info")
    throw std::runtime_error("findings: unknown severity");
  f.title = text_or_empty(item, "title", kMaxText, what);
  f.evidence = text_or_empty(item, "evidence", kMaxText, what);
  f.action = text_or_empty(item, "action", kMaxText, what);
  f.start = number_or(item, "start", 0, what);
  f.end = number_or(item, "end", 0, what);
  // Lenient on odd entries (left out), bounded in count.
  if (auto g = item.find("gpus"); g != item.end() && g->is_array())
    for (const auto& x : *g)
      if (x.is_number_integer() && x.get<int64_t>() >= 0 &&
          x.get<int64_t>() < static_cast<int64_t>(kMaxFindingGpus) &&
          f.gpus.size() < kMaxFindingGpus)
        f.gpus.push_back(x.get<int>());
  if (auto p = item.find("pids"); p != item.end() && p->is_array())
    for (const auto& x : *p)
      if (x.is_number_unsigned() && x.get<uint64_t>() <= UINT32_MAX &&
          f.pids.size() < kMaxPids)
        f.pids.push_back(x.get<uint32_t>());
  return f;
}

}  // namespace

std::string findings_json(const FindingsReply& r) {
  std::string out;
  jo::lit(out, "{\"evaluated_at\":");
  jo::value(out, r.evaluated_at);
  jo::lit(out, ",\"findings\":[");
  for (size_t i = 0; i < r.findings.size(); ++i) {
    if (i) out += ',';
    append_finding(out, r.findings[i]);
  }
  jo::lit(out, "],\"not_judged\":[");
  for (size_t i = 0; i < r.not_judged.size(); ++i) {
    if (i) out += ',';
    jo::lit(out, "{\"id\":");
    jo::string(out, r.not_judged[i].id);
    jo::lit(out, ",\"reason\":");
    jo::string(out, r.not_judged[i].reason);
    out += '}';
  }
  jo::lit(out, "],\"window\":{\"end\":");
  jo::number(out, r.window.end);
  jo::lit(out, ",\"samples\":");
  jo::unsigned_integer(out, r.window.samples);
  jo::lit(out, ",\"start\":");
  jo::number(out, r.window.start);
  jo::lit(out, "}}");
  return out;
}

FindingsReply parse_findings_json(std::string_view body) {
  json j = parse_object(body, "findings");
  auto arr = j.find("findings");
  if (arr == j.end() || !arr->is_array())
    throw std::runtime_error("findings: no 'findings' array");
  if (arr->size() > kMaxFindings)
    throw std::runtime_error("findings: more than 1000 findings");
  FindingsReply r;
  for (const auto& item : *arr) {
    if (!item.is_object())
      throw std::runtime_error("findings: an item is not an object");
    r.findings.push_back({finding_from(item), alert_from(item)});
  }
  // Absent from a serve older than the field: nothing known to be unjudged.
  if (auto n = j.find("not_judged"); n != j.end() && n->is_array()) {
    if (n->size() > kMaxFindings)
      throw std::runtime_error("findings: more than 1000 not_judged entries");
    for (const auto& item : *n) {
      if (!item.is_object())
        throw std::runtime_error(
            "findings: a not_judged entry is not an object");
      const char* what = "findings.not_judged";
      r.not_judged.push_back({text_or_empty(item, "id", kMaxText, what),
                              text_or_empty(item, "reason", kMaxText, what)});
    }
  }
  if (auto e = j.find("evaluated_at"); e != j.end() && e->is_number())
    r.evaluated_at = e->get<double>();
  if (auto w = j.find("window"); w != j.end() && w->is_object()) {
    const char* what = "findings.window";
    r.window.start = number_or(*w, "start", 0, what);
    r.window.end = number_or(*w, "end", 0, what);
    const double n = number_or(*w, "samples", 0, what);
    if (n >= 0 && n < 1e9) r.window.samples = static_cast<size_t>(n);
  }
  return r;
}

}  // namespace gd::api
