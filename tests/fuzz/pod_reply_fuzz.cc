// What the kubelet's pod-resources API and the container runtime's CRI
// send (pods/reply_json.h), and the JSON libgpudoctor-pods.so hands
// gpudoctor (pods/pod_snapshot.h). The first byte picks the input:
//   0: the plugin's JSON itself, read by parse_pod_snapshot;
//   1-4: a protobuf reply (List, GetAllocatableResources, ListPodSandbox,
//        ListContainers) as the socket sent it, decoded by protobuf,
//        turned into the plugin's JSON and read back.
// Accepted or not, the snapshot stays within pods_limits.h: counts and
// string lengths capped, every allocation's id non-empty where the kubelet
// gave one, no replica negative.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "pods/pod_snapshot.h"
#include "pods/pods_limits.h"
#include "pods/reply_json.h"

namespace {

using gd::pods::PodSnapshot;
using nlohmann::json;

void check(const PodSnapshot& s, std::string_view input) {
  using namespace gd::pods;
  FUZZ_CHECK(s.allocations.size() <= kMaxAllocations, input);
  FUZZ_CHECK(s.kubelet_pods.size() <= kMaxPods, input);
  FUZZ_CHECK(s.containers.size() <= kMaxRuntimeContainers, input);
  FUZZ_CHECK(s.pods_by_uid.size() <= kMaxPods, input);
  FUZZ_CHECK(s.kubelet_error.size() <= kMaxName, input);
  FUZZ_CHECK(s.runtime_error.size() <= kMaxName, input);
  for (const Allocation& a : s.allocations) {
    FUZZ_CHECK(a.id.size() <= kMaxName && a.resource.size() <= kMaxName, input);
    FUZZ_CHECK(a.pod.name.size() <= kMaxName &&
                   a.pod.namespace_.size() <= kMaxName &&
                   a.pod.container.size() <= kMaxName,
               input);
    FUZZ_CHECK(!a.replica || *a.replica >= 0, input);
  }
  for (const auto& [id, pod] : s.containers)
    FUZZ_CHECK(id.size() == 12 && pod.name.size() <= kMaxName, input);
  for (const std::string& id : s.allocatable)
    FUZZ_CHECK(id.size() <= kMaxName, input);
}

// The plugin's document around one converted reply, as pods_plugin.cc
// writes it.
std::string snapshot_of(uint8_t kind, std::string_view bytes) {
  using namespace gd::pods;
  json kubelet = {{"error", nullptr},
                  {"pods", json::array()},
                  {"allocatable", json::array()}};
  json runtime = {{"error", nullptr},
                  {"sandboxes", json::array()},
                  {"containers", json::array()}};
  const int size = static_cast<int>(bytes.size());
  if (kind == 1) {
    v1::ListPodResourcesResponse r;
    if (!r.ParseFromArray(bytes.data(), size)) return "";
    kubelet["pods"] = pods_json(r);
  } else if (kind == 2) {
    v1::AllocatableResourcesResponse r;
    if (!r.ParseFromArray(bytes.data(), size)) return "";
    kubelet["allocatable"] = allocatable_json(r);
  } else if (kind == 3) {
    runtime::v1::ListPodSandboxResponse r;
    if (!r.ParseFromArray(bytes.data(), size)) return "";
    runtime["sandboxes"] = sandboxes_json(r);
  } else {
    runtime::v1::ListContainersResponse r;
    if (!r.ParseFromArray(bytes.data(), size)) return "";
    runtime["containers"] = containers_json(r);
  }
  return json{{"kubelet", kubelet}, {"runtime", runtime}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  const uint8_t kind = data[0] % 5;
  if (kind == 0) {
    check(gd::pods::parse_pod_snapshot(rest), rest);
    return 0;
  }
  const std::string doc = snapshot_of(kind, rest);
  if (doc.empty()) return 0;  // protobuf refused it: gRPC would too
  FUZZ_CHECK(doc.size() <= gd::pods::kMaxSnapshotBytes, rest);
  check(gd::pods::parse_pod_snapshot(doc), rest);
  return 0;
}
