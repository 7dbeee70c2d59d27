#include "procfs/diskstats.h"

#include <algorithm>
#include <cctype>

#include "procfs/text_util.h"

namespace gd::procfs {

std::vector<DiskCounters> parse_diskstats(std::string_view text) {
  std::vector<DiskCounters> out;
  std::string_view line;
  while (next_line(text, line)) {
    std::string_view rest = line;
    next_field(rest);  // major
    next_field(rest);  // minor
    std::string_view name = next_field(rest);
    // Columns after the name: reads, reads merged, sectors read, ms reading,
    // writes, writes merged, sectors written, ms writing, in flight,
    // io_ticks, weighted ms (then discard/flush columns on newer kernels).
    uint64_t v[10];
    bool ok = !name.empty();
    for (int i = 0; i < 10 && ok; ++i) {
      auto n = parse_u64(next_field(rest));
      if (!n)
        ok = false;
      else
        v[i] = *n;
    }
    if (!ok) continue;
    out.push_back(DiskCounters{std::string(name), v[2], v[6], v[9]});
  }
  return out;
}

bool is_virtual_or_stacked_disk(std::string_view name) {
  for (std::string_view p : {"loop", "ram", "zram", "dm-", "md", "sr", "fd"}) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

static bool ends_with_digit(std::string_view s) {
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s.back()));
}

bool looks_like_partition(std::string_view name) {
  // nvme0n1p1, mmcblk0p1, nbd0p1: a 'p' + digits after a digit.
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size()) return false;  // no trailing number: "sda"
  std::string_view head = name.substr(0, i);
  if (head.size() >= 2 && head.back() == 'p' &&
      std::isdigit(static_cast<unsigned char>(head[head.size() - 2])))
    return true;
  // sda1, vdb2, xvda1, hdc3: letters-only disk name + number.
  for (std::string_view p : {"sd", "vd", "xvd", "hd"}) {
    if (head.starts_with(p) && !ends_with_digit(head)) return true;
  }
  return false;
}

std::optional<DiskRates> disk_rates_between(
    const std::vector<DiskCounters>& before,
    const std::vector<DiskCounters>& after, double seconds) {
  if (!(seconds > 0)) return std::nullopt;
  DiskRates r;
  double read = 0, write = 0;
  for (const DiskCounters& b : after) {
    auto a =
        std::find_if(before.begin(), before.end(),
                     [&](const DiskCounters& d) { return d.name == b.name; });
    if (a == before.end()) continue;
    // A counter that went backwards means the device was replaced; skip it.
    if (b.sectors_read < a->sectors_read ||
        b.sectors_written < a->sectors_written ||
        b.io_ticks_ms < a->io_ticks_ms)
      continue;
    read += static_cast<double>(b.sectors_read - a->sectors_read) * 512.0;
    write +=
        static_cast<double>(b.sectors_written - a->sectors_written) * 512.0;
    double busy =
        static_cast<double>(b.io_ticks_ms - a->io_ticks_ms) / (seconds * 10.0);
    r.busiest_pct = std::max(r.busiest_pct, std::min(busy, 100.0));
  }
  // Counters that jumped by more than 2^64 bytes a second (a garbled file)
  // saturate: converting a larger double to uint64_t is undefined.
  constexpr double kMaxRate = 18446744073709549568.0;  // largest below 2^64
  r.read_bytes_per_s =
      static_cast<uint64_t>(std::min(read / seconds + 0.5, kMaxRate));
  r.write_bytes_per_s =
      static_cast<uint64_t>(std::min(write / seconds + 0.5, kMaxRate));
  return r;
}

}  // namespace gd::procfs
