// A process's Kubernetes pod in a command's JSON (ps, who): every name,
// null where unknown, and the label the text shows (model/pod_label.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "model/sample.h"

namespace gd {

// null when `pod` is nullopt.
nlohmann::json pod_json(const std::optional<ProcessPod>& pod);

}  // namespace gd
