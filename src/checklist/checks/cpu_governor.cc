// cpu-governor: a power-saving CPU frequency governor slows the host side
// of training (data loading, kernel launches, NCCL proxies) and adds ramp-up
// latency to bursty work. "performance" keeps cores at full speed.
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_cpu_governor(const CheckContext& ctx) {
  constexpr const char* kId = "cpu-governor";
  namespace fs = std::filesystem;
  const fs::path cpus = ctx.sys_root + "/devices/system/cpu";
  std::map<std::string, int> count;  // governor -> CPUs
  std::error_code ec;
  for (fs::directory_iterator it(cpus, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
        name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    if (auto gov =
            read_line((it->path() / "cpufreq/scaling_governor").string()))
      if (!gov->empty()) ++count[*gov];
  }
  if (count.empty())
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "no cpufreq governor exposed (virtual machine, or "
                      "frequency managed by firmware)")};
  std::string value;
  for (const auto& [gov, n] : count)
    value += fmt::format("{}{} ({} CPU{})", value.empty() ? "" : ", ", gov, n,
                         n == 1 ? "" : "s");
  if (count.size() == 1 && count.count("performance"))
    return {make_item(kId, CheckStatus::kPass, value)};
  return {make_item(kId, CheckStatus::kWarn, value,
                    "set the performance governor: `cpupower frequency-set -g "
                    "performance` (or the tuned/BIOS power profile)")};
}

}  // namespace gd
