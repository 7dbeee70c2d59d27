// One trace line, parsed as a sample line and as a header line. A line is
// either rejected with a TraceError naming where ("fuzz:N: ...", one line)
// or accepted; what is accepted must serialise, and the serialisation must
// parse back to the same value (compared by serialising it once more: the
// writer prints every field, so equal text means equal values). A read of
// a few fields (what `report --from` asks for) rejects only what the full
// parser rejects, and of a line the full parser accepts it gives the full
// sample's values of those fields.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "../trace/sample_projection.h"
#include "fuzz_check.h"
#include "trace/trace_io.h"

namespace {

void check_error(const gd::TraceError& e, const char* where) {
  const std::string_view what = e.what();
  FUZZ_CHECK(what.rfind(where, 0) == 0, what);
  FUZZ_CHECK(gd::fuzz::one_line(what), what);
}

void sample_round_trip(std::string_view line) {
  // Readers reuse one Sample across lines, also after a rejected line.
  static gd::Sample reused;
  gd::Sample s;
  try {
    gd::sample_from_json(line, "fuzz:2", reused);
    s = gd::sample_from_json(line, "fuzz:2");
  } catch (const gd::TraceError& e) {
    check_error(e, "fuzz:2");
    return;
  }
  FUZZ_CHECK(gd::sample_to_json(reused) == gd::sample_to_json(s), line);
  const std::string once = gd::sample_to_json(s);
  FUZZ_CHECK(gd::fuzz::one_line(once), once);
  gd::Sample again;
  try {
    again = gd::sample_from_json(once, "fuzz:2");
  } catch (const gd::TraceError& e) {
    FUZZ_CHECK(!"an accepted sample re-parses", e.what());
  }
  const std::string twice = gd::sample_to_json(again);
  FUZZ_CHECK(once == twice, once + "\n  !=\n  " + twice);
  // Parsing into reused storage gives the same as a fresh parse.
  gd::sample_from_json(once, "fuzz:2", again);
  FUZZ_CHECK(gd::sample_to_json(again) == once, once);
}

void fields_read(std::string_view line) {
  static const gd::SampleFields kAccounted{
      .gpu = {"util_pct", "power_w", "energy_mj_total", "sm_active_pct"},
      .gpu_processes = true,
      .process_tree = true};
  static gd::Sample reused;
  bool full_ok = true;
  gd::Sample full;
  try {
    full = gd::sample_from_json(line, "fuzz:2");
  } catch (const gd::TraceError&) {
    full_ok = false;
  }
  try {
    gd::sample_fields_from_json(line, "fuzz:2", kAccounted, reused);
  } catch (const gd::TraceError& e) {
    check_error(e, "fuzz:2");
    FUZZ_CHECK(!full_ok,
               std::string("a line the full parser reads: ") + e.what());
    return;
  }
  // A line the walk does not read as asked is read whole: compared on the
  // fields asked for.
  if (full_ok)
    FUZZ_CHECK(gd::sample_to_json(gd::testing::projected(reused, kAccounted)) ==
                   gd::sample_to_json(gd::testing::projected(full, kAccounted)),
               line);
}

void header_round_trip(std::string_view line) {
  gd::TraceHeader h;
  try {
    h = gd::header_from_json(line, "fuzz:1");
  } catch (const gd::TraceError& e) {
    check_error(e, "fuzz:1");
    return;
  }
  const std::string once = gd::header_to_json(h);
  FUZZ_CHECK(gd::fuzz::one_line(once), once);
  gd::TraceHeader again;
  try {
    again = gd::header_from_json(once, "fuzz:1");
  } catch (const gd::TraceError& e) {
    FUZZ_CHECK(!"an accepted header re-parses", e.what());
  }
  const std::string twice = gd::header_to_json(again);
  FUZZ_CHECK(once == twice, once + "\n  !=\n  " + twice);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  sample_round_trip(line);
  fields_read(line);
  header_round_trip(line);
  return 0;
}
