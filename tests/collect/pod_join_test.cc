#include "collect/pod_join.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

constexpr const char* kUid = "5f0c1d2e-1111-4222-8333-444455556666";
constexpr const char* kContainer =
    "3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d";

// The systemd driver's cgroup v2 path of a burstable pod's container.
std::string cgroup_of(const std::string& uid, const std::string& container) {
  std::string u = uid;
  for (char& c : u)
    if (c == '-') c = '_';
  return "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + u +
         ".slice/cri-containerd-" + container + ".scope";
}

pods::PodSnapshot answered() {
  pods::PodSnapshot s;
  s.kubelet_asked = s.runtime_asked = true;
  pods::PodName train{kUid, "ml", "train-0", "main"};
  s.containers[std::string(kContainer).substr(0, 12)] = train;
  s.pods_by_uid[kUid] = {kUid, "ml", "train-0", ""};
  s.kubelet_pods.insert("ml/train-0");
  return s;
}

TEST(PodJoin, NotInAPodIsNoPod) {
  const auto snap = answered();
  EXPECT_FALSE(process_pod(std::nullopt, &snap));
  EXPECT_FALSE(process_pod(std::string("/user.slice/session-1.scope"), &snap));
  EXPECT_FALSE(process_pod(std::string("/docker/") + kContainer, &snap));
}

TEST(PodJoin, TheRuntimeNamesTheContainerAndTheKubeletSaysItLives) {
  const auto snap = answered();
  const auto pod = process_pod(cgroup_of(kUid, kContainer), &snap);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->uid, kUid);
  EXPECT_EQ(pod->namespace_, "ml");
  EXPECT_EQ(pod->name, "train-0");
  EXPECT_EQ(pod->container, "main");
  EXPECT_EQ(pod->deleted, false);
}

TEST(PodJoin, NothingReadGivesTheCgroupsUidAlone) {
  const auto pod = process_pod(cgroup_of(kUid, kContainer), nullptr);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->uid, kUid);
  EXPECT_FALSE(pod->name);
  EXPECT_FALSE(pod->namespace_);
  EXPECT_FALSE(pod->deleted);  // nobody asked: unknown, not "alive"
}

TEST(PodJoin, APodTheKubeletDroppedIsDeleted) {
  auto snap = answered();
  snap.kubelet_pods.clear();
  const auto pod = process_pod(cgroup_of(kUid, kContainer), &snap);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->name, "train-0");
  EXPECT_EQ(pod->deleted, true);
}

TEST(PodJoin, APodNobodyListsIsDeletedOnlyWhenTheRuntimeAnswered) {
  auto snap = answered();
  snap.containers.clear();
  snap.pods_by_uid.clear();
  auto pod = process_pod(cgroup_of(kUid, kContainer), &snap);
  ASSERT_TRUE(pod);
  EXPECT_FALSE(pod->name);
  EXPECT_EQ(pod->deleted, true);
  snap.runtime_error = "ListPodSandbox: deadline exceeded";
  pod = process_pod(cgroup_of(kUid, kContainer), &snap);
  ASSERT_TRUE(pod);
  EXPECT_FALSE(pod->deleted);  // the runtime did not answer: unknown
}

TEST(PodJoin, AFailedKubeletCannotSayDeleted) {
  auto snap = answered();
  snap.kubelet_pods.clear();
  snap.kubelet_error = "List: unavailable";
  const auto pod = process_pod(cgroup_of(kUid, kContainer), &snap);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->name, "train-0");
  EXPECT_FALSE(pod->deleted);
}

}  // namespace
}  // namespace gd
