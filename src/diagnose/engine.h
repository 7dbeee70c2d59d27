// The diagnosis engine: runs every rule of rule_table() over a header and a
// stream of samples in one pass. Samples are pulled one at a time from a
// SampleSource and dropped after every rule saw them, so memory does not
// grow with the length of the trace (rules keep bounded state).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/config.h"
#include "diagnose/rule.h"
#include "model/gpu_lookup.h"
#include "model/sample.h"
#include "trace/trace_io.h"

namespace gd {

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  // Fills `out` with the next sample; false at the end. May throw (e.g.
  // TraceError for a malformed trace line).
  virtual bool next(Sample& out) = 0;
};

// Streams the samples of a trace file (header already read by the reader).
class TraceSampleSource : public SampleSource {
 public:
  explicit TraceSampleSource(TraceReader& reader) : reader_(reader) {}
  bool next(Sample& out) override { return reader_.next(out); }

 private:
  TraceReader& reader_;
};

// Samples held in memory (tests, small windows).
class VectorSampleSource : public SampleSource {
 public:
  explicit VectorSampleSource(std::vector<Sample> samples)
      : samples_(std::move(samples)) {}
  bool next(Sample& out) override {
    if (pos_ >= samples_.size()) return false;
    out = samples_[pos_++];
    return true;
  }

 private:
  std::vector<Sample> samples_;
  size_t pos_ = 0;
};

struct DiagnoseOptions {
  // Only findings that concern one of these GPU indices; empty: every GPU
  // (findings about the host as a whole, with no GPU, are kept: they affect
  // every GPU).
  GpuSelection gpus;
  std::string min_severity = "info";  // info | warning | critical
  Config config;
};

// Where part of a window came from: a live diagnose may start from the
// history of a running `gpudoctor serve`, then sample the machine itself.
struct WindowPart {
  std::string source;  // "serve" | "live"
  std::string url;     // serve's base URL ("" for live)
  double start = 0, end = 0;
  size_t samples = 0;
};

struct DiagnoseWindow {
  double start = 0, end = 0;  // first and last sample time (0 if none)
  size_t samples = 0;
  // Set by the caller when the window has more than one origin; empty for
  // a trace or a purely live window.
  std::vector<WindowPart> parts{};
  // Samples that left processes out (over the per-sample process budget,
  // model/process_budget.h), and the most left out of one.
  size_t samples_with_processes_left_out = 0;
  uint64_t most_processes_left_out = 0;
};

// A rule that could not judge the window, and why (Rule::not_judged).
struct NotJudged {
  std::string id;
  std::string reason;
};

struct DiagnoseResult {
  // Most severe first, then by GPU (host-wide findings before GPU 0), id,
  // start time.
  std::vector<Finding> findings;
  DiagnoseWindow window;
  std::vector<std::string> rules_checked;  // ids of every rule that ran
  // Rules that ran but could not judge the window, in table order.
  std::vector<NotJudged> not_judged;
  // Config keys no rule knows (likely typos), for a warning to the user.
  std::vector<std::string> unused_config_keys;
  // The findings DiagnoseOptions left out, by severity (index: info 0,
  // warning 1, critical 2): below min_severity, and (of those not) about
  // other GPUs than options.gpus. The report says what it hid.
  std::array<size_t, 3> hidden_by_severity{}, hidden_by_gpu{};
  std::string min_severity = "info";
  GpuSelection gpus;
};

// Throws std::invalid_argument for an unknown min_severity; lets exceptions
// of the source (TraceError) through.
DiagnoseResult diagnose(const TraceHeader& header, SampleSource& samples,
                        const DiagnoseOptions& options);

// Monitoring-plugin convention (findings.md): 2 if any critical, 1 if any
// warning, else 0. (3, "could not diagnose", is the caller's to return.)
int diagnose_exit_code(const DiagnoseResult& result);
inline constexpr int kExitCouldNotDiagnose = 3;

// Sorts findings as DiagnoseResult::findings describes.
void sort_findings(std::vector<Finding>& findings);

}  // namespace gd
