// gpu-hot-at-idle: an idle GPU (util 5% or less) at 75 C or more, or within
// 10 C of its slowdown temperature. A data-centre GPU at rest sits at
// 30-50 C; that hot with nothing running means its cooling fails (fan,
// airflow, heat sink), and it will throttle as soon as a job starts. A
// warning: the job runs, slower.
#include <fmt/format.h>

#include <algorithm>

#include "check/judges/judge_util.h"

namespace gd::check {

constexpr int kHotIdleC = 75;
constexpr int kSlowdownMarginC = 10;

void judge_hot_at_idle(const Input& in, std::vector<CheckFinding>& out,
                       std::vector<NotJudged>&) {
  for (const auto& g : in.sample->gpus) {
    if (!idle(g) || !g.temp_c) continue;
    const GpuInfo* info = find_gpu_info(*in.header, g.index);
    int hot = kHotIdleC;
    if (info && info->temp_slowdown_c)
      hot = std::min(hot, *info->temp_slowdown_c - kSlowdownMarginC);
    if (*g.temp_c < hot) continue;
    out.push_back(gpu_finding(
        in, g.index, "gpu-hot-at-idle", "warning",
        fmt::format("is at {} C while idle", *g.temp_c),
        fmt::format(
            "{} C at {:.0f}% util (hot from {} C{})", *g.temp_c, *g.util_pct,
            hot,
            info && info->temp_slowdown_c
                ? fmt::format("; slowdown at {} C", *info->temp_slowdown_c)
                : ""),
        "Check the fans, airflow and inlet temperature of this GPU's slot; "
        "it will throttle under load.",
        fmt::format("{} C at idle", *g.temp_c)));
  }
}

}  // namespace gd::check
