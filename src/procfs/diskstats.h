// /proc/diskstats: per block device I/O counters since boot.
//
// Which devices count: whole physical disks only. Partitions would count
// the same bytes twice (sda and sda1), and so would stacked devices (dm-*
// for LVM/crypt/multipath, md* for software RAID) that pass their I/O down
// to the disks under them. loop, ram, zram, sr and fd are not storage the
// host waits on in the sense io-bound means (zram is compressed memory).
// "Whole disk" is decided by /sys/block/<name> existing (partitions are not
// listed there); when /sys is not readable a name heuristic is used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd::procfs {

struct DiskCounters {
  std::string name;
  uint64_t sectors_read = 0, sectors_written = 0;  // 512-byte units, always
  uint64_t io_ticks_ms = 0;  // time the device had I/O in flight
};

std::vector<DiskCounters> parse_diskstats(std::string_view text);

// Devices that are never counted, whatever /sys says (see above).
bool is_virtual_or_stacked_disk(std::string_view name);
// Fallback when /sys/block cannot be consulted: sda1, nvme0n1p2, mmcblk0p1...
bool looks_like_partition(std::string_view name);

struct DiskRates {
  uint64_t read_bytes_per_s = 0, write_bytes_per_s = 0;
  double busiest_pct = 0;  // max over disks of io_ticks share, 0..100
};

// Rates between two readings `seconds` apart, over the devices present in
// both (the callers pass only counted disks). nullopt if seconds <= 0.
std::optional<DiskRates> disk_rates_between(
    const std::vector<DiskCounters>& before,
    const std::vector<DiskCounters>& after, double seconds);

}  // namespace gd::procfs
