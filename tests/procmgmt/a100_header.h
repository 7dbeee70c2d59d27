// The trace header the procmgmt tests share: one 80 GiB A100 as GPU 0.
#pragma once

#include <string>

#include "model/sample.h"

namespace gd::test {

inline TraceHeader a100_header(const std::string& pid_namespace = "host") {
  TraceHeader h;
  h.host.pid_namespace = pid_namespace;
  GpuInfo g;
  g.index = 0;
  g.name = "NVIDIA A100-SXM4-80GB";
  g.memory_total_bytes = 80ull << 30;
  h.gpus.push_back(g);
  return h;
}

}  // namespace gd::test
