// The kubelet's and the runtime's answers as gpudoctor keeps them: replicas
// split off device ids, containers found by their cgroup's id, a pod the
// runtime lists but the kubelet no longer does, and hostile replies capped.
#include "pods/pod_snapshot.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pods/pods_limits.h"

namespace gd::pods {
namespace {

const char* kReply = R"({
 "kubelet": {"error": null,
  "allocatable": [{"resource": "nvidia.com/gpu", "ids": ["GPU-a", "GPU-b"]}],
  "pods": [
   {"namespace": "ml", "name": "train-0", "containers": [
     {"name": "main", "devices": [{"resource": "nvidia.com/gpu",
                                   "ids": ["GPU-a::0", "GPU-a::1"]}]}]},
   {"namespace": "ml", "name": "idle-1", "containers": [
     {"name": "sleep", "devices": [{"resource": "nvidia.com/gpu",
                                    "ids": ["GPU-b"]}]}]}]},
 "runtime": {"error": null,
  "sandboxes": [{"id": "s1", "uid": "u-1", "namespace": "ml",
                 "name": "train-0", "ready": true},
                {"id": "s9", "uid": "u-9", "namespace": "ml",
                 "name": "gone-9", "ready": false}],
  "containers": [{"id": "0123456789abcdef0123", "sandbox_id": "s1",
                  "name": "main", "running": true}]}})";

TEST(PodSnapshot, SplitReplicaTakesOnlyANumberAfterTheLastDoubleColon) {
  EXPECT_EQ(split_replica("GPU-a::3"),
            std::make_pair(std::string("GPU-a"), std::optional<int>(3)));
  EXPECT_EQ(split_replica("GPU-a").second, std::nullopt);
  EXPECT_EQ(split_replica("GPU-a::").first, "GPU-a::");
  EXPECT_EQ(split_replica("GPU-a::x").first, "GPU-a::x");
  EXPECT_EQ(split_replica("GPU-a::-1").second, std::nullopt);
  EXPECT_EQ(split_replica("MIG-b::12").second, 12);
}

TEST(PodSnapshot, AllocationsNameTheirPodContainerAndReplica) {
  PodSnapshot s = parse_pod_snapshot(kReply);
  EXPECT_TRUE(s.kubelet_asked && s.runtime_asked);
  EXPECT_EQ(s.kubelet_error, "");
  ASSERT_EQ(s.allocations.size(), 3u);
  EXPECT_EQ(s.allocations[0].id, "GPU-a");
  EXPECT_EQ(s.allocations[0].replica, 0);
  EXPECT_EQ(s.allocations[1].replica, 1);
  EXPECT_EQ(s.allocations[0].pod.text(), "ml/train-0/main");
  EXPECT_EQ(s.allocations[2].pod.text(), "ml/idle-1/sleep");
  EXPECT_EQ(s.allocatable, (std::vector<std::string>{"GPU-a", "GPU-b"}));
}

TEST(PodSnapshot, ACgroupsContainerIdFindsItsPodAndContainer) {
  PodSnapshot s = parse_pod_snapshot(kReply);
  ContainerRef ref;
  ref.runtime = "containerd";
  ref.id = "0123456789ab";  // the cgroup's first 12 characters
  ref.pod_uid = "u-1";
  auto pod = s.pod_of(ref);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->text(), "ml/train-0/main");
  EXPECT_EQ(pod->uid, "u-1");
  EXPECT_TRUE(s.kubelet_lists(*pod));
}

TEST(PodSnapshot, APodTheKubeletNoLongerListsIsKnownByItsUid) {
  PodSnapshot s = parse_pod_snapshot(kReply);
  ContainerRef ref;
  ref.pod_uid = "u-9";
  auto gone = s.pod_of(ref);
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->name, "gone-9");
  EXPECT_FALSE(s.kubelet_lists(*gone));
  ref.pod_uid = "u-unknown";  // neither service knows it
  auto unknown = s.pod_of(ref);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->uid, "u-unknown");
  EXPECT_EQ(unknown->text(), "?/?");
  EXPECT_FALSE(s.pod_of(ContainerRef{}));  // not a pod
}

TEST(PodSnapshot, ErrorsAndGarbageLeaveAnEmptySnapshotThatSaysWhy) {
  PodSnapshot s = parse_pod_snapshot(
      R"({"kubelet": {"error": "List: 4 Deadline Exceeded", "pods": []}})");
  EXPECT_TRUE(s.kubelet_asked);
  EXPECT_FALSE(s.runtime_asked);
  EXPECT_EQ(s.kubelet_error, "List: 4 Deadline Exceeded");
  for (const char* bad :
       {"", "[", "42", R"({"kubelet": 7})",
        R"({"kubelet": {"pods": [1, "x", {"containers": 3}]}})",
        R"({"runtime": {"containers": [{"id": 5}]}})"}) {
    PodSnapshot g = parse_pod_snapshot(bad);
    EXPECT_TRUE(g.allocations.empty()) << bad;
    EXPECT_TRUE(g.containers.empty()) << bad;
  }
}

TEST(PodSnapshot, HugeRepliesAreCapped) {
  nlohmann::json pods = nlohmann::json::array();
  for (size_t i = 0; i < kMaxPods + 50; ++i)
    pods.push_back({{"namespace", "ns"},
                    {"name", std::string(1000, 'p')},
                    {"containers",
                     {{{"name", "c"},
                       {"devices",
                        {{{"resource", "nvidia.com/gpu"},
                          {"ids", {"GPU-" + std::to_string(i)}}}}}}}}});
  PodSnapshot s =
      parse_pod_snapshot(nlohmann::json{{"kubelet", {{"pods", pods}}}}.dump());
  EXPECT_EQ(s.allocations.size(), kMaxPods);
  EXPECT_EQ(s.allocations[0].pod.name.size(), kMaxName);
}

}  // namespace
}  // namespace gd::pods
