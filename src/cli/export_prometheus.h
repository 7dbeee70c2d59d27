// export --prometheus (gpudoctor-full): one node's window of a fleet's
// Prometheus written as a trace. The flags are read here; the work is in
// promsource/ (which series, as what) and http_client/ (the API).
#pragma once

#include <string>

#include "cli/prometheus_flags.h"

namespace gd {

struct PrometheusExportFlags {
  PrometheusFlags prom;  // the server, credentials, --step
  std::string node, out;
  double start = 0, end = 0;
};

// Throws CLI::ValidationError (exit 2) for a flag that cannot be used, and
// std::runtime_error with one line when the server cannot answer. Returns
// the number of samples written.
size_t export_prometheus(const PrometheusExportFlags& f);

}  // namespace gd
