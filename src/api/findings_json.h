// GET /api/v1/findings (docs/serve.md, docs/findings.md): the current
// findings, each with its alert state, and the window they were judged on.
// Written by serve, read by `top --connect`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/engine.h"
#include "diagnose/rule.h"

namespace gd::api {

struct FindingAlert {
  std::string state;  // pending | firing
  double since = 0;   // first seen
  double for_s = 0;   // how long it must last to fire
  std::optional<double> firing_since;
};

struct AlertedFinding {
  Finding finding;
  FindingAlert alert;
};

struct FindingsReply {
  std::vector<AlertedFinding> findings;
  DiagnoseWindow window;  // start, end and samples are sent
  std::optional<double> evaluated_at;
  // Rules that could not judge the window (docs/findings.md "not_judged"):
  // a serve with none of these and no findings has judged everything.
  std::vector<NotJudged> not_judged;
};

std::string findings_json(const FindingsReply& r);

// Throws std::runtime_error with one line naming what is wrong: not an
// object, no "findings" array, more than 1000 findings, an unknown
// severity, a field of the wrong type, more than 1000 not_judged entries.
// Texts are cut to 64 KiB; GPU
// indices out of [0, 1024) and pids over 2^32 are left out.
FindingsReply parse_findings_json(std::string_view body);

}  // namespace gd::api
