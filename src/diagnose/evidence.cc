#include "diagnose/evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace gd {

namespace {
std::tm utc(double unix_s) {
  std::time_t t = static_cast<std::time_t>(std::floor(unix_s));
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}
std::string hms(const std::tm& tm) {
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}
std::string ymd(const std::tm& tm) {
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday);
}
}  // namespace

std::string format_time(double unix_s) {
  auto tm = utc(unix_s);
  return ymd(tm) + " " + hms(tm) + " UTC";
}

std::string format_range(double start, double end) {
  if (end <= start) return format_time(start);
  auto a = utc(start), b = utc(end);
  std::string text;
  if (ymd(a) == ymd(b))
    text = fmt::format("{} {}-{} UTC", ymd(a), hms(a), hms(b));
  else
    text = fmt::format("{} {} - {} {} UTC", ymd(a), hms(a), ymd(b), hms(b));
  return text + " (" + elapsed_words(end - start) + ")";
}

std::string format_fraction(double fraction) {
  return fmt::format("{:.0f}%", std::clamp(fraction, 0.0, 1.0) * 100.0);
}

std::string gpu_label(const TraceHeader& header, int index) {
  const GpuInfo* info = find_gpu_info(header, index);
  if (!info || (info->name.empty() && info->pci_bus_id.empty()))
    return fmt::format("GPU {}", index);
  if (info->pci_bus_id.empty())
    return fmt::format("GPU {} ({})", index, info->name);
  if (info->name.empty())
    return fmt::format("GPU {} ({})", index, info->pci_bus_id);
  return fmt::format("GPU {} ({}, {})", index, info->name, info->pci_bus_id);
}

bool has_reason(const GpuSample& gpu, std::string_view reason) {
  if (!gpu.clock_event_reasons) return false;
  const auto& r = *gpu.clock_event_reasons;
  return std::find(r.begin(), r.end(), reason) != r.end();
}

bool gpu_busy(const GpuSample& gpu, double busy_util_pct) {
  if (gpu.lost || gpu.stale) return false;
  if (gpu.util_pct) return *gpu.util_pct >= busy_util_pct;
  return gpu.clock_event_reasons && !has_reason(gpu, "gpu_idle");
}

int severity_rank(std::string_view severity) {
  if (severity == "critical") return 2;
  if (severity == "warning") return 1;
  if (severity == "info") return 0;
  return -1;
}

}  // namespace gd
