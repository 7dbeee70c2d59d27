#include "api/healthz_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

constexpr size_t kMaxHealthzText = 256;
constexpr size_t kMaxDegraded = 4096;

// Keys in the order serve has always sent them (nlohmann's sorted order,
// before this writer); "gpu", "sample_age_s" and "store" only when known.
void append_store(std::string& out, const HealthStore& s) {
  jo::lit(out, "{\"dropped_samples_total\":");
  jo::unsigned_integer(out, s.dropped_samples_total);
  jo::lit(out, ",\"pending_bytes\":");
  jo::unsigned_integer(out, s.pending_bytes);
  jo::lit(out, ",\"quarantined_total\":");
  jo::unsigned_integer(out, s.quarantined_total);
  jo::lit(out, ",\"usable\":");
  jo::boolean(out, s.usable);
  jo::lit(out, ",\"writable\":");
  jo::boolean(out, s.writable);
  jo::lit(out, ",\"write_errors_total\":");
  jo::unsigned_integer(out, s.write_errors_total);
  out += '}';
}

bool healthz_flag(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean())
    throw std::runtime_error(std::string("healthz.store: '") + key +
                             "' is not true or false");
  return it->get<bool>();
}

uint64_t count(const json& j, const char* key, const char* what) {
  return static_cast<uint64_t>(
      optional_integer(j, key, 0, INT64_MAX, what).value_or(0));
}

HealthStore store_from(const json& s) {
  if (!s.is_object())
    throw std::runtime_error("healthz: 'store' is not an object");
  const char* what = "healthz.store";
  HealthStore r;
  r.usable = healthz_flag(s, "usable");
  r.writable = healthz_flag(s, "writable");
  r.write_errors_total = count(s, "write_errors_total", what);
  r.pending_bytes = count(s, "pending_bytes", what);
  r.dropped_samples_total = count(s, "dropped_samples_total", what);
  r.quarantined_total = count(s, "quarantined_total", what);
  return r;
}

}  // namespace

std::string healthz_json(const HealthReply& r) {
  std::string out;
  jo::lit(out, "{\"collections_total\":");
  jo::unsigned_integer(out, r.collections_total);
  jo::lit(out, ",\"degraded\":[");
  for (size_t i = 0; i < r.degraded.size(); ++i) {
    const Degraded& d = r.degraded[i];
    if (i) out += ',';
    jo::lit(out, "{\"component\":");
    jo::string(out, d.component);
    if (d.gpu) {
      jo::lit(out, ",\"gpu\":");
      jo::integer(out, *d.gpu);
    }
    jo::lit(out, ",\"problem\":");
    jo::string(out, d.problem);
    out += '}';
  }
  out += ']';
  if (r.sample_age_s) {
    jo::lit(out, ",\"sample_age_s\":");
    jo::number(out, *r.sample_age_s);
  }
  jo::lit(out, ",\"status\":");
  jo::string(out, r.status);
  if (r.store) {
    jo::lit(out, ",\"store\":");
    append_store(out, *r.store);
  }
  out += '}';
  return out;
}

HealthReply parse_healthz_json(std::string_view body) {
  const char* what = "healthz";
  json j = parse_object(body, what);
  HealthReply r;
  r.status = text_or_empty(j, "status", kMaxHealthzText, what);
  if (r.status.empty()) throw std::runtime_error("healthz: no 'status'");
  r.collections_total = count(j, "collections_total", what);
  r.sample_age_s = optional_number(j, "sample_age_s", what);
  if (auto s = j.find("store"); s != j.end() && !s->is_null())
    r.store = store_from(*s);
  auto degraded = j.find("degraded");
  if (degraded == j.end() || degraded->is_null()) return r;
  if (!degraded->is_array())
    throw std::runtime_error("healthz: 'degraded' is not an array");
  if (degraded->size() > kMaxDegraded)
    throw std::runtime_error("healthz: more than 4096 degraded parts");
  for (const auto& d : *degraded) {
    if (!d.is_object())
      throw std::runtime_error("healthz: a degraded part is not an object");
    Degraded x;
    x.component = text_or_empty(d, "component", kMaxHealthzText, what);
    if (auto g = optional_integer(d, "gpu", 0, kMaxGpu, what))
      x.gpu = static_cast<int>(*g);
    x.problem = text_or_empty(d, "problem", kMaxHealthzText, what);
    r.degraded.push_back(std::move(x));
  }
  return r;
}

}  // namespace gd::api
