// One finding as the JSON object of docs/findings.md, shared by
// `diagnose --json` (views/diagnose_report.h) and serve's API.
#pragma once

#include <nlohmann/json.hpp>

#include "diagnose/rule.h"

namespace gd {

nlohmann::json finding_to_json(const Finding& f);

}  // namespace gd
