// Reports of a diagnosis: text for people, JSON for machines (findings.md
// "Machine-readable output").
#pragma once

#include <string>

#include "diagnose/engine.h"

namespace gd {

// Per finding: "SEVERITY  id  title", then evidence and action lines. With no
// findings, says what was checked (every rule id) and that all is well.
std::string format_text_report(const DiagnoseResult& result,
                               const TraceHeader& header);

// One JSON object: {"findings": [...], "window": {...}, "checked": [...]}.
std::string format_json_report(const DiagnoseResult& result);

}  // namespace gd
