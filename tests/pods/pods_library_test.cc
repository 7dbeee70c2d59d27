// libgpudoctor-pods.so loaded as gpudoctor loads it, reading a kubelet and
// a container runtime over real Unix sockets (fake_kubelet.py, the same
// .proto files): the join, a deleted pod, a hung kubelet bounded by the
// deadline, no sockets at all.
#include "pods/pods_library.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "pods/pod_directory.h"

namespace gd::pods {
namespace {

namespace fs = std::filesystem;

class FakeKubelet {
 public:
  explicit FakeKubelet(const std::string& state) {
    dir_ =
        fs::temp_directory_path() / ("pods_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "state.json") << state;
    sockets.pod_resources = (dir_ / "kubelet.sock").string();
    sockets.cri = (dir_ / "cri.sock").string();
    std::string cmd = std::string(GD_GRPC_PYTHON) + " " + GD_FAKE_KUBELET +
                      " --state " + (dir_ / "state.json").string() +
                      " --pod-resources " + sockets.pod_resources + " --cri " +
                      sockets.cri + " & echo $!; wait";
    pipe_ = ::popen(cmd.c_str(), "r");
    char line[64] = {};
    if (pipe_ && std::fgets(line, sizeof line, pipe_)) pid_ = std::atoi(line);
    if (pipe_ && std::fgets(line, sizeof line, pipe_))
      ready_ = true;  // "ready"
  }
  ~FakeKubelet() {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
    if (pipe_) ::pclose(pipe_);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  void rewrite(const std::string& state) {
    std::ofstream(dir_ / "state.json.new") << state;
    fs::rename(dir_ / "state.json.new", dir_ / "state.json");
  }
  bool ready() const { return ready_; }
  PodSockets sockets;

 private:
  fs::path dir_;
  FILE* pipe_ = nullptr;
  pid_t pid_ = 0;
  bool ready_ = false;
};

const char* kState = R"({
 "allocatable": [{"resource": "nvidia.com/gpu", "ids": ["GPU-a", "GPU-b"]}],
 "pods": [
  {"namespace": "ml", "name": "train-0", "uid": "u-1", "sandbox_id": "s1",
   "containers": [{"name": "main", "id": "0123456789abcdef0123456789abcdef",
                   "devices": [{"resource": "nvidia.com/gpu",
                                "ids": ["GPU-a::0"]}]}]},
  {"namespace": "ml", "name": "gone-9", "uid": "u-9", "sandbox_id": "s9",
   "runtime_only": true,
   "containers": [{"name": "c", "id": "fedcba9876543210fedcba9876543210"}]}]})";

class PodsLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("GPUDOCTOR_PODS_LIB", GD_PODS_LIB, 1); }
};

TEST_F(PodsLibraryTest, ReadsBothServicesAndJoinsAContainerToItsPod) {
  FakeKubelet k(kState);
  ASSERT_TRUE(k.ready()) << "fake_kubelet.py did not start (" GD_GRPC_PYTHON
                            " needs python3-grpcio and python3-grpc-tools)";
  PodsLibrary lib;
  PodSnapshot s = lib.read(k.sockets, std::chrono::milliseconds(2000));
  EXPECT_EQ(s.kubelet_error, "");
  EXPECT_EQ(s.runtime_error, "");
  ASSERT_EQ(s.allocations.size(), 1u);
  EXPECT_EQ(s.allocations[0].id, "GPU-a");
  EXPECT_EQ(s.allocations[0].replica, 0);
  EXPECT_EQ(s.allocations[0].pod.text(), "ml/train-0/main");
  ContainerRef ref;
  ref.id = "0123456789ab";
  ASSERT_TRUE(s.pod_of(ref));
  EXPECT_EQ(s.pod_of(ref)->text(), "ml/train-0/main");
  ContainerRef gone;
  gone.id = "fedcba987654";
  ASSERT_TRUE(s.pod_of(gone));
  EXPECT_EQ(s.pod_of(gone)->name, "gone-9");
  EXPECT_FALSE(s.kubelet_lists(*s.pod_of(gone)));  // deleted from the kubelet
}

TEST_F(PodsLibraryTest, AHungKubeletCostsTheDeadlineAndSaysSo) {
  std::string slow = kState;
  slow.insert(slow.rfind('}'), R"(, "faults": {"delay_s": 30})");
  FakeKubelet k(slow);
  ASSERT_TRUE(k.ready());
  PodsLibrary lib;
  auto start = std::chrono::steady_clock::now();
  PodSnapshot s = lib.read(k.sockets, std::chrono::milliseconds(300));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_NE(s.kubelet_error.find("Deadline"), std::string::npos)
      << s.kubelet_error;
  EXPECT_TRUE(s.allocations.empty());
}

TEST_F(PodsLibraryTest, NoSocketsLoadsNothingAndAMissingLibrarySaysWhy) {
  PodsLibrary lib;
  PodSnapshot none = lib.read(PodSockets{}, std::chrono::milliseconds(100));
  EXPECT_FALSE(none.kubelet_asked || none.runtime_asked);
  EXPECT_EQ(none.kubelet_error, "");
  ::setenv("GPUDOCTOR_PODS_LIB", "/nonexistent/libgpudoctor-pods.so", 1);
  PodsLibrary missing;
  PodSnapshot s =
      missing.read(PodSockets{"/x.sock", ""}, std::chrono::milliseconds(100));
  EXPECT_NE(s.kubelet_error.find("cannot load libgpudoctor-pods.so"),
            std::string::npos)
      << s.kubelet_error;
}

TEST_F(PodsLibraryTest,
       TheDirectoryFollowsADeletedPodAndKeepsTheLastGoodReading) {
  FakeKubelet k(kState);
  ASSERT_TRUE(k.ready());
  using namespace std::chrono_literals;
  PodDirectory dir(k.sockets, 2000ms, 100ms);
  auto first = dir.first(PodDirectory::Clock::now() + 10s);
  ASSERT_TRUE(first.snapshot);
  EXPECT_EQ(first.snapshot->allocations.size(), 1u);
  // The pod is deleted: a later reading no longer lists it.
  k.rewrite(R"({"pods": []})");
  auto until = PodDirectory::Clock::now() + 10s;
  while (dir.latest().snapshot->allocations.size() == 1 &&
         PodDirectory::Clock::now() < until)
    std::this_thread::sleep_for(20ms);
  auto after = dir.latest();
  EXPECT_TRUE(after.snapshot->allocations.empty());
  EXPECT_GT(after.at, first.at);
  // The kubelet fails: the last good reading stays, and ages.
  k.rewrite(R"({"pods": [], "faults": {"fail": true}})");
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(dir.latest().snapshot->kubelet_error, "");
  EXPECT_LE(dir.latest().at, PodDirectory::Clock::now() - 300ms);
}

TEST(PodDirectory, WithoutSocketsItStartsNothingAndAnswersAtOnce) {
  PodDirectory dir(PodSockets{});
  EXPECT_FALSE(dir.on_kubernetes());
  auto r = dir.first(PodDirectory::Clock::now() + std::chrono::seconds(10));
  EXPECT_FALSE(r.snapshot);
}

}  // namespace
}  // namespace gd::pods
