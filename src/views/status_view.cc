#include "views/status_view.h"

#include <fmt/format.h>

#include <ctime>

#include "common/terminal_text.h"
#include "common/time_point.h"
#include "views/format.h"
#include "views/status_datacenter.h"
#include "views/status_gpu_health.h"
#include "views/text_table.h"

namespace gd {
namespace {

// Every string of a trace or of the driver is untrusted on a terminal.
std::string safe(std::string_view text) { return terminal_safe(text); }

// "     pods: ml/train-0/main (replica 0)  infer/serve-0/server (mig-1g.10gb)"
// -- the containers the kubelet gave this GPU, also those that run
// nothing on it yet; no line off Kubernetes.
std::string pods_line(int gpu, const Sample& sample) {
  constexpr size_t kPodsShown = 8;
  if (!sample.pod_allocations) return {};
  std::string line;
  size_t n = 0;
  for (const PodAllocation& a : *sample.pod_allocations) {
    if (a.gpu != gpu) continue;
    if (n++ >= kPodsShown) continue;
    line += fmt::format(
        "{}{}/{}/{}", line.empty() ? "" : "  ", terminal_fit(a.namespace_, 63),
        terminal_fit(a.name, 80), terminal_fit(a.container, 63));
    const auto slash = a.resource.find('/');
    const std::string kind =
        slash == std::string::npos ? "" : a.resource.substr(slash + 1);
    if (kind.rfind("mig-", 0) == 0)
      line += " (" + safe(kind) + ")";
    else if (a.replica)
      line += fmt::format(" (replica {})", *a.replica);
  }
  if (n == 0) return {};
  if (n > kPodsShown) line += fmt::format("  +{} more", n - kPodsShown);
  return "     pods: " + line + "\n";
}

template <typename T>
std::string or_na(const std::optional<T>& v, const char* spec = "{}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string(kUnknown);
}

// A unit belongs to a number: an unknown value is "n/a", never "n/a C".
std::string with_unit(std::string text, std::string_view unit) {
  if (text != kUnknown) text += unit;
  return text;
}
std::string bytes_rate(const std::optional<uint64_t>& v) {
  return v ? human_bytes(*v) + "/s" : kUnknown;
}
// "300.0 / 400 W": the unit once, after the second value; after the first
// when only it is known ("300.0 W / n/a").
std::string pair_with_unit(const std::string& a, std::string_view sep,
                           const std::string& b, std::string_view unit) {
  if (b != kUnknown) return a + std::string(sep) + b + std::string(unit);
  return with_unit(a, unit) + std::string(sep) + b;
}

std::string on_off(const std::optional<bool>& v) {
  return v ? (*v ? "on" : "off") : kUnknown;
}

std::string pcie(const std::optional<int>& gen, const std::optional<int>& w) {
  if (!gen && !w) return kUnknown;
  return fmt::format("{} {}", or_na(gen, "Gen{}"), or_na(w, "x{}"));
}

std::string gpu_block(const GpuInfo& info, const GpuSample* s,
                      const Sample& sample) {
  std::string out =
      fmt::format("GPU {}  {}  {}  {}\n", info.index, safe(info.name),
                  safe(info.pci_bus_id), safe(info.uuid));
  if (!s) return out + "     no sample\n";
  if (s->lost)
    return out + "     LOST: the GPU stopped answering (GPU is lost)\n";
  if (s->stale)
    return out +
           "     STALE: the NVML read did not return in time (driver hung?)\n";

  std::string mem = kUnknown;
  if (s->mem_used_bytes && info.memory_total_bytes && *info.memory_total_bytes)
    mem = fmt::format("{} / {} ({:.0f}%)", human_bytes(*s->mem_used_bytes),
                      human_bytes(*info.memory_total_bytes),
                      100.0 * static_cast<double>(*s->mem_used_bytes) /
                          static_cast<double>(*info.memory_total_bytes));
  else if (s->mem_used_bytes)
    mem = human_bytes(*s->mem_used_bytes);
  else if (read_failed(*s, "mem_used_bytes"))
    mem = kReadFailed;

  out += fmt::format("     util {}  mem-util {}  memory {}\n",
                     value_of(*s, "util_pct", s->util_pct, "{:.0f}%"),
                     value_of(*s, "mem_util_pct", s->mem_util_pct, "{:.0f}%"),
                     mem);
  // nvidia-smi's "T.Limit": degrees left before the slowdown temperature.
  std::string margin;
  if (s->temp_limit_margin_c)
    margin = fmt::format("  {} C to slowdown", *s->temp_limit_margin_c);
  else if (read_failed(*s, "temp_limit_margin_c"))
    margin = fmt::format("  T.Limit {}", kReadFailed);
  out += fmt::format(
      "     temp {} (slowdown {}, shutdown {}){}  mem temp {}  fan {}\n",
      value_of(*s, "temp_c", s->temp_c, "{} C"),
      or_na(info.temp_slowdown_c, "{} C"), or_na(info.temp_shutdown_c, "{} C"),
      margin, value_of(*s, "mem_temp_c", s->mem_temp_c, "{} C"),
      value_of(*s, "fan_pct", s->fan_pct, "{:.0f}%"));
  out += fmt::format(
      "     power {} (default {})  SM clock {}  mem clock {}  {}\n",
      pair_with_unit(value_of(*s, "power_w", s->power_w, "{:.1f}"), " / ",
                     or_na(info.power_limit_w, "{:.0f}"), " W"),
      or_na(info.power_default_limit_w, "{:.0f} W"),
      pair_with_unit(value_of(*s, "sm_clock_mhz", s->sm_clock_mhz), " / ",
                     or_na(info.sm_clock_max_mhz), " MHz"),
      pair_with_unit(value_of(*s, "mem_clock_mhz", s->mem_clock_mhz), " / ",
                     or_na(info.mem_clock_max_mhz), " MHz"),
      value_of(*s, "pstate", s->pstate, "P{}"));

  std::string reasons =
      read_failed(*s, "clock_event_reasons") ? kReadFailed : kUnknown;
  if (s->clock_event_reasons) {
    if (s->clock_event_reasons->empty()) {
      reasons = "none";
    } else {
      reasons.clear();
      for (const auto& r : *s->clock_event_reasons) {
        if (!reasons.empty()) reasons += ", ";
        reasons += describe_clock_reason(r);
      }
    }
  }
  out += fmt::format("     clock events: {}\n", reasons);

  std::string link_note;
  if (s->pcie_gen && info.pcie_max_gen && s->pcie_width &&
      info.pcie_max_width &&
      (*s->pcie_gen < *info.pcie_max_gen ||
       *s->pcie_width < *info.pcie_max_width))
    link_note = "  (below max)";
  out += fmt::format("     PCIe {} of {}{}  tx {} rx {}  replays {}\n",
                     pcie(s->pcie_gen, s->pcie_width),
                     pcie(info.pcie_max_gen, info.pcie_max_width), link_note,
                     bytes_rate(s->pcie_tx_bytes_per_s),
                     bytes_rate(s->pcie_rx_bytes_per_s),
                     or_na(s->pcie_replay_total));
  out += fmt::format(
      "     ECC {}  SBE {}  DBE {}  retired pages pending {}  row remap "
      "pending {} failed {}\n",
      on_off(info.ecc_enabled),
      value_of(*s, "ecc_sbe_volatile_total", s->ecc_sbe_volatile_total),
      value_of(*s, "ecc_dbe_volatile_total", s->ecc_dbe_volatile_total),
      on_off(s->retired_pages_pending), on_off(s->remapped_rows_pending),
      on_off(s->remapped_rows_failure));
  out += activity_line(*s);
  out += nvlink_lines(info, *s);
  out += memory_health_lines(*s);
  out += recovery_line(*s);
  out += fmt::format(
      "     persistence {}  compute mode {}  MIG {}  arch {} (cc {})  NUMA {}  "
      "processes {}\n",
      on_off(info.persistence_mode),
      info.compute_mode.empty() ? kUnknown : info.compute_mode,
      on_off(info.mig_enabled),
      info.architecture.empty() ? kUnknown : safe(info.architecture),
      info.compute_capability.empty() ? kUnknown
                                      : safe(info.compute_capability),
      or_na(info.numa_node),
      s->processes ? fmt::format("{}", s->processes->size())
                   : std::string(kUnknown));
  out += mig_lines(info, *s, sample);
  out += pods_line(info.index, sample);
  out += read_errors_line(*s);
  return out;
}

// "     other work (outside the GPU jobs): 5120 yes (bob) 99.7%, ..." — what
// competes with the jobs for the CPUs (host.other_cpu_top, busiest first);
// nothing when it was not looked at or nothing else is busy.
std::string other_work_line(const HostSample& h) {
  if (!h.other_cpu_top || h.other_cpu_top->empty()) return {};
  std::string out = "     other work (outside the GPU jobs):";
  const char* sep = " ";
  for (const OtherCpuProcess& p : *h.other_cpu_top) {
    std::string who = p.user.empty() ? std::string() : safe(p.user);
    if (p.container) who += (who.empty() ? "" : ", ") + safe(*p.container);
    out += fmt::format("{}{} {}{} {:.0f}%", sep, p.pid,
                       p.comm.empty() ? "?" : safe(p.comm),
                       who.empty() ? "" : " (" + who + ")", p.cpu_pct);
    sep = ", ";
  }
  return out + "\n";
}

// One line per RDMA port (host.rdma_ports): "RDMA mlx5_0/1 ACTIVE/LinkUp
// 400 Gb/s InfiniBand  rx 1.2 GB/s tx 1.1 GB/s  errors: symbol 12"; no
// line when the host has none.
std::string rdma_lines(const HostInfo& hi, const HostSample& h) {
  if (!h.rdma_ports || h.rdma_ports->empty()) return {};
  std::string out;
  for (const RdmaPort& p : *h.rdma_ports) {
    std::string layer, netdev;
    if (hi.rdma_devices)
      for (const RdmaDevice& d : *hi.rdma_devices)
        if (d.device == p.device)
          for (const RdmaPortInfo& i : d.ports)
            if (i.port == p.port) {
              layer = i.link_layer == "Ethernet" ? "RoCE" : i.link_layer;
              if (i.netdev) netdev = " (" + safe(*i.netdev) + ")";
            }
    std::string errors;
    auto count = [&](const char* what, const std::optional<uint64_t>& v) {
      if (v && *v > 0)
        errors += fmt::format("{}{} {}", errors.empty() ? "" : ", ", what, *v);
    };
    count("symbol", p.symbol_error_total);
    count("recoveries", p.link_error_recovery_total);
    count("downed", p.link_downed_total);
    count("rcv", p.port_rcv_errors_total);
    count("integrity", p.local_link_integrity_errors_total);
    count("overruns", p.excessive_buffer_overrun_errors_total);
    count("discards", p.port_xmit_discards_total);
    const double rx = p.rx_bytes_per_s.value_or(-1);
    const double tx = p.tx_bytes_per_s.value_or(-1);
    out += fmt::format(
        "     RDMA {}/{} {}/{} {} {}{}  rx {} tx {}  errors: {}\n",
        safe(p.device), p.port, p.state.empty() ? kUnknown : safe(p.state),
        p.phys_state.empty() ? kUnknown : safe(p.phys_state),
        p.rate_gbps ? fmt::format("{:g} Gb/s", *p.rate_gbps)
                    : std::string(kUnknown),
        layer.empty() ? kUnknown : safe(layer), netdev,
        rx < 0 ? std::string(kUnknown) : bytes_rate(static_cast<uint64_t>(rx)),
        tx < 0 ? std::string(kUnknown) : bytes_rate(static_cast<uint64_t>(tx)),
        errors.empty() ? "none" : errors);
  }
  return out;
}

std::string host_block(const HostInfo& hi, const HostSample& h) {
  std::string out =
      fmt::format("Host {}  kernel {}  {} x {}\n", safe(hi.hostname),
                  safe(hi.kernel), or_na(hi.cpu_count), safe(hi.cpu_model));
  out += fmt::format(
      "     CPU {} (iowait {}, steal {})  load1 {}\n",
      or_na(h.cpu_util_pct, "{:.1f}%"), or_na(h.cpu_iowait_pct, "{:.1f}%"),
      or_na(h.cpu_steal_pct, "{:.1f}%"), or_na(h.load1, "{:.2f}"));
  out += other_work_line(h);
  out += fmt::format(
      "     memory {} available of {}  swap {} used of {}, in {}\n",
      h.mem_available_bytes ? human_bytes(*h.mem_available_bytes) : kUnknown,
      hi.mem_total_bytes ? human_bytes(*hi.mem_total_bytes) : kUnknown,
      h.swap_used_bytes ? human_bytes(*h.swap_used_bytes) : kUnknown,
      hi.swap_total_bytes ? human_bytes(*hi.swap_total_bytes) : kUnknown,
      pair_with_unit(or_na(h.swap_in_pages_per_s, "{:.0f}"), " out ",
                     or_na(h.swap_out_pages_per_s, "{:.0f}"), " pages/s"));
  out += fmt::format("     disk read {} write {} busiest {}\n",
                     bytes_rate(h.disk_read_bytes_per_s),
                     bytes_rate(h.disk_write_bytes_per_s),
                     or_na(h.disk_busy_pct, "{:.0f}% busy"));
  if (h.psi_cpu_some_pct || h.psi_mem_some_pct || h.psi_io_some_pct)
    out += fmt::format("     pressure (some, avg10) cpu {} memory {} io {}\n",
                       or_na(h.psi_cpu_some_pct, "{:.1f}%"),
                       or_na(h.psi_mem_some_pct, "{:.1f}%"),
                       or_na(h.psi_io_some_pct, "{:.1f}%"));
  out += rdma_lines(hi, h);
  return out;
}

}  // namespace

std::string describe_clock_reason(const std::string& r) {
  if (r == "gpu_idle") return "idle";
  if (r == "applications_clocks_setting") return "application clocks setting";
  if (r == "sw_power_cap") return "software power cap";
  if (r == "hw_slowdown") return "HARDWARE SLOWDOWN";
  if (r == "sync_boost") return "sync boost";
  if (r == "sw_thermal_slowdown") return "software thermal slowdown";
  if (r == "hw_thermal_slowdown") return "HARDWARE THERMAL SLOWDOWN";
  if (r == "hw_power_brake_slowdown") return "HARDWARE POWER BRAKE";
  if (r == "display_clock_setting") return "display clock setting";
  return safe(r);
}

std::string explain_nvml_status(const TraceHeader& h) {
  const std::string& s = h.nvml_status;
  if (s == kNvmlOk) return {};
  if (s == kNvmlNoDriver)
    // The loader's own words go on a second line: the first is what a
    // person (or a grep) looks for.
    return "no NVIDIA driver found (libnvidia-ml.so.1); showing the host only" +
           (h.nvml_error.empty() ? std::string()
                                 : "\n   " + safe(h.nvml_error));
  if (s == kNvmlDriverMismatch)
    return "NVIDIA driver/library version mismatch: the loaded kernel module "
           "and libnvidia-ml.so.1 are of different versions (driver upgraded "
           "without reboot?) — every CUDA job on this host will fail";
  if (s == kNvmlNoPermission)
    return "insufficient permissions to use NVML (check /dev/nvidia* access)";
  return "NVML error: " + safe(h.nvml_error.empty() ? s : h.nvml_error);
}

std::string render_status(const TraceHeader& h, const Sample& s, size_t width) {
  std::string out = fmt::format("gpudoctor status — {} — {}\n",
                                safe(h.host.hostname), local_text(s.t));
  if (h.driver && !h.driver->driver_version.empty())
    out += fmt::format("Driver {}  CUDA {}  NVML {}  GPUs {}\n",
                       safe(h.driver->driver_version),
                       safe(h.driver->cuda_driver_version),
                       safe(h.driver->nvml_version), h.gpus.size());
  // Without NVML, what the kernel module and the library say still tells a
  // version mismatch at a glance.
  if (h.driver && h.driver->driver_version.empty() &&
      (!h.driver->kernel_module_version.empty() ||
       !h.driver->library_version.empty()))
    out += fmt::format("Kernel module {}  libnvidia-ml {}\n",
                       h.driver->kernel_module_version.empty()
                           ? std::string("unknown")
                           : safe(h.driver->kernel_module_version),
                       h.driver->library_version.empty()
                           ? std::string("unknown")
                           : safe(h.driver->library_version));
  std::string why = explain_nvml_status(h);
  if (!why.empty()) out += "!! " + why + "\n";
  out += "\n";
  for (const auto& info : h.gpus) {
    const GpuSample* gs = nullptr;
    for (const auto& g : s.gpus)
      if (g.index == info.index) gs = &g;
    out += gpu_block(info, gs, s) + "\n";
  }
  out += host_block(h.host, s.host);
  for (const auto& e : s.events)
    out += fmt::format("event: {} {}\n", safe(e.kind), safe(e.text));
  return fit_lines(out, width);
}

}  // namespace gd
