#include "exporter/exporter.h"
#include "exporter/prom_text.h"

namespace gd {

void render_metrics_of_snapshot(const MetricsInput& in, std::string& out) {
  out.clear();
  // A 4-GPU page is ~20 KiB; one reservation avoids most regrowth.
  out.reserve(32 * 1024);
  if (in.header == nullptr) return;
  render_dcgm_families(in, out);
  render_node_infiniband_families(in, out);
  const size_t native = out.size();
  render_native_families(in, out);
  render_rdma_native_families(in, out);
  // Prometheus reads an empty label as no label: none is written then.
  if (!in.header->host.hostname.empty())
    prom::prepend_label(out, native, "Hostname", in.header->host.hostname);
}

void render_age_families(const MetricsInput& in, std::string& out) {
  const size_t from = out.size();
  render_age_family_lines(in, out);
  if (in.header && !in.header->host.hostname.empty())
    prom::prepend_label(out, from, "Hostname", in.header->host.hostname);
}

void render_metrics(const MetricsInput& in, std::string& out) {
  render_metrics_of_snapshot(in, out);
  render_age_families(in, out);
}

}  // namespace gd
