#include "trace/trace_checks.h"

#include <bitset>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "trace/json_out.h"
#include "trace/trace_io.h"

namespace gd::trace_checks {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& field,
                       const std::string& why) {
  throw TraceError(where + ": " + field + ": " + why);
}

std::string at(std::string_view array, size_t i, std::string_view key) {
  return std::string(array) + "[" + std::to_string(i) + "]." + std::string(key);
}

void check_gpu_index(int index, const std::string& where,
                     const std::string& field) {
  if (index < 0 || index > kMaxGpuIndex)
    fail(where, field,
         std::to_string(index) + " is out of range 0.." +
             std::to_string(kMaxGpuIndex));
}

// Each GPU at most once per line. (A bitset: this runs for every sample of
// a day-long trace, so no allocation.)
template <typename Gpus>
void check_gpu_list(const Gpus& gpus, const std::string& where) {
  std::bitset<kMaxGpuIndex + 1> seen;
  for (size_t i = 0; i < gpus.size(); ++i) {
    int index = gpus[i].index;
    if (index < 0 || index > kMaxGpuIndex)
      check_gpu_index(index, where, at("gpus", i, "index"));
    if (seen.test(static_cast<size_t>(index)))
      fail(where, at("gpus", i, "index"),
           "GPU " + std::to_string(index) + " is listed twice");
    seen.set(static_cast<size_t>(index));
  }
}

// A power limit within what a GPU can draw (model/sample.h).
void check_power_limit(const opt<double>& w, const std::string& where,
                       const std::string& field) {
  if (!w || (*w >= 0 && *w <= kMaxPowerLimitW)) return;
  char text[32];
  std::snprintf(text, sizeof text, "%g", *w);
  fail(where, field,
       std::string(text) + " is not a power limit (0 to " +
           std::to_string(static_cast<int>(kMaxPowerLimitW)) + " W)");
}

}  // namespace

void check_header(const TraceHeader& h, const std::string& where) {
  check_gpu_list(h.gpus, where);
  for (size_t i = 0; i < h.gpus.size(); ++i) {
    check_power_limit(h.gpus[i].power_limit_w, where,
                      at("gpus", i, "power_limit_w"));
    check_power_limit(h.gpus[i].power_default_limit_w, where,
                      at("gpus", i, "power_default_limit_w"));
  }
  if (h.host.cpu_count && *h.host.cpu_count < 0)
    fail(where, "host.cpu_count",
         std::to_string(*h.host.cpu_count) + " is negative");
}

void check_sample(const Sample& s, const std::string& where) {
  if (!std::isfinite(s.t) || s.t < 0 || s.t > kMaxUnixTime) {
    char t[32];
    std::snprintf(t, sizeof t, "%g", s.t);
    fail(where, "t",
         std::string(t) +
             " is not a Unix time between 0 and 4102444800 (year 2100)");
  }
  check_gpu_list(s.gpus, where);
  for (size_t i = 0; i < s.events.size(); ++i) {
    const Event& e = s.events[i];
    if (e.gpu) check_gpu_index(*e.gpu, where, at("events", i, "gpu"));
    if (!e.code) continue;
    int low = e.kind == "xid" ? 1 : 0;
    if (*e.code < low || *e.code > kMaxXidCode)
      fail(where, at("events", i, "code"),
           std::to_string(*e.code) + " is out of range " + std::to_string(low) +
               ".." + std::to_string(kMaxXidCode) +
               (e.kind == "xid" ? " (Xid codes are positive)" : ""));
  }
}

void check_time_order(double t, double previous_t, const std::string& where) {
  if (!(t < previous_t)) return;
  std::string msg = where + ": t: ";
  json_out::number(msg, t);
  msg += " is earlier than the previous sample's t ";
  json_out::number(msg, previous_t);
  msg += " (samples must be in time order)";
  throw TraceError(msg);
}

}  // namespace gd::trace_checks
