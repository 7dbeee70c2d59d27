#include "api/node_health_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

constexpr size_t kMaxHealthText = 256;
constexpr size_t kMaxHealthGpus = 1024;
constexpr size_t kMaxHealthFindings = 256;

void append_health_ids(std::string& out, const std::vector<std::string>& ids) {
  out += '[';
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    jo::string(out, ids[i]);
  }
  out += ']';
}

std::vector<std::string> health_ids_from(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array() || it->size() > kMaxHealthFindings)
    throw std::runtime_error(std::string("health: '") + key +
                             "' is not a list of at most 256 ids");
  for (const auto& id : *it) {
    if (!id.is_string())
      throw std::runtime_error(std::string("health: '") + key +
                               "' has an id that is not a string");
    out.push_back(id.get<std::string>().substr(0, kMaxHealthText));
  }
  return out;
}

int health_rank(const std::string& state) {
  if (state == "unhealthy") return 3;
  if (state == "unknown") return 2;
  if (state == "degraded") return 1;
  return 0;
}

}  // namespace

std::string worst_gpu_state(const std::vector<GpuHealthEntry>& gpus) {
  if (gpus.empty()) return "unknown";
  std::string worst = "healthy";
  for (const auto& g : gpus)
    if (health_rank(g.state) > health_rank(worst)) worst = g.state;
  return worst;
}

std::string node_health_json(const NodeHealthReply& r) {
  std::string out;
  jo::lit(out, "{\"node\":");
  jo::string(out, r.node);
  jo::lit(out, ",\"state\":");
  jo::string(out, r.state);
  jo::lit(out, ",\"evaluated_at\":");
  jo::value(out, r.evaluated_at);
  jo::lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    const GpuHealthEntry& g = r.gpus[i];
    if (i) out += ',';
    jo::lit(out, "{\"gpu\":");
    jo::integer(out, g.gpu);
    jo::lit(out, ",\"uuid\":");
    jo::string(out, g.uuid);
    jo::lit(out, ",\"state\":");
    jo::string(out, g.state);
    jo::lit(out, ",\"reason\":");
    jo::string(out, g.reason);
    jo::lit(out, ",\"findings\":");
    append_health_ids(out, g.findings);
    jo::lit(out, ",\"recovery_action\":");
    if (g.recovery_action.empty())
      jo::lit(out, "null");
    else
      jo::string(out, g.recovery_action);
    out += '}';
  }
  jo::lit(out, "],\"host_findings\":");
  append_health_ids(out, r.host_findings);
  out += '}';
  return out;
}

NodeHealthReply parse_node_health_json(std::string_view body) {
  const char* what = "health";
  json j = parse_object(body, what);
  NodeHealthReply r;
  r.node = text_or_empty(j, "node", kMaxHealthText, what);
  r.state = text_or_empty(j, "state", kMaxHealthText, what);
  if (r.state.empty()) throw std::runtime_error("health: no 'state'");
  r.evaluated_at = optional_number(j, "evaluated_at", what);
  r.host_findings = health_ids_from(j, "host_findings");
  auto gpus = j.find("gpus");
  if (gpus == j.end() || gpus->is_null()) return r;
  if (!gpus->is_array() || gpus->size() > kMaxHealthGpus)
    throw std::runtime_error("health: 'gpus' is not a list of at most 1024");
  for (const auto& g : *gpus) {
    if (!g.is_object())
      throw std::runtime_error("health: a GPU is not an object");
    GpuHealthEntry e;
    e.gpu = static_cast<int>(
        optional_integer(g, "gpu", 0, kMaxGpu, what).value_or(0));
    e.uuid = text_or_empty(g, "uuid", kMaxHealthText, what);
    e.state = text_or_empty(g, "state", kMaxHealthText, what);
    e.reason = text_or_empty(g, "reason", kMaxHealthText, what);
    e.findings = health_ids_from(g, "findings");
    e.recovery_action =
        text_or_empty(g, "recovery_action", kMaxHealthText, what);
    r.gpus.push_back(std::move(e));
  }
  return r;
}

}  // namespace gd::api
