#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "a100_header.h"
#include "fixture_proc.h"
#include "views/who_render.h"

namespace gd::procmgmt {
namespace {

constexpr uint64_t kGiB = 1ull << 30, kMiB = 1ull << 20;

GpuProcess gp(uint32_t pid, std::optional<uint64_t> bytes) {
  GpuProcess p;
  p.pid = pid;
  p.used_bytes = bytes;
  return p;
}

class AccountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fx.open_fd(5000, 3,
               "/dev/nvidia0");  // bob's notebook: this GPU, not listed
    fx.open_fd(4001, 3, "/dev/nvidiactl");  // pod: GPU unknown
    fx.open_fd(1002, 3,
               "/dev/nvidia1");  // another GPU only: not this GPU's business
    fx.open_fd(1001, 3, "/dev/nvidia0");  // listed anyway
    procs = ProcSnapshot::read(fx.proc());
    devices = scan_device_holders(fx.proc(), "/dev");
  }
  Sample sample(std::vector<GpuProcess> ps, std::optional<uint64_t> used) {
    Sample s;
    GpuSample g;
    g.index = 0;
    g.mem_used_bytes = used;
    g.processes = std::move(ps);
    s.gpus.push_back(g);
    return s;
  }
  test::FixtureProc fx;
  ProcSnapshot procs;
  DeviceScan devices;
};

TEST_F(AccountTest, EveryByteHasAnOwner) {
  uint64_t used = 30 * kGiB + 2 * kGiB + kGiB + 4 * kGiB + 400 * kMiB;
  auto a = account_gpu_memory(test::a100_header(),
                              sample({gp(1001, 30 * kGiB), gp(2001, 2 * kGiB),
                                      gp(3000, kGiB), gp(9999, 4 * kGiB)},
                                     used),
                              0, procs, devices);
  ASSERT_TRUE(a.readable);
  ASSERT_EQ(a.processes.size(), 4u);
  // Largest first.
  EXPECT_EQ(a.processes[0].pid, 1001u);
  EXPECT_EQ(a.processes[0].status, HolderStatus::kLive);
  EXPECT_EQ(a.processes[1].pid, 9999u);
  EXPECT_EQ(a.processes[1].status, HolderStatus::kMissing);
  EXPECT_EQ(a.processes[2].pid, 2001u);
  EXPECT_EQ(a.processes[2].status, HolderStatus::kZombie);
  EXPECT_EQ(a.processes[3].status, HolderStatus::kUninterruptible);

  EXPECT_EQ(a.listed_bytes, 37 * kGiB);
  EXPECT_EQ(a.missing_bytes, 4 * kGiB);
  EXPECT_EQ(a.driver_reserved_bytes, 400 * kMiB);
  EXPECT_EQ(a.unexplained_bytes, 0u);
  EXPECT_EQ(a.listed_bytes + *a.driver_reserved_bytes + *a.unexplained_bytes,
            used);

  // The zombie names the parent that must reap it, and what to do.
  const auto& z = a.processes[2];
  ASSERT_TRUE(z.parent);
  EXPECT_EQ(z.parent->pid, 2000u);
  EXPECT_NE(z.explanation.find("parent 2000 (python3 leaky_parent.py)"),
            std::string::npos)
      << z.explanation;
  EXPECT_NE(z.action.find("gpudoctor kill 2000"), std::string::npos)
      << z.action;
  EXPECT_NE(a.processes[3].action.find("/proc/3000/stack"), std::string::npos);
  EXPECT_NE(a.processes[1].explanation.find("orphaned"), std::string::npos);
  EXPECT_NE(a.processes[1].action.find("nvidia-smi --gpu-reset -i 0"),
            std::string::npos);

  // Device holders NVML does not list on this GPU: bob's notebook (nvidia0)
  // and the pod (control node only), not 1002 (nvidia1) nor listed 1001.
  ASSERT_EQ(a.other_holders.size(), 2u);
  EXPECT_EQ(a.other_holders[0].proc.pid, 4001u);
  EXPECT_FALSE(a.other_holders[0].this_gpu);
  EXPECT_EQ(a.other_holders[0].container.pod_uid,
            "6f1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d");
  EXPECT_EQ(a.other_holders[1].proc.pid, 5000u);
  EXPECT_TRUE(a.other_holders[1].this_gpu);
  EXPECT_EQ(a.other_holders[1].container.runtime, "docker");
}

TEST_F(AccountTest, TextNamesEveryLineAndTheTotal) {
  auto a = account_gpu_memory(
      test::a100_header(),
      sample({gp(1001, 30 * kGiB), gp(2001, 2 * kGiB)}, 32 * kGiB + 512 * kMiB),
      0, procs, devices);
  std::string text = render_who(a);
  EXPECT_NE(text.find("used 32.5 GiB of 80.0 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("1001"), std::string::npos);
  EXPECT_NE(text.find("zombie"), std::string::npos);
  EXPECT_NE(text.find("driver"), std::string::npos);
  EXPECT_NE(text.find("512 MiB"), std::string::npos);
  EXPECT_NE(text.find("5000"), std::string::npos) << "device holder listed";
  EXPECT_NE(text.find("What to do"), std::string::npos);
}

TEST_F(AccountTest, TooMuchForADriverIsUnexplainedNotDriver) {
  auto a = account_gpu_memory(test::a100_header(),
                              sample({gp(1001, 10 * kGiB)}, 20 * kGiB), 0,
                              procs, devices);
  EXPECT_FALSE(a.driver_reserved_bytes);
  EXPECT_EQ(a.unexplained_bytes, 10 * kGiB);
  bool mentions_holders = false;
  for (const auto& s : a.advice)
    mentions_holders |= s.find("device files open") != std::string::npos;
  EXPECT_TRUE(mentions_holders);
}

TEST_F(AccountTest, UnknownSizesLeaveTheDriverShareUnknown) {
  auto a = account_gpu_memory(
      test::a100_header(),
      sample({gp(1001, 10 * kGiB), gp(1002, std::nullopt)}, 12 * kGiB), 0,
      procs, devices);
  EXPECT_EQ(a.unknown_size_processes, 1);
  EXPECT_FALSE(a.driver_reserved_bytes);
  EXPECT_EQ(a.unexplained_bytes, 2 * kGiB);
  auto none = account_gpu_memory(test::a100_header(),
                                 sample({gp(1001, kGiB)}, std::nullopt), 0,
                                 procs, devices);
  EXPECT_FALSE(none.driver_reserved_bytes);
  EXPECT_FALSE(none.unexplained_bytes);
}

// NVML lists a gone owner without a size: who gives the figure of the
// orphaned-memory finding, top and the dashboard (used minus the live
// processes), in its text and JSON.
TEST_F(AccountTest, MemoryNoLiveProcessHoldsWithAGoneOwnerOfUnknownSize) {
  auto a = account_gpu_memory(
      test::a100_header(),
      sample({gp(1001, 30 * kGiB), gp(9999, std::nullopt)}, 46 * kGiB), 0,
      procs, devices);
  EXPECT_TRUE(a.orphaned);
  ASSERT_TRUE(a.not_owned_bytes);
  EXPECT_EQ(*a.not_owned_bytes, 16 * kGiB);
  EXPECT_NE(render_who(a).find("16.0 GiB of it not held by any live process"),
            std::string::npos)
      << render_who(a);
  EXPECT_EQ(nlohmann::json::parse(who_to_json(a))["not_owned_bytes"],
            16 * kGiB);
  // A live process of unknown size: nobody can say.
  auto unknown = account_gpu_memory(
      test::a100_header(),
      sample({gp(1001, std::nullopt), gp(9999, kGiB)}, 46 * kGiB), 0, procs,
      devices);
  EXPECT_FALSE(unknown.not_owned_bytes);
}

TEST_F(AccountTest, InsideAContainerMissingIsNotCalledOrphaned) {
  auto a = account_gpu_memory(
      test::a100_header("container"),
      sample({gp(9999, 4 * kGiB)}, 4 * kGiB + 300 * kMiB), 0, procs, devices);
  ASSERT_EQ(a.processes.size(), 1u);
  EXPECT_EQ(a.processes[0].explanation.find("orphaned"), std::string::npos);
  EXPECT_NE(a.processes[0].explanation.find("container PID namespace"),
            std::string::npos);
  ASSERT_FALSE(a.advice.empty());
  EXPECT_NE(a.advice[0].find("--pid=host"), std::string::npos) << a.advice[0];
  EXPECT_NE(a.advice[0].find("hostPID: true"), std::string::npos);
  for (const auto& s : a.advice)
    EXPECT_EQ(s.find("gpu-reset"), std::string::npos) << s;
}

TEST_F(AccountTest, LostGpuIsNotAccounted) {
  Sample s;
  GpuSample g;
  g.index = 0;
  g.lost = true;
  s.gpus.push_back(g);
  auto a = account_gpu_memory(test::a100_header(), s, 0, procs, devices);
  EXPECT_FALSE(a.readable);
  EXPECT_NE(render_who(a).find("lost"), std::string::npos);
}

TEST_F(AccountTest, JsonCarriesTheSameFacts) {
  auto a = account_gpu_memory(
      test::a100_header(),
      sample({gp(2001, 2 * kGiB), gp(9999, kGiB)}, 3 * kGiB + kMiB), 0, procs,
      devices);
  auto j = nlohmann::json::parse(who_to_json(a));
  EXPECT_EQ(j["gpu"], 0);
  EXPECT_EQ(j["used_bytes"], 3 * kGiB + kMiB);
  EXPECT_EQ(j["driver_reserved_bytes"], kMiB);
  EXPECT_EQ(j["missing_bytes"], kGiB);
  ASSERT_EQ(j["processes"].size(), 2u);
  EXPECT_EQ(j["processes"][0]["status"], "zombie");
  EXPECT_EQ(j["processes"][0]["parent"]["pid"], 2000);
  EXPECT_EQ(j["processes"][1]["status"], "missing");
  EXPECT_TRUE(j["processes"][1]["proc"].is_null());
  EXPECT_EQ(j["pid_namespace"], "host");
}

}  // namespace
}  // namespace gd::procmgmt

namespace gd::procmgmt {
namespace {

// A CUDA process (gone: NVML still lists its pid 9999 with 6 GiB) forked
// pid 5000 (python3, re-parented to pid 1), which inherited the device
// files. pid 4001 is a monitoring agent that uses NVML only: nvidiactl and
// the GPU's node, never nvidia-uvm.
class OrphanHolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fx.open_fd(5000, 3, "/dev/nvidiactl");
    fx.open_fd(5000, 4, "/dev/nvidia0");
    fx.open_fd(5000, 5, "/dev/nvidia-uvm");
    fx.open_fd(4001, 3, "/dev/nvidiactl");
    fx.open_fd(4001, 4, "/dev/nvidia0");
  }
  GpuMemoryAccount account(std::vector<GpuProcess> listed, uint64_t used) {
    Sample s;
    GpuSample g;
    g.index = 0;
    g.mem_used_bytes = used;
    g.processes = std::move(listed);
    s.gpus.push_back(g);
    return account_gpu_memory(test::a100_header(), s, 0,
                              ProcSnapshot::read(fx.proc()),
                              scan_device_holders(fx.proc(), "/dev"));
  }
  static GpuProcess gp(uint32_t pid, uint64_t bytes) {
    GpuProcess p;
    p.pid = pid;
    p.used_bytes = bytes;
    return p;
  }
  test::FixtureProc fx;
};

TEST_F(OrphanHolderTest, ForkedChildHoldingTheFilesIsNamedAndEndedNotReset) {
  auto a = account({gp(9999, 6 * kGiB)}, 6 * kGiB + 300 * kMiB);
  EXPECT_TRUE(a.orphaned);
  EXPECT_EQ(probable_holder_pids(a), std::vector<uint32_t>{5000});
  ASSERT_FALSE(a.other_holders.empty());
  const OtherHolder& h = a.other_holders[0];
  EXPECT_EQ(h.proc.pid, 5000u);
  EXPECT_TRUE(h.probable);
  std::string why;
  for (const auto& e : h.evidence) why += e + "\n";
  EXPECT_NE(why.find("nvidia-uvm"), std::string::npos) << why;
  EXPECT_NE(why.find("re-parented to pid 1"), std::string::npos) << why;
  // The agent is listed, never proposed.
  for (const auto& o : a.other_holders)
    if (o.proc.pid == 4001) {
      EXPECT_FALSE(o.probable);
    }
  std::string advice;
  for (const auto& s : a.advice) advice += s + "\n";
  EXPECT_NE(advice.find("`gpudoctor kill 5000`"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("--gpu-reset"), std::string::npos) << advice;
  EXPECT_NE(a.processes[0].action.find("gpudoctor kill 5000"),
            std::string::npos);

  std::string text = render_who(a);
  EXPECT_NE(text.find("Probable holder of the memory"), std::string::npos)
      << text;
  auto j = nlohmann::json::parse(who_to_json(a));
  EXPECT_EQ(j["probable_holders"], nlohmann::json::array({5000}));
  EXPECT_TRUE(j["orphaned"]);
}

TEST_F(OrphanHolderTest, NvmlOnlyClientIsNeverProposedAndResetIsAdvised) {
  std::filesystem::remove_all(fx.proc() + "/5000/fd");
  auto a = account({gp(9999, 6 * kGiB)}, 6 * kGiB + 300 * kMiB);
  EXPECT_TRUE(a.orphaned);
  EXPECT_TRUE(probable_holder_pids(a).empty());
  std::string advice;
  for (const auto& s : a.advice) advice += s + "\n";
  EXPECT_NE(advice.find("--gpu-reset -i 0"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("gpudoctor kill 4001"), std::string::npos) << advice;
}

TEST_F(OrphanHolderTest, NothingIsProposedWhileEveryByteHasALiveOwner) {
  auto a = account({gp(1001, 6 * kGiB)}, 6 * kGiB + 300 * kMiB);
  EXPECT_FALSE(a.orphaned);
  EXPECT_TRUE(probable_holder_pids(a).empty());
}

TEST_F(OrphanHolderTest, AProcessNvmlListsElsewhereIsNotAHolder) {
  Sample s;
  GpuSample g0, g1;
  g0.index = 0;
  g0.mem_used_bytes = 6 * kGiB;
  g0.processes = std::vector<GpuProcess>{gp(9999, 6 * kGiB)};
  g1.index = 1;
  g1.mem_used_bytes = 2 * kGiB;
  g1.processes = std::vector<GpuProcess>{gp(5000, 2 * kGiB)};
  s.gpus = {g0, g1};
  auto a = account_gpu_memory(test::a100_header(), s, 0,
                              ProcSnapshot::read(fx.proc()),
                              scan_device_holders(fx.proc(), "/dev"));
  EXPECT_TRUE(probable_holder_pids(a).empty());
}

}  // namespace
}  // namespace gd::procmgmt
