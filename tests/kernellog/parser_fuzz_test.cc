// Mutated kernel-log lines (deterministic pseudo-random) must never crash
// the parser, and whatever it returns must be well-formed. Meant to run
// under -DGD_SANITIZE=ON.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/pci_bus_id.h"
#include "kernellog/kernel_log.h"
#include "kernellog/log_line_prefix.h"
#include "kernellog/pci_address.h"

namespace {

const char* const kSeeds[] = {
    "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, "
    "pid='<unknown>', name=<unknown>, Graphics",
    "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid "
    "(PCI:0000:07:00): 48, pid=1, name=x, DBE",
    "6,1234,5678901,-;NVRM: Xid (PCI:0000:07:00): 79, pid=1234, name=python, "
    "GPU has fallen off the bus.",
    "[...] NVRM: Xid (0000:03:00): 14, Channel 00000001",
    "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 62",
    "Out of memory: Killed process 1234 (python) total-vm:1kB",
    "oom-kill:constraint=CONSTRAINT_NONE,task=python,pid=1234,uid=1000",
    "00000000:07:00.0",
};

std::string mutate(std::string s, std::mt19937& rng) {
  std::uniform_int_distribution<int> op(0, 4), byte(0, 255);
  int edits = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < edits; ++i) {
    size_t at = s.empty() ? 0 : rng() % s.size();
    switch (op(rng)) {
      case 0:
        if (!s.empty()) s[at] = static_cast<char>(byte(rng));
        break;
      case 1:
        s.insert(at, 1, "():;,[] 9\0"[rng() % 10]);
        break;
      case 2:
        if (!s.empty()) s.erase(at, 1 + rng() % 6);
        break;
      case 3:
        s.resize(at);
        break;
      case 4:
        s.insert(at, s.substr(at, rng() % 16));
        break;
    }
  }
  return s;
}

}  // namespace

TEST(KernelLogFuzz, MutatedLinesNeverCrashAndEventsAreWellFormed) {
  std::mt19937 rng(79);
  gd::PciIndex pci;
  pci.add("00000000:07:00.0", 0);
  pci.add("00000000:CB:00.0", 1);
  int events = 0;
  for (int round = 0; round < 5000; ++round) {
    for (const char* seed : kSeeds) {
      std::string line = mutate(seed, rng);
      gd::kernellog::kernel_message(line);
      gd::canonical_pci_device(line);
      auto e = gd::parse_kernel_log_line(line, pci);
      if (!e) continue;
      ++events;
      ASSERT_TRUE(e->kind == "xid" || e->kind == "oom_kill" ||
                  e->kind == "nvrm" || e->kind == "sxid" ||
                  e->kind == "pcie_aer")
          << line;
      if (e->kind == "pcie_aer") {
        EXPECT_TRUE(e->severity == "corrected" ||
                    e->severity == "uncorrected_non_fatal" ||
                    e->severity == "fatal")
            << line;
      }
      if (e->kind == "xid") {
        ASSERT_TRUE(e->code);
        EXPECT_GE(*e->code, 0);
      }
      if (e->kind == "oom_kill") {
        ASSERT_TRUE(e->pid && *e->pid > 0) << line;
      }
      if (e->gpu) {
        EXPECT_TRUE(*e->gpu == 0 || *e->gpu == 1);
      }
    }
  }
  EXPECT_GT(events, 0) << "mutations should leave some lines parseable";
}
