#include "model/pod_label.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

ProcessPod named(const char* ns, const char* name, const char* container) {
  ProcessPod p;
  p.uid = "5f0c1d2e-0000-4000-8000-000000000001";
  p.namespace_ = ns;
  p.name = name;
  if (container) p.container = container;
  return p;
}

TEST(PodLabel, NamesNamespacePodAndContainerAndSaysDeleted) {
  EXPECT_EQ(pod_label(named("ml", "train-0", "main")), "ml/train-0/main");
  EXPECT_EQ(pod_label(named("ml", "train-0", nullptr)), "ml/train-0");
  ProcessPod gone = named("ml", "train-1", "main");
  gone.deleted = true;
  EXPECT_EQ(pod_label(gone), "ml/train-1/main (deleted)");
  ProcessPod uid_only;
  uid_only.uid = "5f0c1d2e-0000-4000-8000-000000000001";
  EXPECT_EQ(pod_label(uid_only), "pod 5f0c1d2e-0000-4000-8000-000000000001");
  EXPECT_EQ(pod_label(std::optional<ProcessPod>()), "");
}

TEST(PodLabel, MatchesByNameNamespaceOrBoth) {
  const std::optional<ProcessPod> p = named("ml", "train-0", "main");
  EXPECT_TRUE(pod_matches(p, "", ""));
  EXPECT_TRUE(pod_matches(p, "train-0", ""));
  EXPECT_TRUE(pod_matches(p, "ml/train-0", ""));
  EXPECT_TRUE(pod_matches(p, "", "ml"));
  EXPECT_TRUE(pod_matches(p, "train-0", "ml"));
  EXPECT_FALSE(pod_matches(p, "train", ""));
  EXPECT_FALSE(pod_matches(p, "infer/train-0", ""));
  EXPECT_FALSE(pod_matches(p, "", "infer"));
  EXPECT_FALSE(pod_matches(p, "train-0", "infer"));
  // Not in a pod, or its names unknown: no filter keeps it.
  EXPECT_FALSE(pod_matches(std::nullopt, "train-0", ""));
  ProcessPod uid_only;
  uid_only.uid = "u";
  EXPECT_FALSE(pod_matches(uid_only, "", "ml"));
  EXPECT_FALSE(pod_matches(uid_only, "train-0", ""));
  EXPECT_TRUE(pod_matches(std::nullopt, "", ""));
}

}  // namespace
}  // namespace gd
