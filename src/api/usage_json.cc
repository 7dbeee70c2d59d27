#include "api/usage_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

constexpr const char* kWhat = "usage";
constexpr size_t kMaxUsageText = 4096;

void numbers(std::string& out, const std::vector<double>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    jo::number(out, v[i]);
  }
  out += ']';
}

void append_group(std::string& out, const UsageGroup& g) {
  jo::lit(out, "{\"key\":");
  jo::string(out, g.key);
  jo::lit(out, ",\"label\":");
  jo::string(out, g.label);
  jo::lit(out, ",\"other\":");
  jo::boolean(out, g.other);
  jo::lit(out, ",\"groups\":");
  jo::unsigned_integer(out, g.groups);
  jo::lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < g.gpus.size(); ++i) {
    if (i) out += ',';
    jo::integer(out, g.gpus[i]);
  }
  jo::lit(out, "],\"first\":");
  jo::number(out, g.first);
  jo::lit(out, ",\"last\":");
  jo::number(out, g.last);
  jo::lit(out, ",\"gpu_hours_held\":");
  jo::number(out, g.gpu_hours_held);
  jo::lit(out, ",\"busy_gpu_hours\":");
  jo::number(out, g.busy_gpu_hours);
  jo::lit(out, ",\"idle_held_gpu_hours\":");
  jo::number(out, g.idle_held_gpu_hours);
  jo::lit(out, ",\"energy_kwh\":");
  jo::number(out, g.energy_kwh);
  jo::lit(out, ",\"split\":");
  jo::string(out, g.split);
  jo::lit(out, ",\"energy_method\":{\"counter_kwh\":");
  jo::number(out, g.energy_counter_kwh);
  jo::lit(out, ",\"power_kwh\":");
  jo::number(out, g.energy_power_kwh);
  jo::lit(out, "},\"series\":{\"gpu_hours_held\":");
  numbers(out, g.held_series);
  jo::lit(out, ",\"energy_kwh\":");
  numbers(out, g.energy_series);
  jo::lit(out, "},\"waste\":[");
  for (size_t i = 0; i < g.waste.size(); ++i) {
    const UsageWaste& w = g.waste[i];
    if (i) out += ',';
    jo::lit(out, "{\"id\":");
    jo::string(out, w.id);
    jo::lit(out, ",\"severity\":");
    jo::string(out, w.severity);
    jo::lit(out, ",\"seconds\":");
    jo::number(out, w.seconds);
    jo::lit(out, ",\"share\":");
    jo::number(out, w.share);
    out += '}';
  }
  jo::lit(out, "]}");
}

const json& member(const json& j, const char* key, bool (json::*is)() const,
                   const char* type) {
  auto it = j.find(key);
  if (it == j.end() || !((*it).*is)())
    throw std::runtime_error(std::string(kWhat) + ": '" + key + "' is not " +
                             type);
  return *it;
}

std::vector<double> number_list(const json& j, const char* key, size_t max) {
  const json& a = member(j, key, &json::is_array, "a list");
  if (a.size() > max)
    throw std::runtime_error(std::string(kWhat) + ": '" + key +
                             "' has too many entries");
  std::vector<double> out;
  out.reserve(a.size());
  for (const json& v : a) {
    if (v.is_null()) {
      out.push_back(0);
      continue;
    }
    if (!v.is_number())
      throw std::runtime_error(std::string(kWhat) + ": '" + key +
                               "' holds a value that is not a number");
    out.push_back(v.get<double>());
  }
  return out;
}

UsageGroup group_from(const json& j, size_t buckets) {
  if (!j.is_object())
    throw std::runtime_error("usage: a group is not an object");
  UsageGroup g;
  g.key = text_or_empty(j, "key", kMaxUsageText, kWhat);
  g.label = text_or_empty(j, "label", kMaxUsageText, kWhat);
  g.other = member(j, "other", &json::is_boolean, "true or false").get<bool>();
  g.groups = static_cast<size_t>(
      optional_integer(j, "groups", 0, int64_t{1} << 40, kWhat).value_or(1));
  for (double v : number_list(j, "gpus", kMaxGpu + 1)) {
    if (v < 0 || v > kMaxGpu || v != static_cast<int>(v))
      throw std::runtime_error("usage: a GPU index is not 0..1023");
    g.gpus.push_back(static_cast<int>(v));
  }
  g.first = number_or(j, "first", 0, kWhat);
  g.last = number_or(j, "last", 0, kWhat);
  g.gpu_hours_held = number_or(j, "gpu_hours_held", 0, kWhat);
  g.busy_gpu_hours = number_or(j, "busy_gpu_hours", 0, kWhat);
  g.idle_held_gpu_hours = number_or(j, "idle_held_gpu_hours", 0, kWhat);
  g.energy_kwh = number_or(j, "energy_kwh", 0, kWhat);
  g.split = text_or_empty(j, "split", kMaxUsageText, kWhat);
  const json& method =
      member(j, "energy_method", &json::is_object, "an object");
  g.energy_counter_kwh = number_or(method, "counter_kwh", 0, kWhat);
  g.energy_power_kwh = number_or(method, "power_kwh", 0, kWhat);
  const json& series = member(j, "series", &json::is_object, "an object");
  g.held_series = number_list(series, "gpu_hours_held", kUsageMaxBuckets);
  g.energy_series = number_list(series, "energy_kwh", kUsageMaxBuckets);
  if (g.held_series.size() != buckets || g.energy_series.size() != buckets)
    throw std::runtime_error(
        "usage: a group's series has not one value per bucket");
  const json& waste = member(j, "waste", &json::is_array, "a list");
  if (waste.size() > kUsageMaxFindings)
    throw std::runtime_error("usage: 'waste' has too many entries");
  for (const json& w : waste) {
    if (!w.is_object())
      throw std::runtime_error("usage: a waste entry is not an object");
    g.waste.push_back({text_or_empty(w, "id", kMaxUsageText, kWhat),
                       text_or_empty(w, "severity", kMaxUsageText, kWhat),
                       number_or(w, "seconds", 0, kWhat),
                       number_or(w, "share", 0, kWhat)});
  }
  return g;
}

}  // namespace

std::string usage_json(const UsageReply& r) {
  std::string out;
  out.reserve(1024 + r.groups.size() * (256 + 48 * r.buckets.size()));
  jo::lit(out, "{\"by\":");
  jo::string(out, r.by);
  jo::lit(out, ",\"window\":{\"since\":");
  jo::number(out, r.since);
  jo::lit(out, ",\"until\":");
  jo::number(out, r.until);
  jo::lit(out, ",\"start\":");
  jo::number(out, r.start);
  jo::lit(out, ",\"end\":");
  jo::number(out, r.end);
  jo::lit(out, ",\"samples\":");
  jo::unsigned_integer(out, r.samples);
  jo::lit(out, "},\"bucket_s\":");
  jo::number(out, r.bucket_s);
  jo::lit(out, ",\"buckets\":");
  numbers(out, r.buckets);
  const UsageNode& n = r.node;
  jo::lit(out, ",\"node\":{\"gpus\":");
  jo::integer(out, n.gpus);
  jo::lit(out, ",\"gpu_hours_available\":");
  jo::number(out, n.gpu_hours_available);
  jo::lit(out, ",\"gpu_hours_held\":");
  jo::number(out, n.gpu_hours_held);
  jo::lit(out, ",\"busy_gpu_hours\":");
  jo::number(out, n.busy_gpu_hours);
  jo::lit(out, ",\"gpu_hours_unheld\":");
  jo::number(out, n.gpu_hours_unheld);
  jo::lit(out, ",\"gpu_hours_unattributed\":");
  jo::number(out, n.gpu_hours_unattributed);
  jo::lit(out, ",\"energy_kwh\":");
  jo::number(out, n.energy_kwh);
  jo::lit(out, ",\"held_energy_kwh\":");
  jo::number(out, n.held_energy_kwh);
  jo::lit(out, ",\"idle_energy_kwh\":");
  jo::number(out, n.idle_energy_kwh);
  jo::lit(out, "},\"groups\":[");
  for (size_t i = 0; i < r.groups.size(); ++i) {
    if (i) out += ',';
    append_group(out, r.groups[i]);
  }
  jo::lit(out, "],\"groups_total\":");
  jo::unsigned_integer(out, r.groups_total);
  jo::lit(out, ",\"findings\":");
  jo::boolean(out, r.findings);
  jo::lit(out, ",\"computed_at\":");
  jo::number(out, r.computed_at);
  out += '}';
  return out;
}

UsageReply parse_usage_json(std::string_view body) {
  const json j = parse_object(body, kWhat);
  UsageReply r;
  r.by = text_or_empty(j, "by", kMaxUsageText, kWhat);
  if (r.by != "job" && r.by != "user" && r.by != "container" && r.by != "pod" &&
      r.by != "namespace")
    throw std::runtime_error(
        "usage: 'by' is not job, user, container, pod or namespace");
  const json& w = member(j, "window", &json::is_object, "an object");
  r.since = number_or(w, "since", 0, kWhat);
  r.until = number_or(w, "until", 0, kWhat);
  r.start = number_or(w, "start", 0, kWhat);
  r.end = number_or(w, "end", 0, kWhat);
  r.samples = static_cast<size_t>(
      optional_integer(w, "samples", 0, int64_t{1} << 50, kWhat).value_or(0));
  r.bucket_s = number_or(j, "bucket_s", 0, kWhat);
  r.buckets = number_list(j, "buckets", kUsageMaxBuckets);
  const json& n = member(j, "node", &json::is_object, "an object");
  r.node.gpus = static_cast<int>(
      optional_integer(n, "gpus", 0, kMaxGpu + 1, kWhat).value_or(0));
  r.node.gpu_hours_available = number_or(n, "gpu_hours_available", 0, kWhat);
  r.node.gpu_hours_held = number_or(n, "gpu_hours_held", 0, kWhat);
  r.node.busy_gpu_hours = number_or(n, "busy_gpu_hours", 0, kWhat);
  r.node.gpu_hours_unheld = number_or(n, "gpu_hours_unheld", 0, kWhat);
  r.node.gpu_hours_unattributed =
      number_or(n, "gpu_hours_unattributed", 0, kWhat);
  r.node.energy_kwh = number_or(n, "energy_kwh", 0, kWhat);
  r.node.held_energy_kwh = number_or(n, "held_energy_kwh", 0, kWhat);
  r.node.idle_energy_kwh = number_or(n, "idle_energy_kwh", 0, kWhat);
  const json& groups = member(j, "groups", &json::is_array, "a list");
  if (groups.size() > static_cast<size_t>(kUsageMaxTop) + 1)
    throw std::runtime_error("usage: 'groups' has too many entries");
  for (const json& g : groups)
    r.groups.push_back(group_from(g, r.buckets.size()));
  r.groups_total = static_cast<size_t>(
      optional_integer(j, "groups_total", 0, int64_t{1} << 40, kWhat)
          .value_or(0));
  auto f = j.find("findings");
  r.findings = f != j.end() && f->is_boolean() && f->get<bool>();
  r.computed_at = number_or(j, "computed_at", 0, kWhat);
  return r;
}

}  // namespace gd::api
