// DeviceReader (device_reader.h): the processes on a GPU (NVML's compute
// and graphics lists), their utilisation (NVML's process utilisation
// samples), and that of the video engines.
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
// How many extra process slots to allow for processes that start between
// the size query and the read.
constexpr unsigned kProcessSlack = 8;
constexpr int kProcessListAttempts = 4;

// usedGpuMemory == NVML_VALUE_NOT_AVAILABLE (-1 as unsigned long long).
constexpr unsigned long long kNotAvailable =
    static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE);

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

// ---- the process lists
// -------------------------------------------------------

template <typename Info, typename Fn>
nvmlReturn_t DeviceReader::list_processes(Fn fn, std::vector<Info>& buf,
                                          std::vector<ProcessEntry>& out) {
  if (!fn) return NVML_ERROR_FUNCTION_NOT_FOUND;
  // Two-call protocol: a too-small buffer gives INSUFFICIENT_SIZE and the
  // needed count. Processes can start in between, so allow slack and retry a
  // bounded number of times.
  if (buf.size() < kProcessSlack) buf.resize(kProcessSlack);
  for (int attempt = 0; attempt < kProcessListAttempts; ++attempt) {
    unsigned count = static_cast<unsigned>(buf.size());
    nvmlReturn_t rc = fn(dev_, &count, buf.data());
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      buf.resize(std::max<size_t>(count, buf.size()) + kProcessSlack);
      continue;
    }
    if (rc == NVML_SUCCESS) {
      count = std::min<unsigned>(count, static_cast<unsigned>(buf.size()));
      for (unsigned i = 0; i < count; ++i) {
        ProcessEntry e{buf[i].pid, buf[i].usedGpuMemory};
        if constexpr (requires { buf[i].gpuInstanceId; }) {
          e.gi = buf[i].gpuInstanceId;
          e.ci = buf[i].computeInstanceId;
        }
        out.push_back(e);
      }
    }
    return rc;
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

void DeviceReader::merge_processes(const std::vector<ProcessEntry>& entries,
                                   const char* type,
                                   std::vector<GpuProcess>& out) {
  const size_t before = out.size();
  for (const ProcessEntry& p : entries) {
    std::optional<uint64_t> used;
    if (p.used != kNotAvailable) used = p.used;
    GpuProcess* found = nullptr;
    for (auto& q : out) {
      if (q.pid == p.pid) found = &q;
    }
    if (!found) {
      GpuProcess gp;
      gp.pid = p.pid;
      gp.used_bytes = used;
      gp.type = type;
      if (p.gi != kNoInstance) gp.gi_id = p.gi;
      if (p.ci != kNoInstance) gp.ci_id = p.ci;
      out.push_back(std::move(gp));
    } else if (found >= out.data() + before) {
      // Listed more than once by one call (one entry per MIG instance): the
      // memory adds up; unknown stays unknown.
      if (found->used_bytes && used) {
        *found->used_bytes += *used;
      } else {
        found->used_bytes.reset();
      }
    } else {
      // Listed as compute and as graphics: one process, one memory figure.
      found->type = "compute+graphics";
      if (used && (!found->used_bytes || *used > *found->used_bytes))
        found->used_bytes = used;
    }
  }
}

std::optional<std::vector<GpuProcess>> DeviceReader::read_processes() {
  std::vector<GpuProcess> procs;
  bool any_listed = false;
  std::vector<ProcessEntry>& entries = process_entries_;

  last_process_rc_ = NVML_SUCCESS;
  entries.clear();
  nvmlReturn_t rc = first_available(
      compute_procs_variant_,
      [&] {
        return list_processes(f_.nvmlDeviceGetComputeRunningProcesses_v3,
                              procs_v3_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetComputeRunningProcesses_v2,
                              procs_v2_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetComputeRunningProcesses,
                              procs_v1_, entries);
      });
  if (ok(rc, "nvmlDeviceGetComputeRunningProcesses")) {
    any_listed = true;
    merge_processes(entries, "compute", procs);
  } else if (is_failed_read(rc)) {
    last_process_rc_ = rc;
  }
  if (lost_now_) return std::nullopt;

  entries.clear();
  rc = first_available(
      graphics_procs_variant_,
      [&] {
        return list_processes(f_.nvmlDeviceGetGraphicsRunningProcesses_v3,
                              procs_v3_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetGraphicsRunningProcesses_v2,
                              procs_v2_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetGraphicsRunningProcesses,
                              procs_v1_, entries);
      });
  if (ok(rc, "nvmlDeviceGetGraphicsRunningProcesses")) {
    any_listed = true;
    merge_processes(entries, "graphics", procs);
  } else if (is_failed_read(rc)) {
    last_process_rc_ = rc;
  }
  if (!any_listed) return std::nullopt;
  return procs;
}

std::vector<uint32_t> DeviceReader::read_pids() {
  events_ = nullptr;
  read_errors_ = nullptr;
  lost_now_ = false;
  std::vector<uint32_t> pids;
  if (!acquire_handle()) return pids;
  if (auto procs = read_processes())
    for (const auto& p : *procs) pids.push_back(p.pid);
  return pids;
}

}  // namespace gd::nvml
