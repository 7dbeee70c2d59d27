#include "common/container_ref.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

const std::string kId64 =
    "3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d";

TEST(ContainerRef, KubernetesSystemdDriver) {
  auto c = container_from_cgroup(
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod6f1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/"
      "cri-containerd-" +
      kId64 + ".scope");
  EXPECT_EQ(c.pod_uid, "6f1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d");
  EXPECT_EQ(c.pod_qos, "burstable");
  EXPECT_EQ(c.runtime, "containerd");
  EXPECT_EQ(c.id, "3c4d5e6f7a8b");
  EXPECT_EQ(c.describe(),
            "k8s pod 6f1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d (burstable), "
            "containerd 3c4d5e6f7a8b");
}

TEST(ContainerRef, KubernetesCgroupfsDriverGuaranteedPod) {
  auto c = container_from_cgroup(
      "/kubepods/pod1a2b3c4d-1111-2222-3333-444455556666/" + kId64);
  EXPECT_EQ(c.pod_uid, "1a2b3c4d-1111-2222-3333-444455556666");
  EXPECT_EQ(c.pod_qos, "guaranteed");
  EXPECT_EQ(c.id, "3c4d5e6f7a8b");
  auto b = container_from_cgroup(
      "/kubepods/besteffort/pod1a2b3c4d-1111-2222-3333-444455556666/" + kId64);
  EXPECT_EQ(b.pod_qos, "besteffort");
}

TEST(ContainerRef, Runtimes) {
  EXPECT_EQ(container_from_cgroup("/docker/" + kId64).describe(),
            "docker 3c4d5e6f7a8b");
  EXPECT_EQ(
      container_from_cgroup("/system.slice/docker-" + kId64 + ".scope").runtime,
      "docker");
  EXPECT_EQ(container_from_cgroup("/machine.slice/libpod-" + kId64 + ".scope")
                .runtime,
            "podman");
  EXPECT_EQ(
      container_from_cgroup("/kubepods.slice/crio-" + kId64 + ".scope").runtime,
      "cri-o");
  EXPECT_EQ(container_from_cgroup("/lxc.payload.build01").describe(),
            "lxc build01");
}

TEST(ContainerRef, HostPathsNameNoContainer) {
  EXPECT_TRUE(
      container_from_cgroup("/user.slice/user-1000.slice/session-3.scope")
          .empty());
  EXPECT_TRUE(
      container_from_cgroup("/system.slice/containerd.service").empty());
  EXPECT_TRUE(container_from_cgroup("/").empty());
  EXPECT_TRUE(container_from_cgroup(std::optional<std::string>()).empty());
}

TEST(ContainerRef, ShortTextOfATableCell) {
  EXPECT_EQ(container_from_cgroup("/system.slice/docker-" + kId64 + ".scope")
                .short_text(),
            "docker:3c4d5e6f7a8b");
  EXPECT_EQ(container_from_cgroup("/kubepods.slice/kubepods-burstable.slice/"
                                  "kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_"
                                  "9c0d_1e2f3a4b5c6d.slice/cri-containerd-" +
                                  kId64 + ".scope")
                .short_text(),
            "k8s-pod:1a2b3c4d-5e6");
  EXPECT_EQ(container_from_cgroup("/user.slice/user-1000.slice/session-3.scope")
                .short_text(),
            "");
}

}  // namespace
}  // namespace gd
