// gpu-not-clean: the GPUs a job gets hold no process, no memory beyond the
// driver's reservation, and no CUDA holder of their device file.
#include <gtest/gtest.h>

#include "check_fixture.h"

namespace gd::check::test {
namespace {

using V = std::vector<std::string>;
constexpr uint64_t GiB = 1ull << 30;

void list(Host& h, int gpu, uint32_t pid, uint64_t bytes) {
  h.gpu(gpu).processes->push_back(process(pid, bytes));
  *h.gpu(gpu).mem_used_bytes += bytes;
}

TEST(CheckClean, LiveProcessIsNamedWithItsUser) {
  Host h;
  list(h, 2, 4242, 8 * GiB);
  ProcessSample p;
  p.pid = 4242;
  p.name = "python3";
  p.user = "alice";
  p.state = "S";
  h.sample.processes.push_back(p);
  Result r = h.judge();
  ASSERT_EQ(ids(r), V{"gpu-not-clean@2:critical"});
  EXPECT_EQ(r.findings[0].brief, "pid 4242 (python3, alice) uses 8.0 GiB");
  EXPECT_EQ(r.findings[0].finding.pids, std::vector<uint32_t>{4242});
}

TEST(CheckClean, DeadJobsMemoryNamesTheGonePid) {
  Host h;
  list(h, 1, 5200, 41 * GiB);
  ProcessSample p;
  p.pid = 5200;
  p.state = "missing";
  h.sample.processes.push_back(p);
  Result r = h.judge();
  ASSERT_EQ(ids(r), V{"gpu-not-clean@1:critical"});
  EXPECT_EQ(r.findings[0].brief, "holds 41.0 GiB; pid 5200 gone");
}

TEST(CheckClean, MemoryBeyondTheDriversReservation) {
  Host h;
  *h.gpu(0).mem_used_bytes = 900ull << 20;  // a large reservation: clean
  *h.gpu(3).mem_used_bytes = 3 * GiB;       // nobody listed: not clean
  Result r = h.judge();
  ASSERT_EQ(ids(r), V{"gpu-not-clean@3:critical"});
  EXPECT_NE(r.findings[0].brief.find("no process listed"), std::string::npos);
}

TEST(CheckClean, CudaHolderOfTheDeviceFileButNotAnNvmlClient) {
  Host h;
  h.holders.push_back({.pid = 777,
                       .user = "bob",
                       .name = "train",
                       .devices = {"nvidia-uvm", "nvidia2", "nvidiactl"},
                       .libs = {}});
  // An NVML client (maps only the driver's libcuda) and a persistence
  // daemon (no nvidia-uvm) hold device files on every healthy node.
  h.holders.push_back({.pid = 778,
                       .user = "root",
                       .name = "dcgm",
                       .devices = {"nvidia-uvm", "nvidia0", "nvidia2"},
                       .libs = {"libcuda.so.550.54.15"}});
  h.holders.push_back(
      {.pid = 779,
       .user = "root",
       .name = "nvidia-persiste",
       .devices = {"nvidia0", "nvidia1", "nvidia2", "nvidiactl"},
       .libs = {}});
  Result r = h.judge();
  ASSERT_EQ(ids(r), V{"gpu-not-clean@2:critical"});
  EXPECT_EQ(r.findings[0].brief, "pid 777 (train, bob) holds /dev/nvidia2");
  EXPECT_EQ(r.findings[0].finding.pids, std::vector<uint32_t>{777});
}

TEST(CheckClean, OnlyTheGpusAskedForMustBeClean) {
  Host h;
  list(h, 3, 5200, 41 * GiB);
  EXPECT_EQ(h.judge({0, 1}).exit_code(), kExitHealthy);
  EXPECT_EQ(h.judge({1, 3}).exit_code(), kExitUnhealthy);
  // Hardware faults count on every GPU: the node is drained for them.
  Host x;
  x.gpu(3).remapped_rows_pending = true;
  EXPECT_EQ(x.judge({0}).exit_code(), kExitUnhealthy);
}

TEST(CheckClean, GpuAskedForThatNvmlLacksIsMissing) {
  Host h;
  Input in;
  in.header = &h.header;
  in.sample = &h.sample;
  in.all_gpus = false;
  in.absent = {"9"};
  in.holders = h.holders;
  Result r = judge(in);
  ASSERT_EQ(ids(r), V{"gpu-missing@host:critical"});
  EXPECT_EQ(r.findings[0].brief, "GPU 9 not listed by NVML");
}

TEST(CheckClean, UnscannedHoldersAndMissingProcessListsAreNotJudged) {
  Host h;
  h.gpu(1).processes.reset();
  Input in;
  in.header = &h.header;
  in.sample = &h.sample;
  Result r = judge(in);  // holders nullopt: not scanned
  EXPECT_EQ(r.exit_code(), kExitHealthy);
  size_t clean_notes = 0;
  for (const auto& n : r.not_judged) clean_notes += n.id == "gpu-not-clean";
  EXPECT_EQ(clean_notes, 2u);
}

}  // namespace
}  // namespace gd::check::test
