// The server, credentials and node label of prometheus_flags.h checked and
// read
// (gpudoctor-full: it links the HTTP client).
#pragma once

#include <string>

#include "cli/prometheus_flags.h"
#include "http_client/prometheus_api.h"

namespace gd {

// Throws CLI::ValidationError naming the flag that cannot be used, as the
// user typed it: `flag_prefix` + "prometheus", "bearer-token-file", ...
// ("--fleet-" for serve's --fleet-prometheus and its --fleet-* credentials).
http::Url prometheus_url(const PrometheusFlags& f,
                         const std::string& flag_prefix = "--");
http::Credentials prometheus_credentials(const PrometheusFlags& f,
                                         const std::string& flag_prefix = "--");
// Unless --node-label is "" or a label name.
void check_node_label(const PrometheusFlags& f);

}  // namespace gd
