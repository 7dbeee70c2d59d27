#include "model/pod_label.h"

namespace gd {

std::string pod_label(const ProcessPod& pod) {
  std::string out;
  if (pod.name) {
    out = pod.namespace_.value_or("?") + "/" + *pod.name;
    if (pod.container) out += "/" + *pod.container;
  } else {
    out = "pod " + pod.uid.value_or("?");
  }
  if (pod.deleted.value_or(false)) out += " (deleted)";
  return out;
}

std::string pod_label(const std::optional<ProcessPod>& pod) {
  return pod ? pod_label(*pod) : std::string();
}

bool pod_matches(const std::optional<ProcessPod>& pod, const std::string& name,
                 const std::string& namespace_) {
  if (name.empty() && namespace_.empty()) return true;
  if (!pod) return false;
  if (!namespace_.empty() && pod->namespace_ != namespace_) return false;
  if (name.empty()) return true;
  if (!pod->name) return false;
  const auto slash = name.find('/');
  if (slash == std::string::npos) return *pod->name == name;
  return pod->namespace_ == name.substr(0, slash) &&
         *pod->name == name.substr(slash + 1);
}

}  // namespace gd
