// A node's window read from a Prometheus (promsource/node_window.h) as the
// diagnosis engine's sample source, held whole (NodeWindow bounds it); each
// sample is also handed to `on_sample` on its way, so one pass can both
// diagnose and account (report --prometheus --findings).
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "diagnose/engine.h"
#include "promsource/node_window.h"

namespace gd {

class NodeWindowSource : public SampleSource {
 public:
  explicit NodeWindowSource(
      const promsource::NodeWindow& w,
      std::function<void(const Sample&)> on_sample = nullptr)
      : on_sample_(std::move(on_sample)) {
    w.each_sample([this](const Sample& s) { samples_.push_back(s); });
  }
  bool next(Sample& out) override {
    if (at_ == samples_.size()) return false;
    out = std::move(samples_[at_++]);
    if (on_sample_) on_sample_(out);
    return true;
  }

 private:
  std::function<void(const Sample&)> on_sample_;
  std::vector<Sample> samples_;
  size_t at_ = 0;
};

}  // namespace gd
