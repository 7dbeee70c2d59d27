// The TOML config of `serve`: rule thresholds (diagnose/config.h) and the
// [alerting] section (alerting.h) in one file; reloaded on SIGHUP.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "diagnose/config.h"
#include "model/sample.h"
#include "serve/alerting.h"

namespace gd {

struct ServeConfig {
  Config rules;
  AlertPolicy policy;
  // Keys that neither a rule nor [alerting] knows (likely typos).
  std::vector<std::string> unknown_keys;
};

// "" = defaults. Throws std::runtime_error "FILE:LINE:COL: what" (one line).
std::shared_ptr<const ServeConfig> load_serve_config(const std::string& path,
                                                     const TraceHeader& header);

class ConfigHolder {
 public:
  explicit ConfigHolder(std::shared_ptr<const ServeConfig> c)
      : current_(std::move(c)) {}
  std::shared_ptr<const ServeConfig> get() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  void set(std::shared_ptr<const ServeConfig> c) {
    std::lock_guard lock(mu_);
    current_.swap(c);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ServeConfig> current_;
};

}  // namespace gd
