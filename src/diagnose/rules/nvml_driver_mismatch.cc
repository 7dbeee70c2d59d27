// nvml-driver-mismatch: NVML cannot talk to the driver because the loaded
// kernel module and the user-space library are of different versions
// (typically a driver upgrade without a reboot). Evidence: the header's
// nvml_status, or nvml_error events during the window that say so.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/ascii_text.h"
#include "diagnose/evidence.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

bool says_mismatch(std::string_view text) {
  return icontains(text, "mismatch");
}

class NvmlDriverMismatchRule : public Rule {
 public:
  const char* id() const override { return "nvml-driver-mismatch"; }

  void begin(const TraceHeader& header, const Config&) override {
    header_ = &header;
    from_header_ = header.nvml_status == kNvmlDriverMismatch;
  }

  void observe(const Sample& s, const SampleContext&) override {
    window_.add(s.t);
    for (const auto& e : s.events) {
      if (e.kind != "nvml_error" || !says_mismatch(e.text)) continue;
      events_.add(s.t);
      if (event_text_.empty()) event_text_ = e.text;
    }
  }

  std::vector<Finding> finish() override {
    if (!from_header_ && events_.empty()) return {};
    Finding f;
    f.id = id();
    f.severity = "critical";
    std::vector<std::string> parts;
    if (from_header_) {
      std::string p =
          fmt::format("NVML status at start: {}", header_->nvml_status);
      if (!header_->nvml_error.empty())
        p += fmt::format(" (\"{}\")", header_->nvml_error);
      parts.push_back(p + ", so no GPU could be read");
      f.start = window_.first;
      f.end = window_.last;
    }
    if (!events_.empty()) {
      parts.push_back(fmt::format("{} NVML error{} from {}: \"{}\"",
                                  events_.count, events_.count == 1 ? "" : "s",
                                  format_time(events_.first), event_text_));
      if (!from_header_) {
        f.start = events_.first;
        f.end = events_.last;
      }
    }
    if (!header_->host.kernel.empty())
      parts.push_back(fmt::format("running kernel {}", header_->host.kernel));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    f.title =
        "NVML cannot talk to the driver: kernel module and NVIDIA library "
        "versions differ";
    f.action =
        "The NVIDIA user-space libraries were upgraded but the old kernel "
        "module is still loaded; every CUDA job on this host fails until they "
        "match. Compare `cat /proc/driver/nvidia/version` (kernel module) "
        "with the installed driver package, then reboot the node — or stop "
        "every GPU user (including nvidia-persistenced, dcgm, fabric manager) "
        "and reload the modules (rmmod nvidia_uvm nvidia_drm nvidia_modeset "
        "nvidia; modprobe nvidia). Pin the driver package so unattended "
        "upgrades do not repeat this.";
    return {f};
  }

 private:
  const TraceHeader* header_ = nullptr;
  bool from_header_ = false;
  Span window_, events_;
  std::string event_text_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_nvml_driver_mismatch_rule() {
  return std::make_unique<NvmlDriverMismatchRule>();
}

}  // namespace gd
