// How a Kubernetes pod reads wherever gpudoctor names one:
// "ml/train-0/main" (namespace/pod/container), "ml/train-0" while the
// container is unknown, "pod 1a2b3c4d-..." when only the cgroup's UID is
// known, each with " (deleted)" once the kubelet no longer lists it. Raw
// text: the names are the pod owner's choice, so every terminal view passes
// them through common/terminal_text.h.
#pragma once

#include <optional>
#include <string>

#include "model/sample.h"

namespace gd {

// "" when `pod` is nullopt.
std::string pod_label(const std::optional<ProcessPod>& pod);
std::string pod_label(const ProcessPod& pod);

// `ps --pod/--namespace`: whether a process's pod is the one asked for.
// `name` is a pod name or "namespace/name" ("" any); `namespace_` a
// namespace ("" any). A process not in a pod, or whose names are unknown,
// matches neither.
bool pod_matches(const std::optional<ProcessPod>& pod, const std::string& name,
                 const std::string& namespace_);

}  // namespace gd
