// A diagnosis rule: sees the trace header and the samples of a window in one
// streaming pass (bounded state), then names causes with evidence.
// docs/findings.md is the catalogue of ids; one rule per file in
// rules/, registered in rule_table.cc.
#pragma once

// Each rule file (rules/) keeps its helpers under the same short names (kId,
// kMinSamples, PerGpu) in `namespace { namespace GD_UNITY_ID { ... } }`. A
// unity build (CMAKE_UNITY_BUILD, scripts/test.sh) compiles several rules as
// one file and defines GD_UNITY_ID per rule (src/diagnose/CMakeLists.txt,
// UNITY_BUILD_UNIQUE_ID), so their names do not meet; built one by one, the
// anonymous namespace alone keeps them apart.
#ifndef GD_UNITY_ID
#define GD_UNITY_ID rule_unit
#endif

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/config.h"
#include "diagnose/sample_context.h"
#include "model/sample.h"

namespace gd {

struct Finding {
  std::string id;        // stable id from findings.md
  std::string severity;  // critical | warning | info
  std::vector<int> gpus;
  std::vector<uint32_t> pids;
  std::string title;     // one line: "GPU 2 is held back by its data loader"
  std::string evidence;  // numbers and time ranges
  std::string action;    // what to do, specific to the evidence
  double start = 0, end = 0;
};

class Rule {
 public:
  virtual ~Rule() = default;
  virtual const char* id() const = 0;
  // Called once before the first sample.
  virtual void begin(const TraceHeader& header, const Config& config) = 0;
  // Called for every sample, in time order. `context` holds what is worked
  // out once per sample for every rule (the process tree, the GPU jobs).
  virtual void observe(const Sample& sample, const SampleContext& context) = 0;
  // Called once after the last sample.
  virtual std::vector<Finding> finish() = 0;
  // After finish(): why the rule could not judge this window, naming what it
  // needs and what the window had ("needs 5 min of one process's GPU memory;
  // the window has 15 s"); nullopt when it judged. Silence from a rule that
  // saw too little is not "all is well", so the report lists these.
  virtual std::optional<std::string> not_judged() const { return std::nullopt; }
};

using RuleFactory = std::unique_ptr<Rule> (*)();

struct RuleEntry {
  const char* id;
  RuleFactory make;
};

// The one table of rules (rule_table.cc).
const std::vector<RuleEntry>& rule_table();

}  // namespace gd
