// /proc and /sys text through every procfs parser: stat, meminfo, vmstat,
// diskstats, loadavg, pressure, cpuinfo, the ns link, and per process stat,
// status, schedstat, cmdline, cgroup, maps and task children. What a parser
// returns must make sense to the model: finite numbers, percentages within
// 0..100, a swap use no larger than the swap, texts within their line,
// sorted unique library names, pids above 0.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "procfs/cpu_stat.h"
#include "procfs/diskstats.h"
#include "procfs/host_facts.h"
#include "procfs/loadavg.h"
#include "procfs/meminfo.h"
#include "procfs/pressure.h"
#include "procfs/process_files.h"
#include "procfs/vmstat.h"

using namespace gd::procfs;

namespace {

bool is_percent(double v) { return std::isfinite(v) && v >= 0 && v <= 100; }

void host_files(std::string_view in) {
  const ProcStat st = parse_proc_stat(in);
  if (st.cpu) {
    FUZZ_CHECK(!cpu_percent_between(*st.cpu, *st.cpu), in);
    if (auto p = cpu_percent_between(CpuTimes{}, *st.cpu)) {
      FUZZ_CHECK(
          is_percent(p->util) && is_percent(p->iowait) && is_percent(p->steal),
          in);
    }
  }
  const MemInfo mem = parse_meminfo(in);
  if (auto used = mem.swap_used_bytes()) {
    FUZZ_CHECK(mem.swap_total_bytes && *used <= *mem.swap_total_bytes, in);
  }
  parse_vmstat(in);
  const std::vector<DiskCounters> disks = parse_diskstats(in);
  for (const auto& d : disks) {
    FUZZ_CHECK(!d.name.empty(), in);
    FUZZ_CHECK(d.name.find_first_of(" \t\n") == std::string::npos, d.name);
    looks_like_partition(d.name);
    is_virtual_or_stacked_disk(d.name);
  }
  // The same reading twice: no I/O in between (rates are matched by name,
  // and /proc/diskstats names each device once).
  std::set<std::string> names;
  for (const auto& d : disks) names.insert(d.name);
  if (auto r = disk_rates_between(disks, disks, 1.0);
      r && names.size() == disks.size()) {
    FUZZ_CHECK(r->read_bytes_per_s == 0 && r->write_bytes_per_s == 0 &&
                   r->busiest_pct == 0,
               in);
  }
  if (auto r = disk_rates_between({}, disks, 1.0)) {
    FUZZ_CHECK(is_percent(r->busiest_pct), in);
  }
  if (auto load = parse_loadavg1(in)) {
    FUZZ_CHECK(std::isfinite(*load) && *load >= 0, in);
  }
  if (auto psi = parse_psi_some_avg10(in)) FUZZ_CHECK(is_percent(*psi), in);
  const CpuInfo cpu = parse_cpuinfo(in);
  FUZZ_CHECK(cpu.model.find('\n') == std::string::npos, cpu.model);
  FUZZ_CHECK(!cpu.processors || *cpu.processors >= 0, in);
  parse_ns_link(in);
  if (auto depth = parse_nspid_depth(in)) FUZZ_CHECK(*depth >= 0, in);
}

void process_files(std::string_view in) {
  if (auto st = parse_pid_stat(in)) {
    FUZZ_CHECK(st->num_threads >= 0, in);
    FUZZ_CHECK(st->state != '\0', in);
  }
  if (auto ss = parse_schedstat(in)) {
    FUZZ_CHECK(!(*ss == SchedStat{}), in);  // all zero means "not there"
  }
  parse_status_euid(in);
  const std::string cmd = cmdline_from_raw(in);
  FUZZ_CHECK(cmd.find('\0') == std::string::npos, cmd);
  FUZZ_CHECK(cmd.empty() || (cmd.back() != ' ' && cmd.back() != '\0'), cmd);
  // A cgroup name may hold any byte but '/' and NUL (a delegated cgroup is
  // named by its user), so only the line structure is checked.
  if (auto cg = parse_cgroup(in)) {
    FUZZ_CHECK(!cg->empty() && cg->find('\n') == std::string::npos, *cg);
  }
  const std::vector<std::string> libs = parse_maps_cuda_libs(in);
  for (size_t i = 0; i < libs.size(); ++i) {
    FUZZ_CHECK(is_cuda_library_name(libs[i]), libs[i]);
    FUZZ_CHECK(libs[i].find('/') == std::string::npos, libs[i]);
    FUZZ_CHECK(i == 0 || libs[i - 1] < libs[i], libs[i]);
  }
  std::vector<uint32_t> pids;
  parse_pid_list(in, pids);
  for (uint32_t pid : pids) FUZZ_CHECK(pid > 0, in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  host_files(in);
  process_files(in);
  return 0;
}
