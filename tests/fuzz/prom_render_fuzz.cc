// The /metrics page of a snapshot whose every text (host name, GPU names,
// UUIDs, PCI ids, driver version, process names and users, clock-event
// reasons, finding ids and states, version) and every number (NaN and
// infinities included) comes from the fuzzer: render_metrics must still
// produce valid exposition text (exposition_validator.h), so no hostile
// process name can break or forge a scrape.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "exporter/exporter.h"
#include "exposition_validator.h"
#include "fuzz_check.h"

namespace {

std::string text(FuzzedDataProvider& in) {
  return in.ConsumeRandomLengthString(64);
}

template <typename T>
std::optional<T> maybe(FuzzedDataProvider& in) {
  if (!in.ConsumeBool()) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>)
    return in.ConsumeFloatingPoint<T>();
  else if constexpr (std::is_same_v<T, bool>)
    return in.ConsumeBool();
  else
    return in.ConsumeIntegral<T>();
}

gd::TraceHeader header(FuzzedDataProvider& in, int gpus) {
  gd::TraceHeader h;
  h.host.hostname = text(in);
  h.nvml_status = text(in);
  h.driver = gd::DriverInfo{text(in), text(in), text(in), text(in), text(in)};
  for (int i = 0; i < gpus; ++i) {
    gd::GpuInfo g;
    g.index = i;
    g.uuid = text(in);
    g.name = text(in);
    g.pci_bus_id = text(in);
    g.architecture = text(in);
    g.compute_capability = text(in);
    g.memory_total_bytes = maybe<uint64_t>(in);
    g.power_limit_w = maybe<double>(in);
    g.pcie_max_gen = maybe<int>(in);
    g.temp_slowdown_c = maybe<int>(in);
    h.gpus.push_back(std::move(g));
  }
  return h;
}

gd::GpuSample gpu_sample(FuzzedDataProvider& in, int index) {
  gd::GpuSample g;
  g.index = index;
  g.lost = in.ConsumeBool() && in.ConsumeBool();
  g.stale = in.ConsumeBool() && in.ConsumeBool();
  g.util_pct = maybe<double>(in);
  g.mem_used_bytes = maybe<uint64_t>(in);
  g.temp_c = maybe<int>(in);
  g.power_w = maybe<double>(in);
  g.energy_mj_total = maybe<uint64_t>(in);
  g.sm_clock_mhz = maybe<int>(in);
  g.pcie_gen = maybe<int>(in);
  g.ecc_dbe_volatile_total = maybe<uint64_t>(in);
  g.retired_pages_pending = maybe<bool>(in);
  if (in.ConsumeBool()) {
    g.clock_event_reasons.emplace();
    const int n = in.ConsumeIntegralInRange(0, 3);
    for (int i = 0; i < n; ++i) g.clock_event_reasons->push_back(text(in));
  }
  if (in.ConsumeBool()) {
    g.processes.emplace();
    const int n = in.ConsumeIntegralInRange(0, 3);
    for (int i = 0; i < n; ++i)
      g.processes->push_back(
          {in.ConsumeIntegral<uint32_t>(), maybe<uint64_t>(in), text(in)});
  }
  return g;
}

gd::ProcessSample process(FuzzedDataProvider& in) {
  gd::ProcessSample p;
  p.pid = in.ConsumeIntegral<uint32_t>();
  p.ppid = maybe<uint32_t>(in);
  p.user = text(in);
  p.name = text(in);
  p.cmdline = text(in);
  p.state = text(in);
  p.cpu_pct = maybe<double>(in);
  p.rss_bytes = maybe<uint64_t>(in);
  p.start_time = maybe<double>(in);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int gpus = in.ConsumeIntegralInRange(0, 3);
  const gd::TraceHeader h = header(in, gpus);
  gd::Sample s;
  s.t = in.ConsumeFloatingPoint<double>();
  for (int i = 0; i < gpus; ++i) s.gpus.push_back(gpu_sample(in, i));
  s.host.cpu_util_pct = maybe<double>(in);
  s.host.load1 = maybe<double>(in);
  s.host.psi_io_some_pct = maybe<double>(in);
  const int procs = in.ConsumeIntegralInRange(0, 4);
  for (int i = 0; i < procs; ++i) s.processes.push_back(process(in));

  gd::MetricsInput m;
  m.header = &h;
  if (in.ConsumeBool()) m.sample = &s;
  for (int i = 0; i < gpus; ++i)
    m.gpu_health.push_back(
        {i, in.ConsumeBool(), in.ConsumeBool(), maybe<double>(in)});
  for (int i = 0; i < gpus; ++i)
    if (in.ConsumeBool()) m.last_xid[i] = in.ConsumeIntegral<int>();
  m.collect_duration_s = in.ConsumeFloatingPoint<double>();
  m.collections_total = in.ConsumeIntegral<uint64_t>();
  const int findings = in.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < findings; ++i) {
    gd::ExportedFinding f{text(in), text(in), {}, text(in)};
    if (gpus > 0 && in.ConsumeBool())
      f.gpus.push_back(in.ConsumeIntegralInRange(0, gpus - 1));
    m.findings.push_back(std::move(f));
  }
  m.now = in.ConsumeFloatingPoint<double>();
  m.version = in.ConsumeRemainingBytesAsString();

  const std::string page = gd::render_metrics(m);
  const std::string error = gd::fuzz::exposition_error(page);
  FUZZ_CHECK(error.empty(), error);
  return 0;
}
