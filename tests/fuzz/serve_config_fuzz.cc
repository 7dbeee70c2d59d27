// The TOML config of `serve` (rule thresholds and [alerting]), loaded from a
// file as SIGHUP reloads it: rejected with one line "PATH:..." (a
// std::runtime_error, nothing else), or accepted with an alert policy the
// tracker can use (positive finite intervals, `for` times >= 0).
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "serve/serve_config.h"
#include "trace/trace_io.h"

namespace {

const gd::TraceHeader& scenario_header() {
  static const gd::TraceHeader header =
      gd::TraceReader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl")
          .header();
  return header;
}

bool positive(double v) { return std::isfinite(v) && v > 0; }
bool for_time(double v) { return !std::isnan(v) && v >= 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const gd::TraceHeader& header = scenario_header();
  const std::string path =
      "/tmp/gd_serve_config_fuzz." + std::to_string(getpid()) + ".toml";
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr, path);
  if (size) FUZZ_CHECK(std::fwrite(data, 1, size, f) == size, path);
  std::fclose(f);
  try {
    auto cfg = gd::load_serve_config(path, header);
    const gd::AlertPolicy& p = cfg->policy;
    FUZZ_CHECK(positive(p.window_s) && positive(p.evaluate_every_s) &&
                   positive(p.resend_every_s),
               path);
    FUZZ_CHECK(for_time(p.for_critical_s) && for_time(p.for_warning_s) &&
                   for_time(p.for_info_s),
               path);
    for (const auto& [id, v] : p.for_by_id) FUZZ_CHECK(for_time(v), id);
  } catch (const std::runtime_error& e) {
    const std::string_view what = e.what();
    FUZZ_CHECK(what.rfind(path, 0) == 0, what);
    FUZZ_CHECK(gd::fuzz::one_line(what), what);
  }
  std::remove(path.c_str());
  return 0;
}
