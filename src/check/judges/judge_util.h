// What check's judges share: a finding about one GPU at the sample's time.
#pragma once

#include <string>

#include "check/check.h"
#include "diagnose/evidence.h"

namespace gd::check {

// Title "GPU 3 (NVIDIA H100 80GB HBM3, 00000000:1B:00.0) <what>".
inline CheckFinding gpu_finding(const Input& in, int gpu, const char* id,
                                const char* severity, const std::string& what,
                                std::string evidence, std::string action,
                                std::string brief) {
  CheckFinding c;
  c.finding.id = id;
  c.finding.severity = severity;
  c.finding.gpus = {gpu};
  c.finding.title = gpu_label(*in.header, gpu) + " " + what;
  c.finding.evidence = std::move(evidence);
  c.finding.action = std::move(action);
  c.finding.start = c.finding.end = in.sample->t;
  c.brief = std::move(brief);
  return c;
}

}  // namespace gd::check
