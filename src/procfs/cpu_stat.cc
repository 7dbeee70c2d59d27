#include "procfs/cpu_stat.h"

#include <algorithm>

#include "procfs/text_util.h"

namespace gd::procfs {

ProcStat parse_proc_stat(std::string_view text) {
  ProcStat out;
  std::string_view line;
  while (next_line(text, line)) {
    std::string_view rest = line;
    std::string_view key = next_field(rest);
    if (key == "cpu") {
      uint64_t v[8] = {};
      bool ok = true;
      // Old kernels print fewer columns (no steal before 2.6.11); missing
      // trailing columns stay 0, unparsable ones reject the line.
      for (int i = 0; i < 8; ++i) {
        std::string_view f = next_field(rest);
        if (f.empty()) break;
        auto n = parse_u64(f);
        if (!n) {
          ok = false;
          break;
        }
        v[i] = *n;
      }
      if (ok)
        out.cpu = CpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    } else if (key == "btime") {
      out.btime = parse_u64(next_field(rest));
    }
  }
  return out;
}

static uint64_t delta(uint64_t before, uint64_t after) {
  // iowait is known to go backwards on some kernels; never report negative.
  return after > before ? after - before : 0;
}

std::optional<CpuPercent> cpu_percent_between(const CpuTimes& a,
                                              const CpuTimes& b) {
  // Summed as doubles: uint64_t sums of garbled counters could wrap and
  // give shares above 100%.
  auto d = [](uint64_t x, uint64_t y) {
    return static_cast<double>(delta(x, y));
  };
  double busy = d(a.user, b.user) + d(a.nice, b.nice) + d(a.system, b.system) +
                d(a.irq, b.irq) + d(a.softirq, b.softirq);
  double iowait = d(a.iowait, b.iowait);
  double steal = d(a.steal, b.steal);
  double t = busy + d(a.idle, b.idle) + iowait + steal;
  if (t == 0) return std::nullopt;
  // Divide first: x / t <= 1 whenever x <= t, while 100 * x / t can round
  // to just above 100.
  auto pct = [t](double x) { return std::min(100.0, 100.0 * (x / t)); };
  return CpuPercent{pct(busy), pct(iowait), pct(steal)};
}

}  // namespace gd::procfs
