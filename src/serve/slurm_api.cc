#include "serve/slurm_api.h"

#include <nlohmann/json.hpp>

#include "exporter/family_writer.h"
#include "exporter/prom_text.h"

namespace gd {
namespace {

constexpr const char* kDrainResults[] = {"drained", "already_unavailable",
                                         "reason_set_by_other", "rate_limited",
                                         "failed"};
constexpr const char* kResumeResults[] = {"resumed", "not_ours", "not_enabled",
                                          "failed"};

uint64_t count_of(const std::map<std::string, uint64_t>& m, const char* k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

void render_slurm_families(const SlurmDrainStatus& s,
                           const std::string& hostname, std::string& out) {
  const size_t from = out.size();
  prom::FamilyWriter drains(
      out, "gpudoctor_slurm_drains_total", "counter",
      "serve --slurm-drain's decisions on a critical finding, by result: "
      "drained, already_unavailable, reason_set_by_other, rate_limited, "
      "failed.");
  for (const char* r : kDrainResults)
    drains.add(prom::Labels().add("result", r).body(), count_of(s.drains, r));
  prom::FamilyWriter resumes(
      out, "gpudoctor_slurm_resumes_total", "counter",
      "serve --slurm-drain's decisions once its finding cleared, by result: "
      "resumed, not_ours, not_enabled, failed.");
  for (const char* r : kResumeResults)
    resumes.add(prom::Labels().add("result", r).body(), count_of(s.resumes, r));
  prom::FamilyWriter(out, "gpudoctor_slurm_drained_by_gpudoctor", "gauge",
                     "1 while a drain serve made stands (as serve last saw "
                     "it), else 0.")
      .add("", static_cast<uint64_t>(s.own_reason ? 1 : 0));
  if (!hostname.empty()) prom::prepend_label(out, from, "Hostname", hostname);
}

ApiReply api_slurm_actions(const SlurmDrainStatus* s) {
  nlohmann::json j;
  j["enabled"] = s != nullptr;
  if (s) {
    j["node"] = s->config.node;
    j["period_s"] = s->config.period_s;
    j["resume"] = s->config.resume;
    j["drained_by_gpudoctor"] =
        s->own_reason ? nlohmann::json(*s->own_reason) : nlohmann::json();
    nlohmann::json actions = nlohmann::json::array();
    for (auto it = s->actions.rbegin(); it != s->actions.rend(); ++it)
      actions.push_back({{"t", it->t},
                         {"action", it->action},
                         {"result", it->result},
                         {"finding", it->finding},
                         {"reason", it->reason},
                         {"detail", it->detail}});
    j["actions"] = std::move(actions);
  }
  return {200, "application/json",
          j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace gd
