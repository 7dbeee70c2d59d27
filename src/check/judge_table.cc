// The one table of check's own judges (judges/, one per file). The rules of
// diagnose it runs on the one sample are in one_sample_rules.cc.
#include "check/check.h"

namespace gd::check {

#define GD_CHECK_JUDGE(fn) \
  void fn(const Input&, std::vector<CheckFinding>&, std::vector<NotJudged>&);
GD_CHECK_JUDGE(judge_gpu_unresponsive)
GD_CHECK_JUDGE(judge_ecc_volatile)
GD_CHECK_JUDGE(judge_banks_without_spares)
GD_CHECK_JUDGE(judge_nvlink_down)
GD_CHECK_JUDGE(judge_fabric_state)
GD_CHECK_JUDGE(judge_sxid)
GD_CHECK_JUDGE(judge_gpu_not_clean)
GD_CHECK_JUDGE(judge_hot_at_idle)
GD_CHECK_JUDGE(judge_clocks_held_at_idle)
GD_CHECK_JUDGE(judge_ecc_off)
#undef GD_CHECK_JUDGE

const std::vector<Judge>& judge_table() {
  static const std::vector<Judge> table = {
      {"gpu-unresponsive", judge_gpu_unresponsive},
      {"ecc-uncorrectable", judge_ecc_volatile},
      {"memory-degrading", judge_banks_without_spares},
      {"nvlink-degraded", judge_nvlink_down},
      {"fabric-manager-down", judge_fabric_state},
      {"sxid-error", judge_sxid},
      {"gpu-not-clean", judge_gpu_not_clean, /*about_job_gpus=*/true},
      {"gpu-hot-at-idle", judge_hot_at_idle},
      {"clocks-held-at-idle", judge_clocks_held_at_idle},
      {"ecc-off", judge_ecc_off},
  };
  return table;
}

}  // namespace gd::check
