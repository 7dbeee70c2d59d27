// The TOML config of `serve`: rule thresholds (diagnose/config.h) and the
// [alerting] section (alerting.h) in one file; reloaded on SIGHUP.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diagnose/config.h"
#include "model/sample.h"
#include "serve/alerting.h"
#include "serve/shared_value.h"

namespace gd {

struct ServeConfig {
  Config rules;
  AlertPolicy policy;
  // Keys that neither a rule nor [alerting] knows (likely typos).
  std::vector<std::string> unknown_keys;
  // The files read (config_files.h), ", "-joined; "" when none.
  std::string files;
};

// `path`, or "" for the default files (config_files.h). Throws ConfigError
// "FILE:LINE[:COL]: what" (one line): a malformed file, or a number out of its
// key's range.
std::shared_ptr<const ServeConfig> load_serve_config(const std::string& path,
                                                     const TraceHeader& header);

using ConfigHolder = SharedValue<ServeConfig>;

}  // namespace gd
