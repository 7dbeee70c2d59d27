#include "serve/serve_config.h"

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
  if (!path.empty()) cfg->rules = Config::from_toml_file(path);
  const auto all_keys = cfg->rules.unused_keys();  // nothing asked yet
  try {
    cfg->policy = AlertPolicy::from_config(cfg->rules, all_keys);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
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
