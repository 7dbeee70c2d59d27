// tensor-cores-unused: the GPU is busy with FP32 arithmetic (GPM's FP32 pipe
// well above zero) while its tensor cores stay idle, on a GPU that has them
// (Volta and later). Matmuls and convolutions in plain FP32 run on the FP32
// pipe; TF32 or mixed precision moves them to the tensor cores, typically
// several times faster. FP64 work (tensor cores do not help most of it), a
// GPU without tensor cores, a mostly idle GPU and a job whose tensor cores
// are already busy are never a finding.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "tensor-cores-unused";

// A GPU at or above this util is busy.
constexpr double kBusyUtilPct = 50;
// "Well above zero": the FP32 pipe active at least this share of the time.
constexpr double kMinFp32Pct = 10;
// "Near zero": tensor cores active under this.
constexpr double kMaxTensorPct = 1;
// In this many busy samples with GPM data, and this share of them.
constexpr double kMinSamples = 30;
constexpr double kMinFraction = 0.5;
// "Mostly idle": busy in under this share of the readings.
constexpr double kMinBusyFraction = 0.5;
// Volta (compute capability 7.0) brought tensor cores.
constexpr int kTensorCoreMajor = 7;
constexpr size_t kMaxPids = 16;

struct PerGpu {
  size_t readings = 0, busy = 0, measured = 0;
  Span when;  // busy, FP32 pipe active, tensor cores idle, not FP64 work
  Stat util, fp32, tensor, fp16;
  std::set<uint32_t> pids;
};

// The major of "8.0"; nullopt when unknown.
std::optional<int> cc_major(const GpuInfo* info) {
  if (!info || info->compute_capability.empty()) return std::nullopt;
  const std::string& cc = info->compute_capability;
  int major = 0;
  auto [end, ec] = std::from_chars(cc.data(), cc.data() + cc.size(), major);
  if (ec != std::errc() || end == cc.data()) return std::nullopt;
  return major;
}

class TensorCoresUnusedRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    busy_util_ = th("busy_util_pct", kBusyUtilPct);
    min_fp32_ = th("min_fp32_pct", kMinFp32Pct);
    max_tensor_ = th("max_tensor_pct", kMaxTensorPct);
    min_samples_ = th("min_samples", kMinSamples);
    min_fraction_ = th("min_fraction", kMinFraction);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.util_pct) continue;
      PerGpu& st = gpus_[g.index];
      ++st.readings;
      if (*g.util_pct < busy_util_) continue;
      ++st.busy;
      const GpmActivity& a = g.gpm;
      if (!a.fp32_active_pct || !a.tensor_active_pct) continue;
      ++st.measured;
      const bool fp64_work =
          a.fp64_active_pct && *a.fp64_active_pct >= *a.fp32_active_pct;
      if (*a.fp32_active_pct < min_fp32_ ||
          *a.tensor_active_pct >= max_tensor_ || fp64_work)
        continue;
      st.when.add(s.t);
      st.util.add(*g.util_pct);
      st.fp32.add(*a.fp32_active_pct);
      st.tensor.add(*a.tensor_active_pct);
      if (a.fp16_active_pct) st.fp16.add(*a.fp16_active_pct);
      if (g.processes)
        for (const GpuProcess& p : *g.processes)
          if (st.pids.size() < kMaxPids) st.pids.insert(p.pid);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (!has_tensor_cores(index) || mostly_idle(st)) continue;
      const double n = static_cast<double>(st.when.count);
      if (n < min_samples_ ||
          n < min_fraction_ * static_cast<double>(st.measured))
        continue;
      out.push_back(make_finding(index, st));
    }
    return out;
  }

  // A busy GPU whose driver gives no GPM pipe activity (GPUs before
  // Hopper): whether its tensor cores work cannot be told. Or the pattern
  // in too few samples.
  std::optional<std::string> not_judged() const override {
    size_t unmeasured = 0, most = 0;
    for (const auto& [index, st] : gpus_) {
      if (mostly_idle(st)) continue;
      if (st.measured == 0 && has_tensor_cores(index)) unmeasured += st.busy;
      if (st.when.count > 0 &&
          static_cast<double>(st.when.count) < min_samples_)
        most = std::max(most, st.when.count);
    }
    if (unmeasured > 0)
      return needs_field(
          "GPM FP32 and tensor-core activity of a busy GPU (Hopper and "
          "newer)",
          unmeasured);
    if (most == 0) return std::nullopt;
    return needs_samples("a busy GPU on its FP32 pipe with idle tensor cores",
                         min_samples_, most);
  }

 private:
  bool has_tensor_cores(int index) const {
    auto major = cc_major(find_gpu_info(*header_, index));
    return major && *major >= kTensorCoreMajor;
  }

  static bool mostly_idle(const PerGpu& st) {
    return st.readings == 0 ||
           static_cast<double>(st.busy) <
               kMinBusyFraction * static_cast<double>(st.readings);
  }

  Finding make_finding(int index, const PerGpu& st) const {
    Finding f;
    f.id = kId;
    f.severity = "info";
    f.gpus = {index};
    f.pids.assign(st.pids.begin(), st.pids.end());
    f.start = st.when.first;
    f.end = st.when.last;
    f.title =
        fmt::format("{} computes in plain FP32: its tensor cores stay idle",
                    gpu_label(*header_, index));
    f.evidence = fmt::format(
        "FP32 pipe active {:.0f}% while tensor cores are active {:.1f}% "
        "(GPM) in {} of {} busy samples with GPM data (util {:.0f}%)",
        st.fp32.mean(), st.tensor.mean(), st.when.count, st.measured,
        st.util.mean());
    if (!st.fp16.empty())
      f.evidence += fmt::format("; FP16 pipe {:.0f}%", st.fp16.mean());
    f.evidence += "; " + format_range(st.when.first, st.when.last);
    f.action =
        "Matmuls and convolutions run on the FP32 pipe. Let them use the "
        "tensor cores: TF32 for FP32 code "
        "(`torch.backends.cuda.matmul.allow_tf32 = True` and "
        "`torch.backends.cudnn.allow_tf32 = True`, or "
        "`torch.set_float32_matmul_precision(\"high\")`), or mixed precision "
        "(`torch.autocast(\"cuda\", dtype=torch.bfloat16)`, AMP). Either "
        "typically multiplies matmul throughput; check the loss curve once "
        "against the FP32 run.";
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double busy_util_ = kBusyUtilPct, min_fp32_ = kMinFp32Pct,
         max_tensor_ = kMaxTensorPct, min_samples_ = kMinSamples,
         min_fraction_ = kMinFraction;
  std::map<int, PerGpu> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_tensor_cores_unused_rule() {
  return std::make_unique<TensorCoresUnusedRule>();
}

}  // namespace gd
