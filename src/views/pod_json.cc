#include "views/pod_json.h"

#include "model/pod_label.h"

namespace gd {

nlohmann::json pod_json(const std::optional<ProcessPod>& pod) {
  if (!pod) return nullptr;
  auto text = [](const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  return {{"uid", text(pod->uid)},
          {"namespace", text(pod->namespace_)},
          {"name", text(pod->name)},
          {"container", text(pod->container)},
          {"deleted",
           pod->deleted ? nlohmann::json(*pod->deleted) : nlohmann::json()},
          {"label", pod_label(*pod)}};
}

}  // namespace gd
