// swappiness: with the kernel default (60) the kernel swaps out anonymous
// memory (pinned-memory staging, data-loader workers, the trainer itself)
// in favour of page cache, and a swapped-out input pipeline starves GPUs.
// Without swap the setting has no effect.
#include <fmt/format.h>

#include <cstdio>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {
// Common guidance for GPU/ML and database servers: prefer dropping page
// cache over swapping; 10 still lets the kernel swap truly idle pages.
constexpr int kMaxSwappiness = 10;
}  // namespace

std::vector<CheckItem> check_swappiness(const CheckContext& ctx) {
  constexpr const char* kId = "swappiness";
  auto line = read_line(ctx.proc_root + "/sys/vm/swappiness");
  int value = 0;
  if (!line || std::sscanf(line->c_str(), "%d", &value) != 1)
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "/proc/sys/vm/swappiness is not readable")};
  std::string text = fmt::format("vm.swappiness = {}", value);
  const auto& swap = ctx.header.host.swap_total_bytes;
  if (swap && *swap == 0)
    return {make_item(kId, CheckStatus::kPass, text + ", no swap",
                      "no swap configured, so it has no effect")};
  if (value > kMaxSwappiness)
    return {make_item(
        kId, CheckStatus::kWarn, text,
        fmt::format("the kernel swaps process memory early: `sysctl -w "
                    "vm.swappiness={}` (and persist it in /etc/sysctl.d/)",
                    kMaxSwappiness))};
  return {make_item(kId, CheckStatus::kPass, text)};
}

}  // namespace gd
