#include "api/alerts_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

constexpr size_t kMaxAlerts = 100000;
constexpr size_t kMaxAlertText = 64 * 1024;
constexpr size_t kMaxAlertGpus = 1024;

// Keys in the order serve has always sent them (nlohmann's sorted order,
// before this writer).
void append_alert(std::string& out, const AlertEntry& a) {
  jo::lit(out, "{\"action\":");
  jo::string(out, a.action);
  jo::lit(out, ",\"ended\":");
  jo::string_or_null(out, a.ended);
  jo::lit(out, ",\"evidence\":");
  jo::string(out, a.evidence);
  jo::lit(out, ",\"fired_at\":");
  jo::number(out, a.fired_at);
  jo::lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < a.gpus.size(); ++i) {
    if (i) out += ',';
    jo::integer(out, a.gpus[i]);
  }
  jo::lit(out, "],\"id\":");
  jo::string(out, a.id);
  jo::lit(out, ",\"resolved_at\":");
  jo::value(out, a.resolved_at);
  jo::lit(out, ",\"severity\":");
  jo::string(out, a.severity);
  jo::lit(out, ",\"started_at\":");
  jo::number(out, a.started_at);
  jo::lit(out, ",\"title\":");
  jo::string(out, a.title);
  out += '}';
}

AlertEntry alert_entry_from(const json& item) {
  const char* what = "alerts";
  AlertEntry a;
  a.id = text_or_empty(item, "id", kMaxAlertText, what);
  a.severity = text_or_empty(item, "severity", kMaxAlertText, what);
  a.title = text_or_empty(item, "title", kMaxAlertText, what);
  a.evidence = text_or_empty(item, "evidence", kMaxAlertText, what);
  a.action = text_or_empty(item, "action", kMaxAlertText, what);
  a.ended = text_or_empty(item, "ended", kMaxAlertText, what);
  a.started_at = number_or(item, "started_at", 0, what);
  a.fired_at = number_or(item, "fired_at", 0, what);
  a.resolved_at = optional_number(item, "resolved_at", what);
  auto gpus = item.find("gpus");
  if (gpus == item.end() || gpus->is_null()) return a;
  if (!gpus->is_array() || gpus->size() > kMaxAlertGpus)
    throw std::runtime_error("alerts: 'gpus' is not a list of GPUs");
  for (const auto& g : *gpus) {
    if (!g.is_number_integer() || g.get<int64_t>() < 0 ||
        g.get<int64_t>() >= static_cast<int64_t>(kMaxAlertGpus))
      throw std::runtime_error("alerts: a GPU index is not 0..1023");
    a.gpus.push_back(g.get<int>());
  }
  return a;
}

}  // namespace

std::string alerts_json(const AlertsReply& r) {
  std::string out;
  jo::lit(out, "{\"alerts\":[");
  for (size_t i = 0; i < r.alerts.size(); ++i) {
    if (i) out += ',';
    append_alert(out, r.alerts[i]);
  }
  jo::lit(out, "],\"since\":");
  jo::number(out, r.since);
  jo::lit(out, ",\"until\":");
  jo::number(out, r.until);
  out += '}';
  return out;
}

AlertsReply parse_alerts_json(std::string_view body) {
  json j = parse_object(body, "alerts");
  auto arr = j.find("alerts");
  if (arr == j.end() || !arr->is_array())
    throw std::runtime_error("alerts: no 'alerts' array");
  if (arr->size() > kMaxAlerts)
    throw std::runtime_error("alerts: more than 100000 alerts");
  AlertsReply r;
  r.since = number_or(j, "since", 0, "alerts");
  r.until = number_or(j, "until", 0, "alerts");
  for (const auto& item : *arr) {
    if (!item.is_object())
      throw std::runtime_error("alerts: an item is not an object");
    r.alerts.push_back(alert_entry_from(item));
  }
  return r;
}

}  // namespace gd::api
