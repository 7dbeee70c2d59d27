#include "monitor/remote_json.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/bounded_json.h"
#include "trace/trace_io.h"

namespace gd::monitor {
namespace {

using nlohmann::json;

// Bounds on what one reply may hold: far beyond any real serve (it keeps
// at most 512 processes per sample and a few dozen findings).
constexpr size_t kMaxFindings = 1000;
constexpr size_t kMaxFindingText = 64 * 1024;

// Nested deeper than kMaxJsonDepth: JsonTooDeep, before the dump() below
// (recursive) could overflow the stack.
json parse_object(std::string_view body, const char* what) {
  json j = parse_bounded_json(body);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(std::string(what) +
                             ": the reply is not a JSON "
                             "object");
  return j;
}

std::string text_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string())
    throw std::runtime_error(std::string("findings: '") + key +
                             "' is not a string");
  std::string s = it->get<std::string>();
  if (s.size() > kMaxFindingText) s.resize(kMaxFindingText);
  return s;
}

double number_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return 0;
  if (!it->is_number())
    throw std::runtime_error(std::string("'") + key + "' is not a number");
  return it->get<double>();
}

}  // namespace

RemoteStatus parse_remote_status(std::string_view body) {
  json j = parse_object(body, "status");
  auto header = j.find("header");
  if (header == j.end() || !header->is_object())
    throw std::runtime_error("status: no 'header' object");
  RemoteStatus r;
  // The trace parsers are the strict ones (and fuzzed): hand them the
  // objects as trace lines.
  r.header = header_from_json(
      header->dump(-1, ' ', false, json::error_handler_t::replace),
      "status.header");
  auto sample = j.find("sample");
  if (sample != j.end() && !sample->is_null()) {
    if (!sample->is_object())
      throw std::runtime_error("status: 'sample' is not an object");
    r.sample = sample_from_json(
        sample->dump(-1, ' ', false, json::error_handler_t::replace),
        "status.sample");
  }
  auto collect = j.find("collect");
  if (collect != j.end() && collect->is_object()) {
    double interval = number_field(*collect, "interval_s");
    if (interval > 0 && interval < 3600) r.interval_s = interval;
    r.collect_duration_s = number_field(*collect, "collect_duration_s");
    auto v = collect->find("version");
    if (v != collect->end() && v->is_string())
      r.version = v->get<std::string>().substr(0, 64);
    auto k = collect->find("remote_kill");
    r.remote_kill = k != collect->end() && k->is_boolean() && k->get<bool>();
  }
  return r;
}

FindingsState parse_remote_findings(std::string_view body) {
  json j = parse_object(body, "findings");
  auto arr = j.find("findings");
  if (arr == j.end() || !arr->is_array())
    throw std::runtime_error("findings: no 'findings' array");
  if (arr->size() > kMaxFindings)
    throw std::runtime_error("findings: more than 1000 findings");
  FindingsState out;
  out.source = "serve's alerts";
  for (const auto& item : *arr) {
    if (!item.is_object())
      throw std::runtime_error("findings: an item is not an object");
    Finding f;
    f.id = text_field(item, "id");
    f.severity = text_field(item, "severity");
    if (f.severity != "critical" && f.severity != "warning" &&
        f.severity != "info")
      throw std::runtime_error("findings: unknown severity");
    f.title = text_field(item, "title");
    f.evidence = text_field(item, "evidence");
    f.action = text_field(item, "action");
    f.start = number_field(item, "start");
    f.end = number_field(item, "end");
    if (auto g = item.find("gpus"); g != item.end() && g->is_array())
      for (const auto& x : *g)
        if (x.is_number_integer() && x.get<int64_t>() >= 0 &&
            x.get<int64_t>() < 1024 && f.gpus.size() < 1024)
          f.gpus.push_back(x.get<int>());
    if (auto p = item.find("pids"); p != item.end() && p->is_array())
      for (const auto& x : *p)
        if (x.is_number_unsigned() && x.get<uint64_t>() <= UINT32_MAX &&
            f.pids.size() < 4096)
          f.pids.push_back(x.get<uint32_t>());
    out.findings.push_back(std::move(f));
  }
  if (auto e = j.find("evaluated_at"); e != j.end() && e->is_number())
    out.evaluated_at = e->get<double>();
  if (auto w = j.find("window"); w != j.end() && w->is_object()) {
    out.window.start = number_field(*w, "start");
    out.window.end = number_field(*w, "end");
    double n = number_field(*w, "samples");
    if (n >= 0 && n < 1e9) out.window.samples = static_cast<size_t>(n);
  }
  return out;
}

}  // namespace gd::monitor
