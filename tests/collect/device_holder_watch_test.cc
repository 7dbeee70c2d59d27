// device_holders is attached only when GPU memory is unaccounted for, and
// the fd scan runs at most once per interval.
#include "collect/device_holder_watch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace gd {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kGiB = 1ull << 30;

// A /proc with pid 4001 holding /dev/nvidia0 and /dev/nvidiactl open and
// pid 4002 holding only a terminal.
class Proc {
 public:
  Proc() {
    char tmpl[] = "/tmp/gd_holder_watch_XXXXXX";
    root_ = mkdtemp(tmpl);
    fd(4001, 3, "/dev/nvidia0");
    fd(4001, 4, "/dev/nvidiactl");
    fd(4002, 0, "/dev/pts/1");
  }
  ~Proc() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }

 private:
  void fd(uint32_t pid, int n, const std::string& target) {
    fs::path dir = fs::path(root_) / std::to_string(pid) / "fd";
    fs::create_directories(dir);
    fs::create_symlink(target, dir / std::to_string(n));
  }
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

TEST(DeviceHolderWatch, ScansAtMostOncePerInterval) {
  Proc proc;
  DeviceHolderWatch watch(proc.root(), "/dev", 30);
  Sample a = sample(60 * kGiB, 40 * kGiB);
  watch.attach(a, 100);
  EXPECT_TRUE(a.device_holders.has_value());
  Sample b = sample(60 * kGiB, 40 * kGiB);
  watch.attach(b, 101);  // the next 1 Hz sample: no scan
  EXPECT_FALSE(b.device_holders.has_value());
  Sample c = sample(60 * kGiB, 40 * kGiB);
  watch.attach(c, 130);
  EXPECT_TRUE(c.device_holders.has_value());
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
