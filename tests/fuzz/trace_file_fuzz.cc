// A whole trace file (plain or zstd, recognised by its magic number) through
// TraceReader, the way `diagnose --from` reads it. The reader either throws
// TraceError naming the file (one line) or yields samples in time order,
// each of which the writer accepts back; a trace that reads completely is
// written out again and must read back to the same header and samples.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "trace/trace_io.h"

namespace {

std::string temp_path(const char* tag) {
  return "/tmp/gd_trace_file_fuzz." + std::to_string(getpid()) + tag;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr, path);
  if (size) FUZZ_CHECK(std::fwrite(data, 1, size, f) == size, path);
  std::fclose(f);
}

struct Trace {
  std::string header;
  std::vector<std::string> samples;
};

// Reads `path` completely; false when the reader rejected it.
bool read_trace(const std::string& path, Trace& out) {
  try {
    gd::TraceReader reader(path);
    out.header = gd::header_to_json(reader.header());
    gd::Sample s;
    double last_t = 0;
    while (reader.next(s)) {
      FUZZ_CHECK(out.samples.empty() || s.t >= last_t, "t went back");
      last_t = s.t;
      out.samples.push_back(gd::sample_to_json(s));
    }
    return true;
  } catch (const gd::TraceError& e) {
    const std::string_view what = e.what();
    FUZZ_CHECK(what.rfind(path, 0) == 0, what);
    FUZZ_CHECK(gd::fuzz::one_line(what), what);
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = temp_path(".in");
  write_file(in, data, size);
  Trace first;
  if (read_trace(in, first)) {
    // Write what was read, read it back: the same trace.
    const std::string out = temp_path(".out.jsonl");
    {
      gd::TraceWriter writer(out);
      writer.write_header(gd::header_from_json(first.header, "header"));
      for (const auto& line : first.samples)
        writer.write_sample(gd::sample_from_json(line, "sample"));
      writer.close();
    }
    Trace second;
    FUZZ_CHECK(read_trace(out, second), "a written trace reads back");
    FUZZ_CHECK(second.header == first.header, second.header);
    FUZZ_CHECK(second.samples == first.samples, "samples differ");
    std::remove(out.c_str());
  }
  std::remove(in.c_str());
  return 0;
}
