#include "exporter/exporter.h"

namespace gd {

void render_metrics_of_snapshot(const MetricsInput& in, std::string& out) {
  out.clear();
  // A 4-GPU page is ~20 KiB; one reservation avoids most regrowth.
  out.reserve(32 * 1024);
  if (in.header == nullptr) return;
  render_dcgm_families(in, out);
  render_native_families(in, out);
}

void render_metrics(const MetricsInput& in, std::string& out) {
  render_metrics_of_snapshot(in, out);
  render_age_families(in, out);
}

}  // namespace gd
