// The server, credentials and node label of prometheus_flags.h checked and
// read
// (gpudoctor-full: it links the HTTP client).
#pragma once

#include "cli/prometheus_flags.h"
#include "http_client/prometheus_api.h"

namespace gd {

// Throws CLI::ValidationError naming the flag that cannot be used.
http::Url prometheus_url(const PrometheusFlags& f);
http::Credentials prometheus_credentials(const PrometheusFlags& f);
// Unless --node-label is "" or a label name.
void check_node_label(const PrometheusFlags& f);

}  // namespace gd
