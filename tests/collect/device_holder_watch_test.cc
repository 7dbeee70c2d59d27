// device_holders is attached only when GPU memory is unaccounted for, and
// the fd scan runs at most once per interval.
#include "collect/device_holder_watch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gd {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kGiB = 1ull << 30;

// A /proc with pid 4001 (alive) holding /dev/nvidia0 and /dev/nvidiactl
// open and pid 4002 holding only a terminal.
class Proc {
 public:
  Proc() {
    char tmpl[] = "/tmp/gd_holder_watch_XXXXXX";
    root_ = mkdtemp(tmpl);
    stat(4001, 'S');
    fd(4001, 3, "/dev/nvidia0");
    fd(4001, 4, "/dev/nvidiactl");
    fd(4002, 0, "/dev/pts/1");
  }
  ~Proc() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }

  void fd(uint32_t pid, int n, const std::string& target) {
    fs::path dir = fs::path(root_) / std::to_string(pid) / "fd";
    fs::create_directories(dir);
    fs::create_symlink(target, dir / std::to_string(n));
  }
  void stat(uint32_t pid, char state) {
    fs::path dir = fs::path(root_) / std::to_string(pid);
    fs::create_directories(dir);
    std::ofstream(dir / "stat")
        << pid << " (python) " << state
        << " 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 100 0 0\n";
  }
  void remove(uint32_t pid) {
    fs::remove_all(fs::path(root_) / std::to_string(pid));
  }

 private:
  std::string root_;
};

// One GPU using `used` bytes; NVML lists one process using `listed`.
Sample sample(uint64_t used, uint64_t listed) {
  Sample s;
  GpuSample g;
  g.index = 0;
  g.mem_used_bytes = used;
  g.processes = std::vector<GpuProcess>{{4001, listed, "compute"}};
  s.gpus.push_back(g);
  return s;
}

TEST(DeviceHolderWatch, AbsentWhenMemoryIsAccountedFor) {
  Proc proc;
  DeviceHolderWatch watch(proc.root());
  // 40 GiB listed of 40.5 GiB used: the rest is the driver's reservation.
  Sample s = sample(40 * kGiB + kGiB / 2, 40 * kGiB);
  watch.attach(s, 100);
  EXPECT_FALSE(s.device_holders.has_value());
}

TEST(DeviceHolderWatch, HoldersWhenMemoryIsUnaccountedFor) {
  Proc proc;
  DeviceHolderWatch watch(proc.root());
  Sample s = sample(60 * kGiB, 40 * kGiB);  // 20 GiB nobody listed holds
  watch.attach(s, 100);
  ASSERT_TRUE(s.device_holders.has_value());
  ASSERT_EQ(s.device_holders->size(), 1u);
  EXPECT_EQ((*s.device_holders)[0].pid, 4001u);
  EXPECT_EQ((*s.device_holders)[0].devices,
            (std::vector<std::string>{"nvidia0", "nvidiactl"}));
}

TEST(DeviceHolderWatch, ScansEveryoneAtMostOncePerIntervalAndKnownOnesBetween) {
  Proc proc;
  DeviceHolderWatch watch(proc.root(), "/dev", 30);
  Sample a = sample(60 * kGiB, 40 * kGiB);
  watch.attach(a, 100);
  ASSERT_TRUE(a.device_holders.has_value());
  EXPECT_EQ(a.device_holders->size(), 1u);
  // A new holder appears; the next 1 Hz sample looks at the known holders
  // only (their fds), so it is seen at the next full scan.
  proc.stat(4003, 'S');
  proc.fd(4003, 5, "/dev/nvidia0");
  Sample b = sample(60 * kGiB, 40 * kGiB);
  watch.attach(b, 101);
  ASSERT_TRUE(b.device_holders.has_value());
  EXPECT_EQ(b.device_holders->size(), 1u);
  Sample c = sample(60 * kGiB, 40 * kGiB);
  watch.attach(c, 130);
  ASSERT_TRUE(c.device_holders.has_value());
  EXPECT_EQ(c.device_holders->size(), 2u);
  // Once the memory is accounted for, nothing is looked at.
  Sample d = sample(40 * kGiB, 40 * kGiB);
  watch.attach(d, 131);
  EXPECT_FALSE(d.device_holders.has_value());
}

// NVML still lists a dead owner's pid with its memory: used equals listed,
// but nobody live accounts for it. The forked child that inherited the
// device files (nvidia-uvm: a CUDA client) is returned so that the sample
// carries its process entry; an NVML-only holder is not.
TEST(DeviceHolderWatch, DeadListedOwnerIsLookedIntoAndItsHolderCarried) {
  Proc proc;
  proc.stat(4300, 'S');
  proc.fd(4300, 3, "/dev/nvidia0");
  proc.fd(4300, 4, "/dev/nvidia-uvm");
  DeviceHolderWatch watch(proc.root());
  Sample s;
  GpuSample g;
  g.index = 0;
  g.mem_used_bytes = 6 * kGiB;
  g.processes = std::vector<GpuProcess>{{4242, 6 * kGiB, "compute"}};
  s.gpus.push_back(g);
  auto carry = watch.attach(s, 100);
  ASSERT_TRUE(s.device_holders.has_value());
  EXPECT_EQ(s.device_holders->size(), 2u);
  EXPECT_EQ(carry, std::vector<uint32_t>{4300});

  // A zombie owner counts as dead too; a live one does not.
  proc.stat(4242, 'Z');
  DeviceHolderWatch zombie(proc.root());
  Sample z = s;
  zombie.attach(z, 100);
  EXPECT_TRUE(z.device_holders.has_value());
  proc.stat(4242, 'S');
  DeviceHolderWatch live(proc.root());
  Sample l = s;
  EXPECT_TRUE(live.attach(l, 100).empty());
  EXPECT_FALSE(l.device_holders.has_value());
}

// status's text asks only about the processes whose membership in a GPU
// job could change the other work it shows: their fds alone are read.
TEST(DeviceHolderWatch, UnlistedCudaHolderAmongGivenPidsOnly) {
  Proc proc;
  proc.stat(4300, 'S');
  proc.fd(4300, 4, "/dev/nvidia-uvm");
  DeviceHolderWatch watch(proc.root());
  Sample s = sample(60 * kGiB, 40 * kGiB);
  EXPECT_TRUE(watch.memory_orphaned(s.gpus));
  EXPECT_FALSE(watch.memory_orphaned(sample(40 * kGiB, 40 * kGiB).gpus));
  // 4001 holds nvidia0 and nvidiactl (no CUDA file), 4002 a terminal.
  EXPECT_FALSE(watch.any_unlisted_cuda_holder(s, {4001, 4002}));
  EXPECT_FALSE(watch.any_unlisted_cuda_holder(s, {}));
  EXPECT_TRUE(watch.any_unlisted_cuda_holder(s, {4002, 4300}));
  // One NVML lists is a GPU process already, not a holder to carry.
  (*s.gpus[0].processes)[0].pid = 4300;
  EXPECT_FALSE(watch.any_unlisted_cuda_holder(s, {4002, 4300}));
}

TEST(DeviceHolderWatch, UnknownUsageCannotBeAccounted) {
  std::vector<GpuSample> gpus = sample(60 * kGiB, 40 * kGiB).gpus;
  EXPECT_TRUE(gpu_memory_unaccounted(gpus, kGiB));
  (*gpus[0].processes)[0].used_bytes.reset();
  EXPECT_FALSE(gpu_memory_unaccounted(gpus, kGiB));
  gpus[0].processes.reset();
  EXPECT_FALSE(gpu_memory_unaccounted(gpus, kGiB));
}

}  // namespace
}  // namespace gd
