// The TOML site policy of `diagnose --config`: rejected with one line
// "fuzz.toml:LINE:COL: what" (a std::runtime_error, nothing else), or
// accepted with every threshold a finite number that reads back.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "diagnose/config.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gd::Config config;
  try {
    config = gd::Config::from_toml_string(text, "fuzz.toml");
  } catch (const std::runtime_error& e) {
    const std::string_view what = e.what();
    FUZZ_CHECK(what.rfind("fuzz.toml:", 0) == 0, what);
    FUZZ_CHECK(gd::fuzz::one_line(what), what);
    return 0;
  }
  // Keys may be anything TOML allows, even '' (reported as unknown later).
  for (const std::string& key : config.unused_keys()) {
    const double v = config.get(key, NAN);
    FUZZ_CHECK(std::isfinite(v), key);
  }
  FUZZ_CHECK(config.unused_keys().empty(), text);
  return 0;
}
