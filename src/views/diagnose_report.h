// Reports of a diagnosis: text for people, JSON for machines (findings.md
// "Machine-readable output").
#pragma once

#include <string>

#include "diagnose/engine.h"

namespace gd {

// Per finding: "SEVERITY  id  title", then evidence and action lines; then
// the rules that could not judge the window, each with its reason. "All is
// well" only when nothing was found and every rule judged. A window of
// several origins (serve's history, then live) gets a line per part.
std::string format_text_report(const DiagnoseResult& result,
                               const TraceHeader& header);

// One JSON object: {"findings": [...], "window": {...}, "checked": [...],
// "not_judged": [{"id", "reason"}]}; "window" has "parts" when set.
std::string format_json_report(const DiagnoseResult& result);

}  // namespace gd
