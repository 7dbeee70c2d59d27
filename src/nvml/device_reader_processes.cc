// Utilisation per process (NVML's process utilisation samples) and of the
// video engines.
#include <algorithm>

#include "nvml/device_reader.h"
#include "nvml/nvml_util.h"

namespace gd::nvml {
namespace {

// More slots than the driver said it has, for processes that start between
// the size query and the read.
constexpr unsigned kUtilSlack = 8;
// Samples the first read makes room for (a few per process and GPU).
constexpr unsigned kUtilInitialSlots = 64;

}  // namespace

void DeviceReader::read_process_utilization(std::vector<GpuProcess>& procs) {
  if (!process_util_supported_ || !f_.nvmlDeviceGetProcessUtilization ||
      procs.empty()) {
    return;
  }
  // A costly read (kSlowReadInterval): between reads each pid keeps the
  // figures of the last one.
  if (slow_now_) read_process_util_samples();
  for (GpuProcess& p : procs) {
    if (auto it = process_util_.find(p.pid); it != process_util_.end()) {
      p.sm_util_pct = it->second.sm;
      p.mem_util_pct = it->second.mem;
    }
  }
}

void DeviceReader::read_process_util_samples() {
  process_util_.clear();
  // One call into a buffer kept from the last read: asking the size first
  // (NULL) would be a second driver call of about a millisecond.
  if (util_buf_.empty()) util_buf_.resize(kUtilInitialSlots);
  unsigned count = static_cast<unsigned>(util_buf_.size());
  nvmlReturn_t rc = f_.nvmlDeviceGetProcessUtilization(
      dev_, util_buf_.data(), &count, util_last_seen_us_);
  if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
    util_buf_.resize(count + kUtilSlack);
    count = static_cast<unsigned>(util_buf_.size());
    rc = f_.nvmlDeviceGetProcessUtilization(dev_, util_buf_.data(), &count,
                                            util_last_seen_us_);
  }
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
    process_util_supported_ = false;  // e.g. a MIG-enabled GPU
    return;
  }
  // NOT_FOUND: no process ran on the GPU since the last read.
  if (rc == NVML_ERROR_NOT_FOUND) return;
  if (!read_ok(rc, "nvmlDeviceGetProcessUtilization",
               {"processes.sm_util_pct", "processes.mem_util_pct"}))
    return;
  count = std::min<unsigned>(count, static_cast<unsigned>(util_buf_.size()));
  // The driver keeps a sample per process every few hundred milliseconds;
  // a process's figure is the average of its samples since the last read.
  struct Sum {
    double sm = 0, mem = 0;
    int n = 0;
  };
  std::unordered_map<unsigned, Sum> sums;
  for (unsigned i = 0; i < count; ++i) {
    const nvmlProcessUtilizationSample_t& u = util_buf_[i];
    if (u.timeStamp <= util_last_seen_us_) continue;
    Sum& sum = sums[u.pid];
    sum.sm += std::min(u.smUtil, 100u);
    sum.mem += std::min(u.memUtil, 100u);
    ++sum.n;
  }
  for (const auto& [pid, sum] : sums)
    process_util_[pid] = {sum.sm / sum.n, sum.mem / sum.n};
  for (unsigned i = 0; i < count; ++i)
    util_last_seen_us_ = std::max(util_last_seen_us_, util_buf_[i].timeStamp);
}

void DeviceReader::read_engine_utilization(GpuSample& s) {
  unsigned pct = 0, period_us = 0;
  if (enc_supported_ && f_.nvmlDeviceGetEncoderUtilization && !lost_now_) {
    nvmlReturn_t rc =
        f_.nvmlDeviceGetEncoderUtilization(dev_, &pct, &period_us);
    if (rc == NVML_ERROR_NOT_SUPPORTED) enc_supported_ = false;
    if (read_ok(rc, "nvmlDeviceGetEncoderUtilization", {"enc_util_pct"}))
      s.enc_util_pct = std::min(pct, 100u);
  }
  if (dec_supported_ && f_.nvmlDeviceGetDecoderUtilization && !lost_now_) {
    nvmlReturn_t rc =
        f_.nvmlDeviceGetDecoderUtilization(dev_, &pct, &period_us);
    if (rc == NVML_ERROR_NOT_SUPPORTED) dec_supported_ = false;
    if (read_ok(rc, "nvmlDeviceGetDecoderUtilization", {"dec_util_pct"}))
      s.dec_util_pct = std::min(pct, 100u);
  }
}

}  // namespace gd::nvml
