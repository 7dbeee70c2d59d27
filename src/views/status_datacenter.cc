#include "views/status_datacenter.h"

#include <fmt/format.h>

#include <vector>

#include "common/int_list.h"
#include "common/terminal_text.h"
#include "views/format.h"
#include "views/status_gpu_health.h"

namespace gd {
namespace {

std::string pct(const opt<double>& v) {
  return v ? fmt::format("{:.0f}%", *v) : std::string(kUnknown);
}

std::string rate(const opt<uint64_t>& v) {
  return v ? human_bytes(*v) + "/s" : std::string(kUnknown);
}

// Processes on the GPU's MIG instance gi/ci: "101 python 10.0 GiB".
std::string instance_processes(const MigInstance& m, const GpuSample& s,
                               const Sample& sample) {
  if (!s.processes) return kUnknown;
  std::string out;
  for (const GpuProcess& p : *s.processes) {
    if (p.gi_id != m.gi_id || p.ci_id != m.ci_id) continue;
    std::string name;
    for (const ProcessSample& ps : sample.processes)
      if (ps.pid == p.pid) name = " " + terminal_safe(ps.name);
    if (!out.empty()) out += ", ";
    out += fmt::format(
        "{}{} {}", p.pid, name,
        p.used_bytes ? human_bytes(*p.used_bytes) : std::string(kUnknown));
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::string activity_line(const GpuSample& s) {
  const GpmActivity& a = s.gpm;
  std::string video;
  if (s.enc_util_pct || s.dec_util_pct)
    video = fmt::format("  video enc {} dec {}", pct(s.enc_util_pct),
                        pct(s.dec_util_pct));
  if (!a.any()) {
    if (read_failed(s, "sm_active_pct"))
      return fmt::format("     activity (GPM) {}{}\n", kReadFailed, video);
    return video.empty() ? "" : "    " + video + "\n";
  }
  return fmt::format(
      "     activity (GPM): SMs active {}  occupancy {}  tensor {}  DRAM {}  "
      "FP64 {} FP32 {} FP16 {}{}\n",
      pct(a.sm_active_pct), pct(a.sm_occupancy_pct), pct(a.tensor_active_pct),
      pct(a.dram_active_pct), pct(a.fp64_active_pct), pct(a.fp32_active_pct),
      pct(a.fp16_active_pct), video);
}

std::string nvlink_lines(const GpuInfo& info, const GpuSample& s) {
  std::string out;
  if (s.nvlinks && !s.nvlinks->empty()) {
    std::vector<int> down, unknown;
    size_t up = 0;
    opt<int> version;
    for (const NvLink& l : *s.nvlinks) {
      if (!l.active) {
        unknown.push_back(l.link);
      } else if (*l.active) {
        ++up;
      } else {
        down.push_back(l.link);
      }
      if (l.version) version = l.version;
    }
    const size_t links = info.nvlink_count
                             ? static_cast<size_t>(*info.nvlink_count)
                             : s.nvlinks->size();
    std::string state = fmt::format("{} up", up);
    if (!down.empty())
      state += fmt::format(", {} DOWN ({})", down.size(), join_ints(down));
    if (!unknown.empty()) state += fmt::format(", {} unknown", unknown.size());
    out += fmt::format("     NVLink{} {} links: {}  tx {} rx {}\n",
                       version ? fmt::format(" {}", *version) : "", links,
                       state, rate(s.nvlink_tx_bytes_per_s),
                       rate(s.nvlink_rx_bytes_per_s));
    for (const NvLink& l : *s.nvlinks) {
      const uint64_t crc = l.crc_errors_total.value_or(0),
                     replay = l.replay_total.value_or(0),
                     recovery = l.recovery_total.value_or(0);
      if (crc + replay + recovery == 0) continue;
      out += fmt::format(
          "     !! NVLink {}: {} CRC errors, {} replays, {} recoveries since "
          "the driver loaded\n",
          l.link, crc, replay, recovery);
    }
  } else if (read_failed(s, "nvlinks")) {
    out += fmt::format("     NVLink {}\n", kReadFailed);
  }
  const std::string& f = s.fabric_state;
  if (f == kFabricNotStarted)
    out +=
        "     !! NVSwitch fabric: not started (is nvidia-fabricmanager "
        "running?)\n";
  else if (f == kFabricInProgress)
    out += "     NVSwitch fabric: registration in progress\n";
  else if (f == kFabricFailed)
    out +=
        "     !! NVSwitch fabric: registration FAILED (see the "
        "nvidia-fabricmanager log)\n";
  return out;
}

std::string mig_lines(const GpuInfo& info, const GpuSample& s,
                      const Sample& sample) {
  std::string out;
  if (info.mig_enabled && info.mig_enabled_pending &&
      *info.mig_enabled != *info.mig_enabled_pending)
    out +=
        fmt::format("     !! MIG mode {} after the next GPU reset (pending)\n",
                    *info.mig_enabled_pending ? "on" : "off");
  if (!s.mig_instances) return out;
  if (s.mig_instances->empty())
    return out + "     MIG enabled, no instances (nvidia-smi mig -cgi ...)\n";
  for (const MigInstance& m : *s.mig_instances) {
    std::string mem = kUnknown;
    if (m.mem_used_bytes && m.mem_total_bytes && *m.mem_total_bytes)
      mem = fmt::format("{} / {} ({:.0f}%)", human_bytes(*m.mem_used_bytes),
                        human_bytes(*m.mem_total_bytes),
                        100.0 * static_cast<double>(*m.mem_used_bytes) /
                            static_cast<double>(*m.mem_total_bytes));
    std::string sm;
    if (m.gpm.sm_active_pct)
      sm = fmt::format("  SMs active {}", pct(m.gpm.sm_active_pct));
    out +=
        fmt::format("     MIG {}  GI {} CI {}  {}  memory {}{}  processes {}\n",
                    m.profile.empty() ? kUnknown : terminal_safe(m.profile),
                    m.gi_id, m.ci_id, terminal_safe(m.uuid), mem, sm,
                    instance_processes(m, s, sample));
  }
  return out;
}

}  // namespace gd
