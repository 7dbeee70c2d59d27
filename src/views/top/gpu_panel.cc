// GPU panels, the host strip and the charts of `top`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/bytes_text.h"
#include "common/elapsed_text.h"
#include "model/process_tree.h"
#include "views/status_view.h"
#include "views/top/parts.h"

namespace gd::top {
namespace {

const GpuSample* find_gpu(const Sample* s, int index) {
  if (!s) return nullptr;
  for (const auto& g : s->gpus)
    if (g.index == index) return &g;
  return nullptr;
}

std::string short_name(const std::string& name) {
  const std::string prefix = "NVIDIA ";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// "1.2G" style rate for a narrow cell.
std::string rate_text(std::optional<uint64_t> v) {
  if (!v) return "n/a";
  return human_bytes_brief(*v) + "/s";
}

bool unclean(const GpuSample& g) {
  return (g.ecc_dbe_volatile_total && *g.ecc_dbe_volatile_total > 0) ||
         g.retired_pages_pending.value_or(false) ||
         g.remapped_rows_pending.value_or(false) ||
         g.remapped_rows_failure.value_or(false) ||
         g.ecc_sram_threshold_exceeded.value_or(false) ||
         (!g.recovery_action.empty() && g.recovery_action != kRecoveryNone);
}

// A piece of a panel line: text and style, added while it fits.
struct Piece {
  std::string text;
  Style style;
};

void add_pieces(LineBuilder& b, const std::vector<Piece>& pieces) {
  for (const auto& p : pieces) {
    int w = columns_of(p.text);
    if (w + 2 > b.left()) break;
    b.add("  ");
    b.add(p.text, p.style);
  }
}

Style reasons_style(const std::vector<std::string>& reasons) {
  Style s = Style::kDim;
  for (const auto& r : reasons) {
    if (r == "hw_slowdown" || r == "hw_thermal_slowdown" ||
        r == "hw_power_brake_slowdown" || r == "sw_thermal_slowdown")
      return Style::kCrit;
    if (r != "gpu_idle" && r != "none" && r != "applications_clocks_setting")
      s = Style::kWarn;
  }
  return s;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

// "46.0/80G": memory used of total, short enough for a bar or a MIG entry.
std::string used_of_total_gib(double used, double total) {
  return fmt::format("{:.1f}/{:.0f}G", used / kGiB, total / kGiB);
}

// "NVLink 17/18 up, 12 errors tx .. rx ..": links up, error counters
// (CRC, replay, recovery) summed, throughput; styled as a fault when a link
// is down while others are up (nvlink-degraded), a warning when erroring.
std::optional<Piece> nvlink_piece(const GpuSample& g) {
  if (!g.nvlinks || g.nvlinks->empty()) return std::nullopt;
  size_t up = 0;
  uint64_t errors = 0;
  for (const NvLink& l : *g.nvlinks) {
    if (l.active.value_or(false)) ++up;
    errors += l.crc_errors_total.value_or(0) + l.replay_total.value_or(0) +
              l.recovery_total.value_or(0);
  }
  std::string t = fmt::format("NVLink {}/{} up", up, g.nvlinks->size());
  if (errors) t += fmt::format(", {} errors", errors);
  if (g.nvlink_tx_bytes_per_s || g.nvlink_rx_bytes_per_s)
    t += " tx " + rate_text(g.nvlink_tx_bytes_per_s) + " rx " +
         rate_text(g.nvlink_rx_bytes_per_s);
  // All links down is a GPU whose links are not in use, not a fault.
  Style s = up > 0 && up < g.nvlinks->size() ? Style::kCrit
            : errors                         ? Style::kWarn
                                             : Style::kNormal;
  return Piece{t, s};
}

std::vector<Piece> detail_pieces(const GpuInfo& info, const GpuSample& g,
                                 bool dim) {
  auto st = [&](Style s) { return dim ? Style::kDim : s; };
  std::vector<Piece> p;
  if (g.temp_c) {
    std::string t = fmt::format("{}°C", *g.temp_c);
    if (info.temp_slowdown_c) t += fmt::format("/{}", *info.temp_slowdown_c);
    p.push_back({t, st(temp_style(&info, g))});
  }
  if (g.power_w) {
    std::string t = fmt::format("{:.0f}", *g.power_w);
    Style s = Style::kNormal;
    if (info.power_limit_w && *info.power_limit_w > 0) {
      t += fmt::format("/{:.0f}", *info.power_limit_w);
      s = level_style(*g.power_w / *info.power_limit_w, 0.95, 1.0);
    }
    p.push_back({t + "W", st(s)});
  }
  // GPM (Hopper and newer): what the SMs really do, where "util" only says
  // that some kernel ran.
  if (g.gpm.sm_active_pct) {
    std::string t = fmt::format("SM active {:.0f}%", *g.gpm.sm_active_pct);
    if (g.gpm.tensor_active_pct)
      t += fmt::format(" tensor {:.0f}%", *g.gpm.tensor_active_pct);
    if (g.gpm.dram_active_pct)
      t += fmt::format(" DRAM {:.0f}%", *g.gpm.dram_active_pct);
    p.push_back({t, st(Style::kNormal)});
  }
  std::optional<Piece> nvlink = nvlink_piece(g);
  if (nvlink && nvlink->style != Style::kNormal)
    p.push_back({nvlink->text, st(nvlink->style)});
  if (g.sm_clock_mhz) {
    std::string t = fmt::format("SM {}", *g.sm_clock_mhz);
    if (info.sm_clock_max_mhz) t += fmt::format("/{}", *info.sm_clock_max_mhz);
    p.push_back({t + "MHz", st(Style::kNormal)});
  }
  if (g.mem_clock_mhz) {
    std::string t = fmt::format("MEM {}", *g.mem_clock_mhz);
    if (info.mem_clock_max_mhz)
      t += fmt::format("/{}", *info.mem_clock_max_mhz);
    p.push_back({t + "MHz", st(Style::kNormal)});
  }
  if (g.pcie_gen && g.pcie_width) {
    std::string t = fmt::format("Gen{}x{}", *g.pcie_gen, *g.pcie_width);
    Style s = Style::kNormal;
    bool below = (info.pcie_max_gen && *g.pcie_gen < *info.pcie_max_gen) ||
                 (info.pcie_max_width && *g.pcie_width < *info.pcie_max_width);
    // A lower generation at idle is power saving; under load it is a fault.
    if (below && g.util_pct && *g.util_pct >= 10) {
      t += fmt::format(" (max Gen{}x{})", info.pcie_max_gen.value_or(0),
                       info.pcie_max_width.value_or(0));
      s = Style::kWarn;
    }
    p.push_back({t, st(s)});
  }
  if (g.pcie_tx_bytes_per_s || g.pcie_rx_bytes_per_s)
    p.push_back({"tx " + rate_text(g.pcie_tx_bytes_per_s) + " rx " +
                     rate_text(g.pcie_rx_bytes_per_s),
                 st(Style::kNormal)});
  // Healthy links go after PCIe; a link down or erroring goes right after
  // the power, where a narrow line still shows it.
  if (nvlink && nvlink->style == Style::kNormal)
    p.push_back({nvlink->text, st(nvlink->style)});
  if (g.clock_event_reasons && !g.clock_event_reasons->empty()) {
    std::string words;
    for (const auto& r : *g.clock_event_reasons) {
      if (!words.empty()) words += ", ";
      words += describe_clock_reason(r);
    }
    p.push_back({words, st(reasons_style(*g.clock_event_reasons))});
  }
  if (g.fan_pct)
    p.push_back({fmt::format("fan {:.0f}%", *g.fan_pct), st(Style::kNormal)});
  return p;
}

std::string health_text(const GpuSample& g) {
  std::vector<std::string> parts;
  if (g.ecc_sbe_volatile_total || g.ecc_dbe_volatile_total)
    parts.push_back(fmt::format("ECC SBE {} DBE {}",
                                g.ecc_sbe_volatile_total.value_or(0),
                                g.ecc_dbe_volatile_total.value_or(0)));
  if (g.retired_pages_pending.value_or(false))
    parts.push_back("retired pages pending (reset to apply)");
  if (g.remapped_rows_pending.value_or(false))
    parts.push_back("row remap pending (reset to apply)");
  if (g.remapped_rows_failure.value_or(false))
    parts.push_back("ROW REMAP FAILED");
  if (g.ecc_sram_threshold_exceeded.value_or(false))
    parts.push_back("SRAM ECC THRESHOLD EXCEEDED");
  if (!g.recovery_action.empty() && g.recovery_action != kRecoveryNone)
    parts.push_back("RECOVERY ACTION: " + g.recovery_action);
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "  ") + p;
  return out;
}

}  // namespace

Style severity_style(const std::string& severity) {
  if (severity == "critical") return Style::kCrit;
  if (severity == "warning") return Style::kWarn;
  return Style::kInfo;
}

const char* severity_word(const std::string& severity) {
  if (severity == "critical") return "CRIT";
  if (severity == "warning") return "WARN";
  return "INFO";
}

Style level_style(double share, double warn, double crit) {
  if (share >= crit) return Style::kCrit;
  if (share >= warn) return Style::kWarn;
  return Style::kGood;
}

Style temp_style(const GpuInfo* info, const GpuSample& g) {
  if (!g.temp_c) return Style::kNormal;
  std::optional<int> margin = g.temp_limit_margin_c;
  if (!margin && info && info->temp_slowdown_c)
    margin = *info->temp_slowdown_c - *g.temp_c;
  // 15 C of margin is comfortable; under 5 C the GPU is about to slow down.
  if (margin)
    return *margin < 5    ? Style::kCrit
           : *margin < 15 ? Style::kWarn
                          : Style::kGood;
  return *g.temp_c >= 85   ? Style::kCrit
         : *g.temp_c >= 75 ? Style::kWarn
                           : Style::kGood;
}

void add_bar(LineBuilder& b, const std::string& title, double fill,
             double extra, const std::string& label, int inner, Style style,
             bool unicode) {
  b.add(title, Style::kBold);
  b.add("[", Style::kDim);
  if (inner < 1) inner = 1;
  fill = std::clamp(std::isfinite(fill) ? fill : 0.0, 0.0, 1.0);
  extra = std::clamp(std::isfinite(extra) ? extra : 0.0, 0.0, 1.0 - fill);
  int n_fill = static_cast<int>(std::lround(fill * inner));
  int n_extra = static_cast<int>(std::lround((fill + extra) * inner)) - n_fill;
  if (extra > 0 && n_extra == 0 && n_fill + 1 <= inner) n_extra = 1;
  int label_w = std::min(inner, columns_of(label));
  int label_at = inner - label_w;
  // Each column: a label character, or the bar's.
  std::string run;
  Style run_style = Style::kNormal;
  auto flush = [&] {
    if (!run.empty()) b.add(run, run_style);
    run.clear();
  };
  auto put = [&](const std::string& ch, Style s) {
    if (s != run_style) {
      flush();
      run_style = s;
    }
    run += ch;
  };
  (void)unicode;
  for (int i = 0; i < inner; ++i) {
    Style s = i < n_fill             ? style
              : i < n_fill + n_extra ? Style::kBarOrphan
                                     : Style::kDim;
    if (i >= label_at) {
      put(std::string(1, label[static_cast<size_t>(i - label_at)]),
          s == Style::kDim ? Style::kNormal : s);
    } else {
      put(i < n_fill ? "|" : i < n_fill + n_extra ? "#" : " ", s);
    }
  }
  flush();
  b.add("]", Style::kDim);
}

namespace {

bool has_mig(const GpuSample* g) {
  return g && !g->lost && g->mig_instances && !g->mig_instances->empty();
}

// "MIG  GI1 3g.40gb 12.0/40G SM 45% · GI2 ...": the instances, in the
// order NVML lists them, while they fit.
void add_mig_line(std::vector<Line>& out, const GpuSample& g, int width,
                  bool dim) {
  LineBuilder m(width);
  m.spaces(4);
  m.add("MIG", dim ? Style::kDim : Style::kBold);
  std::vector<Piece> pieces;
  for (const MigInstance& mi : *g.mig_instances) {
    std::string t = fmt::format("GI{} {}", mi.gi_id, mi.profile);
    if (mi.mem_used_bytes && mi.mem_total_bytes)
      t += " " + used_of_total_gib(static_cast<double>(*mi.mem_used_bytes),
                                   static_cast<double>(*mi.mem_total_bytes));
    if (mi.gpm.sm_active_pct)
      t += fmt::format(" SM {:.0f}%", *mi.gpm.sm_active_pct);
    pieces.push_back({t, dim ? Style::kDim : Style::kNormal});
  }
  add_pieces(m, pieces);
  out.push_back(m.done());
}

}  // namespace

int gpu_panel_lines(const GpuSample* g, bool compact) {
  if (compact) return 1;
  return 2 + (g && !g->lost && !g->stale && unclean(*g) ? 1 : 0) +
         (has_mig(g) ? 1 : 0);
}

void add_gpu_panel(std::vector<Line>& out, const LayoutInput& in,
                   const GpuInfo& info, int width, bool compact) {
  const Sample* s = in.frame->sample.get();
  const GpuSample* g = find_gpu(s, info.index);
  const GpuSample* shown = g;
  bool stale = g && g->stale;
  double stale_since = 0;
  if (stale && in.last_good) {
    auto it = in.last_good->find(info.index);
    shown = it != in.last_good->end() ? &it->second.first : nullptr;
    if (shown) stale_since = it->second.second;
  }
  LineBuilder b(width);
  b.cell(fmt::format("{}", info.index), 2, Style::kBold, true);
  b.add(" ");
  int name_w =
      compact ? std::min(16, width / 6) : std::clamp(width / 5, 12, 24);
  b.cell(short_name(info.name), name_w, stale ? Style::kDim : Style::kNormal);
  if (!compact && width >= 120) {
    b.add(" ");
    b.cell(info.pci_bus_id.size() > 4 ? info.pci_bus_id.substr(4)
                                      : info.pci_bus_id,
           12, Style::kDim);
  }
  b.add(" ");
  if (!g || g->lost) {
    b.add(g ? "GPU LOST: NVML answers GPU_IS_LOST (fell off the bus?)"
            : "not in this sample",
          g ? Style::kCrit : Style::kDim);
    out.push_back(b.done());
    if (!compact) out.push_back(LineBuilder(width).done());
    return;
  }
  if (stale && !shown) {
    b.add("no answer within the deadline (stale)", Style::kWarn);
    out.push_back(b.done());
    if (!compact) out.push_back(LineBuilder(width).done());
    return;
  }
  const GpuSample& v = *shown;
  // The two bars share what is left (and the compact line's tail).
  int tail = compact ? std::min(22, b.left() / 4) : 0;
  int bars = b.left() - tail;
  int inner = std::max(6, bars / 2 - 7);
  std::string util = v.util_pct ? fmt::format("{:.0f}%", *v.util_pct) : "n/a";
  add_bar(b, "UTIL", v.util_pct.value_or(0) / 100, 0, util, inner,
          stale ? Style::kDim : Style::kBarUtil, in.unicode);
  b.add(" ");
  MemorySplit m =
      memory_split(*in.frame->header, *s, info.index,
                   in.tree && &in.tree->sample() == s ? in.tree : nullptr);
  if (stale) m.used = v.mem_used_bytes;
  double total = m.total ? static_cast<double>(*m.total) : 0;
  double used = m.used ? static_cast<double>(*m.used) : 0;
  double orphan = stale ? 0 : static_cast<double>(m.orphaned);
  double live_share = total > 0 ? std::max(0.0, used - orphan) / total : 0;
  double orphan_share = total > 0 ? orphan / total : 0;
  std::string mem_label = "n/a";
  if (m.used && m.total) {
    // "46.0/80G" fits a narrow bar; a percentage where even that does not.
    mem_label = inner >= 12 && total >= kGiB
                    ? used_of_total_gib(used, total)
                    : fmt::format("{:.0f}%", 100 * used / total);
  }
  Style mem_style = stale                               ? Style::kDim
                    : total > 0 && used / total >= 0.95 ? Style::kCrit
                                                        : Style::kBarMem;
  add_bar(b, "MEM", live_share, orphan_share, mem_label, b.left() - tail - 5,
          mem_style, in.unicode);
  if (compact && tail > 0) {
    std::vector<Piece> p = detail_pieces(info, v, stale);
    if (p.size() > 2) p.resize(2);
    add_pieces(b, p);
  }
  out.push_back(b.done());
  if (compact) return;

  LineBuilder d(width);
  d.spaces(2);
  if (stale) {
    d.add(fmt::format(" STALE: no answer within the deadline; values from {} "
                      "ago",
                      elapsed_compact(std::max(0.0, in.now - stale_since))),
          Style::kWarn);
  }
  add_pieces(d, detail_pieces(info, v, stale));
  out.push_back(d.done());
  if (!stale && unclean(v)) {
    LineBuilder h(width);
    h.spaces(4);
    h.add(health_text(v), Style::kCrit);
    out.push_back(h.done());
  }
  if (has_mig(g)) add_mig_line(out, has_mig(&v) ? v : *g, width, stale);
}

void add_host_strip(std::vector<Line>& out, const LayoutInput& in, int width) {
  LineBuilder b(width);
  const Sample* s = in.frame->sample.get();
  if (!s) {
    b.add("host: waiting for the first sample", Style::kDim);
    out.push_back(b.done());
    return;
  }
  const HostSample& h = s->host;
  const HostInfo& hi = in.frame->header->host;
  int inner = std::clamp(width / 10, 6, 20);
  std::string cpu =
      h.cpu_util_pct ? fmt::format("{:.0f}%", *h.cpu_util_pct) : "n/a";
  add_bar(b, "CPU", h.cpu_util_pct.value_or(0) / 100, 0, cpu, inner,
          h.cpu_util_pct ? level_style(*h.cpu_util_pct / 100, 0.8, 0.95)
                         : Style::kDim,
          in.unicode);
  std::vector<Piece> p;
  if (h.cpu_iowait_pct || h.cpu_steal_pct)
    p.push_back(
        {fmt::format("io {:.1f} st {:.1f}", h.cpu_iowait_pct.value_or(0),
                     h.cpu_steal_pct.value_or(0)),
         h.cpu_iowait_pct.value_or(0) >= 10 || h.cpu_steal_pct.value_or(0) >= 5
             ? Style::kWarn
             : Style::kDim});
  // The memory bar comes after the CPU's small print.
  add_pieces(b, p);
  p.clear();
  if (hi.mem_total_bytes && h.mem_available_bytes && b.left() > inner + 8) {
    double total = static_cast<double>(*hi.mem_total_bytes);
    double used = total - static_cast<double>(std::min(*h.mem_available_bytes,
                                                       *hi.mem_total_bytes));
    b.add("  ");
    add_bar(b, "MEM", used / total, 0,
            inner >= 14 ? human_bytes_brief(static_cast<uint64_t>(used)) + "/" +
                              human_bytes_brief(*hi.mem_total_bytes)
                        : fmt::format("{:.0f}%", 100 * used / total),
            inner, level_style(used / total, 0.85, 0.95), in.unicode);
  }
  double swap_rate =
      h.swap_in_pages_per_s.value_or(0) + h.swap_out_pages_per_s.value_or(0);
  if (hi.swap_total_bytes || h.swap_used_bytes)
    p.push_back({fmt::format("SWP {} in {:.0f} out {:.0f}/s",
                             human_bytes_brief(h.swap_used_bytes.value_or(0)),
                             h.swap_in_pages_per_s.value_or(0),
                             h.swap_out_pages_per_s.value_or(0)),
                 swap_rate > 0 ? Style::kWarn : Style::kNormal});
  if (h.load1)
    p.push_back({fmt::format("load {:.2f}", *h.load1), Style::kNormal});
  // The busiest process outside the GPU jobs: what competes with them for
  // the CPUs (status lists all of them); a warning while the CPUs are full.
  if (h.other_cpu_top && !h.other_cpu_top->empty()) {
    const OtherCpuProcess& o = h.other_cpu_top->front();
    const size_t more = h.other_cpu_top->size() - 1;
    p.push_back(
        {fmt::format("other {} {} {:.0f}%{}", o.comm.empty() ? "?" : o.comm,
                     o.pid, o.cpu_pct, more ? fmt::format(" +{}", more) : ""),
         h.cpu_util_pct.value_or(0) >= 90 ? Style::kWarn : Style::kDim});
  }
  if (h.disk_read_bytes_per_s || h.disk_write_bytes_per_s)
    p.push_back(
        {"disk r " + rate_text(h.disk_read_bytes_per_s) + " w " +
             rate_text(h.disk_write_bytes_per_s) +
             (h.disk_busy_pct ? fmt::format(" {:.0f}% busy", *h.disk_busy_pct)
                              : ""),
         h.disk_busy_pct.value_or(0) >= 90 ? Style::kWarn : Style::kNormal});
  if (h.psi_cpu_some_pct || h.psi_mem_some_pct || h.psi_io_some_pct)
    p.push_back({fmt::format("PSI cpu {:.0f} mem {:.0f} io {:.0f}",
                             h.psi_cpu_some_pct.value_or(0),
                             h.psi_mem_some_pct.value_or(0),
                             h.psi_io_some_pct.value_or(0)),
                 h.psi_mem_some_pct.value_or(0) >= 10 ||
                         h.psi_io_some_pct.value_or(0) >= 25
                     ? Style::kWarn
                     : Style::kDim});
  add_pieces(b, p);
  out.push_back(b.done());
}

// One line of the host's RDMA ports, as status's RDMA lines say them:
// "RDMA  mlx5_0/1 400G rx 1.2G/s tx 1.1G/s  mlx5_1/1 DOWN  ..."; error
// counters above zero in the warning colour ("err 12", status names each).
// No line on a host without ports.
void add_fabric_strip(std::vector<Line>& out, const LayoutInput& in,
                      int width) {
  const Sample* s = in.frame->sample.get();
  if (!s || !s->host.rdma_ports || s->host.rdma_ports->empty()) return;
  const auto& ports = *s->host.rdma_ports;
  LineBuilder b(width);
  b.add("RDMA", Style::kDim);
  size_t shown = 0;
  for (const RdmaPort& port : ports) {
    uint64_t errors = 0;
    for (const auto* v :
         {&port.symbol_error_total, &port.link_error_recovery_total,
          &port.link_downed_total, &port.port_rcv_errors_total,
          &port.local_link_integrity_errors_total,
          &port.excessive_buffer_overrun_errors_total,
          &port.port_xmit_discards_total})
      errors += v->value_or(0);
    const bool active = port.state == "ACTIVE";
    std::string text = fmt::format("{}/{} ", port.device, port.port);
    if (!active)
      text += port.state.empty() ? "?" : port.state;
    else
      text += (port.rate_gbps ? fmt::format("{:g}G", *port.rate_gbps) : "?") +
              " rx " +
              rate_text(port.rx_bytes_per_s
                            ? std::optional<uint64_t>(static_cast<uint64_t>(
                                  std::max(0.0, *port.rx_bytes_per_s)))
                            : std::nullopt) +
              " tx " +
              rate_text(port.tx_bytes_per_s
                            ? std::optional<uint64_t>(static_cast<uint64_t>(
                                  std::max(0.0, *port.tx_bytes_per_s)))
                            : std::nullopt);
    const std::string err = errors ? fmt::format(" err {}", errors) : "";
    const size_t left = ports.size() - shown - 1;
    const int room =
        columns_of(text) + columns_of(err) + 2 +
        (left ? static_cast<int>(std::to_string(left).size()) + 3 : 0);
    if (room > b.left()) break;
    b.add("  ");
    b.add(text, active ? Style::kNormal : Style::kDim);
    if (!err.empty()) b.add(err, Style::kWarn);
    ++shown;
  }
  if (shown < ports.size() && b.left() >= 6)
    b.add(fmt::format("  +{}", ports.size() - shown), Style::kDim);
  out.push_back(b.done());
}

namespace {

// What each chart of a set shows, and its full scale for a GPU.
struct ChartSpec {
  monitor::Metric metric;
  const char* label;
};

std::pair<ChartSpec, ChartSpec> chart_pair(ChartSet set) {
  using monitor::Metric;
  switch (set) {
    case ChartSet::kUtilMem:
      return {{Metric::kUtil, "util"}, {Metric::kMemUsed, "mem"}};
    case ChartSet::kTempPower:
      return {{Metric::kTemp, "temp"}, {Metric::kPower, "power"}};
    case ChartSet::kClocks:
      return {{Metric::kSmClock, "SM clk"}, {Metric::kMemClock, "mem clk"}};
    case ChartSet::kPcie:
      return {{Metric::kPcieTx, "PCIe tx"}, {Metric::kPcieRx, "PCIe rx"}};
  }
  return {{Metric::kUtil, "util"}, {Metric::kMemUsed, "mem"}};
}

double chart_scale(monitor::Metric m, const GpuInfo& info,
                   const std::vector<float>& points) {
  using monitor::Metric;
  switch (m) {
    case Metric::kUtil:
    case Metric::kMemUsed:
      return 100;
    case Metric::kTemp:
      return info.temp_shutdown_c   ? *info.temp_shutdown_c
             : info.temp_slowdown_c ? *info.temp_slowdown_c + 10
                                    : 100;
    case Metric::kPower:
      if (info.power_limit_w && *info.power_limit_w > 0)
        return *info.power_limit_w;
      break;
    case Metric::kSmClock:
      if (info.sm_clock_max_mhz) return *info.sm_clock_max_mhz;
      break;
    case Metric::kMemClock:
      if (info.mem_clock_max_mhz) return *info.mem_clock_max_mhz;
      break;
    default:
      break;
  }
  double mx = 0;
  for (float v : points)
    if (std::isfinite(v)) mx = std::max(mx, static_cast<double>(v));
  return mx > 0 ? mx : 1;
}

// Row `row` (0 = top) of a chart `rows` tall over the newest `cols` points.
void add_chart_row(LineBuilder& b, const std::vector<float>& points,
                   double scale, int cols, int row, int rows, Style style,
                   bool unicode) {
  static const char* kBlocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char* kAscii[] = {" ", " ", ".", ".", "-", "-", "=", "=", "#"};
  const char** glyphs = unicode ? kBlocks : kAscii;
  std::string text;
  const int n = static_cast<int>(points.size());
  for (int c = 0; c < cols; ++c) {
    int i = n - cols + c;
    if (i < 0 || !std::isfinite(points[static_cast<size_t>(i)])) {
      text += ' ';
      continue;
    }
    double v = std::clamp(points[static_cast<size_t>(i)] / scale, 0.0, 1.0);
    int eighths = static_cast<int>(std::lround(v * rows * 8));
    int here = std::clamp(eighths - (rows - 1 - row) * 8, 0, 8);
    // Anything above zero shows at least a sliver on the bottom row.
    if (row == rows - 1 && here == 0 && v > 0) here = 1;
    text += glyphs[here];
  }
  b.add(text, style);
}

}  // namespace

void add_charts(std::vector<Line>& out, const LayoutInput& in, int width,
                int rows_per_gpu) {
  auto [a, b_spec] = chart_pair(in.state->charts);
  const auto* hist = in.frame->history.get();
  {
    LineBuilder t(width);
    size_t points = hist ? hist->size() : 0;
    t.add(fmt::format("charts: {}  (last {}; c: switch)",
                      chart_set_name(in.state->charts),
                      elapsed_compact(points * in.frame->interval_s)),
          Style::kDim);
    out.push_back(t.done());
  }
  const int label_w = 12;
  int chart_w = std::max(4, (width - 2 * label_w - 2) / 2);
  for (const auto& info : in.frame->header->gpus) {
    const monitor::GpuSeries* series = nullptr;
    if (hist)
      for (const auto& s : hist->series())
        if (s.index == info.index) series = &s;
    static const std::vector<float> kEmpty;
    const auto& pa =
        series ? series->points[static_cast<size_t>(a.metric)] : kEmpty;
    const auto& pb =
        series ? series->points[static_cast<size_t>(b_spec.metric)] : kEmpty;
    double sa = chart_scale(a.metric, info, pa);
    double sb = chart_scale(b_spec.metric, info, pb);
    for (int r = 0; r < rows_per_gpu; ++r) {
      LineBuilder l(width);
      auto label = [&](const ChartSpec& spec) {
        return r == 0 ? fmt::format("GPU{} {}", info.index, spec.label)
                      : std::string();
      };
      l.cell(label(a), label_w, Style::kDim);
      add_chart_row(l, pa, sa, chart_w, r, rows_per_gpu, Style::kChart,
                    in.unicode);
      l.add("  ");
      l.cell(label(b_spec), label_w, Style::kDim);
      add_chart_row(l, pb, sb, chart_w, r, rows_per_gpu, Style::kChartAlt,
                    in.unicode);
      out.push_back(l.done());
    }
  }
}

}  // namespace gd::top
