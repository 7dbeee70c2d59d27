#include "api/status_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"
#include "trace/trace_io.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

constexpr size_t kMaxVersionBytes = 64;
constexpr size_t kMaxGpus = 1024;

// Keys in the order serve has always sent them (nlohmann's sorted order,
// before this writer): clients that compare bytes see no change.
void append_collect(std::string& out, const StatusCollect& c) {
  jo::lit(out, "{\"collect_duration_s\":");
  jo::number(out, c.collect_duration_s);
  jo::lit(out, ",\"collections_total\":");
  jo::unsigned_integer(out, c.collections_total);
  jo::lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < c.gpus.size(); ++i) {
    const StatusGpu& g = c.gpus[i];
    if (i) out += ',';
    jo::lit(out, "{\"index\":");
    jo::integer(out, g.index);
    jo::lit(out, ",\"last_success_t\":");
    jo::value(out, g.last_success_t);
    jo::lit(out, ",\"lost\":");
    jo::boolean(out, g.lost);
    jo::lit(out, ",\"success\":");
    jo::boolean(out, g.success);
    out += '}';
  }
  jo::lit(out, "],\"interval_s\":");
  jo::number(out, c.interval_s);
  jo::lit(out, ",\"remote_kill\":");
  jo::boolean(out, c.remote_kill);
  jo::lit(out, ",\"sample_age_s\":");
  jo::value(out, c.sample_age_s);
  jo::lit(out, ",\"started_at\":");
  jo::number(out, c.started_at);
  jo::lit(out, ",\"version\":");
  jo::string(out, c.version);
  out += '}';
}

bool flag(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return false;
  if (!it->is_boolean())
    throw std::runtime_error(std::string("status: '") + key +
                             "' is not true or false");
  return it->get<bool>();
}

StatusCollect collect_from(const json& c) {
  const char* what = "status.collect";
  StatusCollect r;
  // An interval out of reason would make top poll in a busy loop or never.
  const double interval = number_or(c, "interval_s", 1, what);
  if (interval > 0 && interval < 3600) r.interval_s = interval;
  r.collect_duration_s = number_or(c, "collect_duration_s", 0, what);
  r.collections_total = static_cast<uint64_t>(
      optional_integer(c, "collections_total", 0, INT64_MAX, what).value_or(0));
  r.started_at = number_or(c, "started_at", 0, what);
  r.version = text_or_empty(c, "version", kMaxVersionBytes, what);
  r.remote_kill = flag(c, "remote_kill");
  r.sample_age_s = optional_number(c, "sample_age_s", what);
  auto gpus = c.find("gpus");
  if (gpus == c.end() || gpus->is_null()) return r;
  if (!gpus->is_array())
    throw std::runtime_error("status.collect: 'gpus' is not an array");
  if (gpus->size() > kMaxGpus)
    throw std::runtime_error("status.collect: more than 1024 GPUs");
  for (const auto& g : *gpus) {
    if (!g.is_object())
      throw std::runtime_error("status.collect: a GPU is not an object");
    StatusGpu s;
    s.index = static_cast<int>(
        optional_integer(g, "index", 0, kMaxGpus - 1, what).value_or(0));
    s.success = flag(g, "success");
    s.lost = flag(g, "lost");
    s.last_success_t = optional_number(g, "last_success_t", what);
    r.gpus.push_back(s);
  }
  return r;
}

}  // namespace

void append_status_json(std::string& out, const TraceHeader& header,
                        const Sample* sample, const StatusCollect& collect) {
  jo::lit(out, "{\"header\":");
  append_header_json(out, header);
  jo::lit(out, ",\"sample\":");
  if (sample)
    append_sample_json(out, *sample);
  else
    jo::null(out);
  jo::lit(out, ",\"collect\":");
  append_collect(out, collect);
  out += '}';
}

StatusReply parse_status_json(std::string_view body) {
  json j = parse_object(body, "status");
  auto header = j.find("header");
  if (header == j.end() || !header->is_object())
    throw std::runtime_error("status: no 'header' object");
  StatusReply r;
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
  // An older serve, or one that never sent it: the defaults.
  auto collect = j.find("collect");
  if (collect != j.end() && collect->is_object())
    r.collect = collect_from(*collect);
  return r;
}

}  // namespace gd::api
