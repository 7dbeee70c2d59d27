// libFuzzer target for the trace-line parsers (built only with -DGD_FUZZ=ON,
// which needs clang). Run, for example:
//
//   CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DGD_FUZZ=ON \
//       -DGD_BUILD_BENCH=OFF
//   cmake --build build-fuzz --target fuzz_trace_line
//   mkdir -p /tmp/trace-corpus
//   build-fuzz/tests/trace/fuzz_trace_line /tmp/trace-corpus -max_total_time=300
//
// Every input is parsed as a sample line and as a header line; anything but
// returning or throwing TraceError (a crash, a sanitizer report, another
// exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  try {
    gd::Sample s = gd::sample_from_json(line, "fuzz:2");
    // What was read must be writable and read back.
    (void)gd::sample_from_json(gd::sample_to_json(s), "fuzz:2");
  } catch (const gd::TraceError&) {
  }
  try {
    gd::TraceHeader h = gd::header_from_json(line, "fuzz:1");
    (void)gd::header_from_json(gd::header_to_json(h), "fuzz:1");
  } catch (const gd::TraceError&) {
  }
  return 0;
}
