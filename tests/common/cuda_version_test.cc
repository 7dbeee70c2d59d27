#include "common/cuda_version.h"

#include <gtest/gtest.h>

namespace gd {

TEST(ParseCudaVersion, MajorMinorPatch) {
  auto v = parse_cuda_version("12.4.99");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 12);
  EXPECT_EQ(v->minor, 4);
  v = parse_cuda_version("12");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 12);
  EXPECT_EQ(v->minor, -1);
  EXPECT_FALSE(parse_cuda_version(""));
  EXPECT_FALSE(parse_cuda_version("12."));
  EXPECT_FALSE(parse_cuda_version("12.x"));
  EXPECT_FALSE(parse_cuda_version("-1.0"));
}

TEST(CudaRuntimeVersion, EverySpellingOfLibcudart) {
  EXPECT_EQ(cuda_runtime_version({"libcudart.so.12.1.105"}), "12.1");
  EXPECT_EQ(cuda_runtime_version({"libcuda.so.1", "libcudart.so.11.0"}),
            "11.0");
  EXPECT_EQ(cuda_runtime_version({"libcudart.so.12"}), "12");
  // pip wheels (PyTorch) vendor a hashed copy.
  EXPECT_EQ(cuda_runtime_version({"libcudart-d0da41ae.so.11.0"}), "11.0");
  EXPECT_EQ(cuda_runtime_version({"/opt/venv/lib/python3.11/site-packages/"
                                  "nvidia/cuda_runtime/lib/libcudart.so.12"}),
            "12");
}

TEST(CudaRuntimeVersion, OtherLibrariesAreNotTheRuntime) {
  EXPECT_EQ(cuda_runtime_version({"libcudart_static.so.12.1"}), "");
  EXPECT_EQ(cuda_runtime_version({"libcudart.so"}), "");
  EXPECT_EQ(cuda_runtime_version({"libcuda.so.535.129.03", "libnccl.so.2"}),
            "");
  EXPECT_FALSE(cudart_version("libcudadebugger.so.1"));
}

}  // namespace gd
