#include "pods/pod_snapshot.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "pods/pods_limits.h"

namespace gd::pods {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get_ref<const std::string&>().substr(0, kMaxName);
}

const json& list(const json& j, const char* key) {
  static const json empty = json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

std::string error_of(const json& service) {
  auto it = service.find("error");
  if (it == service.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>().substr(0, kMaxName)
                         : "unreadable error";
}

void read_kubelet(const json& k, PodSnapshot& out) {
  out.kubelet_asked = true;
  out.kubelet_error = error_of(k);
  size_t pods = 0;
  for (const json& p : list(k, "pods")) {
    if (!p.is_object() || ++pods > kMaxPods) break;
    out.kubelet_pods.insert(str(p, "namespace") + "/" + str(p, "name"));
    size_t containers = 0;
    for (const json& c : list(p, "containers")) {
      if (!c.is_object() || ++containers > kMaxContainersPerPod) break;
      PodName name{"", str(p, "namespace"), str(p, "name"), str(c, "name")};
      size_t devices = 0;
      for (const json& d : list(c, "devices")) {
        if (!d.is_object() || ++devices > kMaxDevicesPerContainer) break;
        size_t ids = 0;
        for (const json& id : list(d, "ids")) {
          if (!id.is_string() || ++ids > kMaxIdsPerDevice ||
              out.allocations.size() >= kMaxAllocations)
            break;
          auto [device, replica] = split_replica(id.get<std::string>());
          out.allocations.push_back(
              {name, str(d, "resource"), device.substr(0, kMaxName), replica});
        }
      }
    }
  }
  size_t ids = 0;
  for (const json& d : list(k, "allocatable"))
    for (const json& id : list(d, "ids"))
      if (id.is_string() && ++ids <= kMaxPods * kMaxIdsPerDevice / 64)
        out.allocatable.push_back(id.get<std::string>().substr(0, kMaxName));
}

void read_runtime(const json& r, PodSnapshot& out) {
  out.runtime_asked = true;
  out.runtime_error = error_of(r);
  std::unordered_map<std::string, PodName> sandboxes;
  for (const json& s : list(r, "sandboxes")) {
    if (!s.is_object() || sandboxes.size() >= kMaxPods) break;
    PodName pod{str(s, "uid"), str(s, "namespace"), str(s, "name"), ""};
    if (!pod.uid.empty()) out.pods_by_uid.emplace(pod.uid, pod);
    sandboxes.emplace(str(s, "id"), std::move(pod));
  }
  for (const json& c : list(r, "containers")) {
    if (!c.is_object() || out.containers.size() >= kMaxRuntimeContainers) break;
    auto sandbox = sandboxes.find(str(c, "sandbox_id"));
    std::string id = str(c, "id");
    if (sandbox == sandboxes.end() || id.size() < 12) continue;
    PodName pod = sandbox->second;
    pod.container = str(c, "name");
    out.containers.emplace(id.substr(0, 12), std::move(pod));
  }
}

}  // namespace

std::string PodName::text() const {
  std::string out = (namespace_.empty() ? "?" : namespace_) + "/" +
                    (name.empty() ? "?" : name);
  if (!container.empty()) out += "/" + container;
  return out;
}

std::pair<std::string, std::optional<int>> split_replica(std::string_view id) {
  size_t sep = id.rfind("::");
  if (sep == std::string_view::npos) return {std::string(id), std::nullopt};
  std::string_view n = id.substr(sep + 2);
  int replica = 0;
  auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), replica);
  if (n.empty() || ec != std::errc() || end != n.data() + n.size() ||
      replica < 0)
    return {std::string(id), std::nullopt};
  return {std::string(id.substr(0, sep)), replica};
}

PodSnapshot parse_pod_snapshot(std::string_view text) {
  PodSnapshot out;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    out.kubelet_error = out.runtime_error =
        "unreadable reply of the pods' library";
    return out;
  }
  if (auto k = j.find("kubelet"); k != j.end() && k->is_object())
    read_kubelet(*k, out);
  if (auto r = j.find("runtime"); r != j.end() && r->is_object())
    read_runtime(*r, out);
  return out;
}

std::optional<PodName> PodSnapshot::pod_of(const ContainerRef& ref) const {
  if (!ref.id.empty())
    if (auto c = containers.find(ref.id.substr(0, 12)); c != containers.end())
      return c->second;
  if (ref.pod_uid.empty()) return std::nullopt;
  if (auto p = pods_by_uid.find(ref.pod_uid); p != pods_by_uid.end())
    return p->second;
  return PodName{ref.pod_uid, "", "", ""};
}

bool PodSnapshot::kubelet_lists(const PodName& pod) const {
  return kubelet_pods.count(pod.namespace_ + "/" + pod.name) > 0;
}

}  // namespace gd::pods
