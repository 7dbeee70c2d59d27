#include "serve/serve_config.h"

#include <fmt/format.h>

#include "diagnose/config_files.h"
#include "diagnose/engine.h"

namespace gd {
namespace {

class NoSamples : public SampleSource {
 public:
  bool next(Sample&) override { return false; }
};

}  // namespace

std::shared_ptr<const ServeConfig> load_serve_config(
    const std::string& path, const TraceHeader& header) {
  auto cfg = std::make_shared<ServeConfig>();
  cfg->rules = load_config(path, &cfg->files);
  // Every key is range-checked as it is read; these [alerting] periods are
  // divisors and loop steps, so 0 is out too.
  for (const char* key : {"alerting.window_s", "alerting.evaluate_every_s",
                          "alerting.resend_every_s"})
    if (auto v = cfg->rules.peek(key); v && !(*v > 0))
      throw ConfigError(
          fmt::format("{}: key '{}': {} is out of range "
                      "(more than 0 seconds)",
                      cfg->rules.where(key), key, *v));
  const auto all_keys = cfg->rules.unused_keys();  // nothing asked yet
  try {
    cfg->policy = AlertPolicy::from_config(cfg->rules, all_keys);
  } catch (const std::exception& e) {
    throw ConfigError(cfg->files + ": " + e.what());
  }
  // Let every rule ask for its keys once, to find the ones nobody reads.
  DiagnoseOptions options;
  options.config = cfg->rules;
  NoSamples none;
  // [alerting] keys were asked by from_config, so a typo there shows too.
  cfg->unknown_keys = diagnose(header, none, options).unused_config_keys;
  return cfg;
}

}  // namespace gd
