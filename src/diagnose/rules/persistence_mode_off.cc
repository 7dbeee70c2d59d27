// persistence-mode-off: the header says persistence mode is off on some GPUs,
// so the driver tears down GPU state whenever no process holds the device
// and each new process pays the initialisation cost again. Unknown (null)
// persistence mode is not "off".
#include <fmt/format.h>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

class PersistenceModeOffRule : public Rule {
 public:
  const char* id() const override { return "persistence-mode-off"; }

  void begin(const TraceHeader& header, const Config&) override {
    total_ = header.gpus.size();
    for (const auto& g : header.gpus)
      if (g.persistence_mode && !*g.persistence_mode) off_.push_back(g.index);
  }

  void observe(const Sample& s, const SampleContext&) override {
    window_.add(s.t);
  }

  std::vector<Finding> finish() override {
    if (off_.empty()) return {};
    Finding f;
    f.id = id();
    f.severity = "info";
    f.gpus = off_;
    f.start = window_.first;
    f.end = window_.last;
    f.title =
        off_.size() == 1
            ? fmt::format("Persistence mode is off on GPU {}", off_[0])
            : fmt::format("Persistence mode is off on {} GPUs", off_.size());
    f.evidence = fmt::format("persistence_mode false on GPU {} ({} of {} GPUs)",
                             join_ints(off_), off_.size(), total_);
    f.action =
        "Enable the NVIDIA persistence daemon so the driver keeps the GPUs "
        "initialised between jobs: systemctl enable --now nvidia-persistenced "
        "(or, without the daemon, nvidia-smi -pm 1 after every boot). Without "
        "it, each new CUDA process waits for driver start-up and NVML queries "
        "are slower.";
    return {f};
  }

 private:
  size_t total_ = 0;
  std::vector<int> off_;
  Span window_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_persistence_mode_off_rule() {
  return std::make_unique<PersistenceModeOffRule>();
}

}  // namespace gd
