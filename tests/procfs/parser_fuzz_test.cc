// Mutated /proc text (deterministic pseudo-random) must never crash a parser.
// Meant to run under -DGD_SANITIZE=ON, where out-of-bounds reads abort.
#include <gtest/gtest.h>

#include <random>
#include <string>

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

const char* const kSeeds[] = {
    "cpu  1000 0 500 8000 300 0 50 150 0 0\nbtime 1700000000\n",
    "MemTotal:       16384000 kB\nMemAvailable:    8192000 kB\nSwapTotal: 1 "
    "kB\nSwapFree: 0 kB\n",
    "pswpin 100\npswpout 200\n",
    "   8       0 sda 100 0 2048 50 200 0 4096 80 0 700 130 0 0 0 0 0 0\n",
    "1.25 0.80 0.50 3/456 7890\n",
    "some avg10=12.50 avg60=3.00 avg300=1.00 total=6791588\n",
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\n",
    "1002 (my (weird) name)) S 1000 1002 1002 0 -1 4194560 1000 0 5 0 10 0 0 0 "
    "20 0 2 0 12401 1 1000 1\n",
    "Uid:\t1000\t0\t0\t0\nNSpid:\t5\t1\n",
    "12:cpuset:/docker/abc\n0::/kubepods/pod\n",
    "7f00-7f01 r-xp 00000000 fd:01 1 /usr/lib/libcudart.so.12.1.105\n",
    "pid:[4026531836]",
};

std::string mutate(std::string s, std::mt19937& rng) {
  std::uniform_int_distribution<int> op(0, 4), byte(0, 255);
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < edits; ++i) {
    size_t at = s.empty() ? 0 : rng() % s.size();
    switch (op(rng)) {
      case 0:
        if (!s.empty()) s[at] = static_cast<char>(byte(rng));
        break;
      case 1:
        s.insert(at, 1, "()\n: \0-9"[rng() % 8]);
        break;
      case 2:
        if (!s.empty()) s.erase(at, 1 + rng() % 8);
        break;
      case 3:
        s.resize(at);
        break;  // truncation, as a short read would give
      case 4:
        s.insert(at, s.substr(0, rng() % 32));
        break;
    }
  }
  return s;
}

}  // namespace

TEST(ProcParserFuzz, MutatedInputNeverCrashes) {
  std::mt19937 rng(20240830);
  size_t parsed_something = 0;
  for (int round = 0; round < 3000; ++round) {
    for (const char* seed : kSeeds) {
      std::string in = mutate(seed, rng);
      auto st = parse_proc_stat(in);
      if (st.cpu) cpu_percent_between(*st.cpu, *st.cpu);
      parse_meminfo(in).swap_used_bytes();
      parse_vmstat(in);
      auto disks = parse_diskstats(in);
      disk_rates_between(disks, disks, 1.0);
      for (const auto& d : disks) looks_like_partition(d.name);
      parse_loadavg1(in);
      parse_psi_some_avg10(in);
      parse_cpuinfo(in);
      parse_ns_link(in);
      parse_nspid_depth(in);
      if (parse_pid_stat(in)) ++parsed_something;
      parse_status_euid(in);
      parse_schedstat(in);
      cmdline_from_raw(in);
      parse_cgroup(in);
      parse_maps_cuda_libs(in);
      std::vector<uint32_t> pids;
      parse_pid_list(in, pids);
    }
  }
  // The mutations are mild enough that some stat lines still parse: the
  // test exercises the parsers' success paths too, not only rejection.
  EXPECT_GT(parsed_something, 0u);
}
