#include "cli/export_prometheus.h"

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <stdexcept>

#include "cli/prometheus_credentials.h"
#include "common/terminal_text.h"
#include "http_client/prometheus_api.h"
#include "promsource/fleet_nodes.h"
#include "promsource/node_match.h"
#include "promsource/read_node.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd {
size_t export_prometheus(const PrometheusExportFlags& f) {
  http::Url url = prometheus_url(f.prom);
  try {
    promsource::check_node_name(f.node);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--node", e.what());
  }
  check_node_label(f.prom);
  http::prom::Client client(url, prometheus_credentials(f.prom));
  // A TLS connection ended on our side is still written to by OpenSSL's
  // close_notify: EPIPE, not a SIGPIPE that ends the export silently.
  std::signal(SIGPIPE, SIG_IGN);
  http::RequestCancel cancel;
  promsource::NodeQuery q{f.node,        f.start, f.end,
                          f.prom.step_s, {},      f.prom.node_label};
  // A node whose node_exporter is scraped at an address (node_match.h).
  if (q.node_label.empty()) {
    auto aliases = promsource::node_aliases(client, f.start, f.end, cancel);
    if (auto a = aliases.find(f.node); a != aliases.end())
      q.instance_hosts = std::move(a->second);
  }
  promsource::ReadChoice read(read_path_of(f.prom));
  promsource::NodeWindow window = [&] {
    try {
      return promsource::read_node(client, q, read, cancel);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--since/--until/--step", e.what());
    }
  }();
  if (auto why = read.fallback(); !why.empty())
    std::fprintf(stderr,
                 "gpudoctor: export: remote read not answered (%s); GPU "
                 "series were read by query_range\n",
                 terminal_safe(why, 300).c_str());
  // What export writes, the trace readers read: a value they would refuse
  // ends the export here, not a later `diagnose --from` (trace_checks.h).
  const std::string where = "the window of " + f.node;
  const TraceHeader header = window.header();
  trace_checks::check_header(header, where);
  size_t n = 0;
  TraceWriter writer(f.out);
  writer.write_header(header);
  window.each_sample([&](const Sample& s) {
    trace_checks::check_sample(s, where);
    writer.write_sample(s);
    ++n;
  });
  writer.close();
  return n;
}

}  // namespace gd
