#include "burn/collective_verdict.h"

#include <fmt/format.h>

#include "burn/figures.h"
#include "common/bytes_text.h"

namespace gd::burn {

namespace {

std::string gpus_text(const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

std::string figures_text(const CollectiveResult& r) {
  std::string out = fmt::format("bus bandwidth {} (algorithm {})",
                                rate_text(*r.busbw_bytes_per_s),
                                rate_text(*r.algbw_bytes_per_s));
  return out + fmt::format(", {} iterations of {} per GPU", r.iterations,
                           human_bytes(r.bytes));
}

}  // namespace

int collective_severity(const CollectiveVerdict& v) {
  return v.verdict == "fail" ? 2 : v.verdict == "warn" ? 1 : 0;
}

CollectiveVerdict judge_collective(const CollectiveResult& r,
                                   const std::string& model) {
  CollectiveVerdict v;
  if (!r.asked) return v;
  const std::string across = fmt::format("across GPUs {}", gpus_text(r.gpus));
  if (!r.error.empty() || r.hung || r.wrong) {
    v.verdict = "fail";
    if (r.hung)
      v.reasons.push_back("the all-reduce " + across +
                          " stopped answering: a GPU or a link between them "
                          "hung");
    if (!r.error.empty())
      v.reasons.push_back("the all-reduce " + across + " failed: " + r.error);
    if (r.wrong) {
      std::string where;
      for (auto [gpu, n] : r.wrong_by_gpu)
        where += fmt::format("{}GPU {}: {}", where.empty() ? "" : ", ", gpu, n);
      v.reasons.push_back(fmt::format(
          "{} of {} all-reduce results wrong ({}): data is corrupted on a "
          "link or in a GPU",
          r.wrong, r.checked, where));
    }
    return v;
  }
  if (!r.ran) {
    v.verdict = "not run";
    v.reasons.push_back(r.skipped.empty() ? "the all-reduce did not run"
                                          : r.skipped);
    return v;
  }
  if (!r.algbw_bytes_per_s) {
    v.verdict = "not judged";
    v.reasons.push_back("the all-reduce ran no timed iteration (stopped)");
    return v;
  }
  if (r.loopback) {
    v.verdict = "not judged";
    v.reasons.push_back(fmt::format(
        "one GPU ({}): the all-reduce crosses no link; {} is a local copy "
        "(loopback), not a bus bandwidth",
        gpus_text(r.gpus), rate_text(*r.algbw_bytes_per_s)));
    return v;
  }
  const int n = static_cast<int>(r.gpus.size());
  const std::string figures = figures_text(r);
  if (model.empty() || r.link.empty()) {
    v.verdict = "not judged";
    v.reasons.push_back(figures + " " + across + "; " +
                        (model.empty()
                             ? "the GPUs are of different models"
                             : "whether these GPUs have NVLink is unknown") +
                        ", so no published figure applies");
    return v;
  }
  v.reference = bus_reference(model, n, r.link);
  if (!v.reference) {
    v.verdict = "not judged";
    v.reasons.push_back(fmt::format(
        "{} {}; no published figure for {} {} over {} to judge it against",
        figures, across, n, model, r.link));
    return v;
  }
  const BusReference& ref = *v.reference;
  const double share = *r.busbw_bytes_per_s / ref.low_bytes_per_s;
  const std::string expected =
      fmt::format("{}-{} expected for {} ({})", rate_text(ref.low_bytes_per_s),
                  rate_text(ref.high_bytes_per_s), ref.setup, ref.source);
  if (share < kBusFloorShare) {
    v.verdict = "warn";
    std::string reason = fmt::format(
        "{} {} is {:.0f}% of the {}: look for an NVLink that is down or "
        "throws errors (nvidia-smi nvlink -s, nvidia-smi nvlink -e), "
        "another job on these GPUs, or NCCL settings that avoid the fast "
        "path (NCCL_P2P_DISABLE, NCCL_ALGO, NCCL_PROTO)",
        figures, across, 100 * share, expected);
    if (!r.nccl_env.empty()) reason += "; this run had " + r.nccl_env;
    v.reasons.push_back(reason);
    return v;
  }
  v.verdict = "pass";
  v.reasons.push_back(
      fmt::format("{} {} over {}; {}", figures, across, r.link, expected));
  return v;
}

}  // namespace gd::burn
