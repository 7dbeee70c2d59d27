#include "pods/reply_json.h"

#include <string>

#include "pods/pods_limits.h"

namespace gd::pods {
namespace {

using nlohmann::json;

std::string capped(const std::string& s) { return s.substr(0, kMaxName); }

json devices_json(
    const google::protobuf::RepeatedPtrField<v1::ContainerDevices>& devices) {
  json out = json::array();
  for (const auto& d : devices) {
    if (out.size() >= kMaxDevicesPerContainer) break;
    json ids = json::array();
    for (const auto& id : d.device_ids()) {
      if (ids.size() >= kMaxIdsPerDevice) break;
      ids.push_back(capped(id));
    }
    out.push_back({{"resource", capped(d.resource_name())}, {"ids", ids}});
  }
  return out;
}

}  // namespace

json pods_json(const v1::ListPodResourcesResponse& reply) {
  json out = json::array();
  size_t devices = 0;  // over all pods: the allocations gpudoctor keeps
  for (const auto& p : reply.pod_resources()) {
    if (out.size() >= kMaxPods) break;
    json containers = json::array();
    for (const auto& c : p.containers()) {
      if (containers.size() >= kMaxContainersPerPod) break;
      json d = devices_json(c.devices());
      for (const json& one : d) devices += one["ids"].size();
      if (devices > kMaxAllocations) d = json::array();
      containers.push_back({{"name", capped(c.name())}, {"devices", d}});
    }
    out.push_back({{"namespace", capped(p.namespace_())},
                   {"name", capped(p.name())},
                   {"containers", containers}});
  }
  return out;
}

json allocatable_json(const v1::AllocatableResourcesResponse& reply) {
  return devices_json(reply.devices());
}

json sandboxes_json(const runtime::v1::ListPodSandboxResponse& reply) {
  json out = json::array();
  for (const auto& p : reply.items()) {
    if (out.size() >= kMaxPods) break;
    out.push_back({{"id", capped(p.id())},
                   {"uid", capped(p.metadata().uid())},
                   {"namespace", capped(p.metadata().namespace_())},
                   {"name", capped(p.metadata().name())},
                   {"ready", p.state() == runtime::v1::SANDBOX_READY}});
  }
  return out;
}

json containers_json(const runtime::v1::ListContainersResponse& reply) {
  json out = json::array();
  for (const auto& c : reply.containers()) {
    if (out.size() >= kMaxRuntimeContainers) break;
    out.push_back({{"id", capped(c.id())},
                   {"sandbox_id", capped(c.pod_sandbox_id())},
                   {"name", capped(c.metadata().name())},
                   {"running", c.state() == runtime::v1::CONTAINER_RUNNING}});
  }
  return out;
}

}  // namespace gd::pods
