// The kubelet's and the runtime's replies (protobuf messages, decoded by
// protobuf from what the sockets sent) as the JSON libgpudoctor-pods.so
// hands gpudoctor (pods_plugin_abi.h), read back by pod_snapshot.h. Every
// count and string is capped here (pods_limits.h): a lying server's reply
// leaves the plugin bounded. Apart from the gRPC calls so that the
// conversion is fuzzed (tests/fuzz/pod_reply_fuzz.cc).
#pragma once

#include <nlohmann/json.hpp>

#include "cri_runtime_v1.pb.h"
#include "podresources_v1.pb.h"

namespace gd::pods {

// [{"namespace","name","containers":[{"name","devices":[...]}]}]
nlohmann::json pods_json(const v1::ListPodResourcesResponse& reply);
// [{"resource","ids":[...]}]
nlohmann::json allocatable_json(const v1::AllocatableResourcesResponse& reply);
// [{"id","uid","namespace","name","ready"}]
nlohmann::json sandboxes_json(const runtime::v1::ListPodSandboxResponse& reply);
// [{"id","sandbox_id","name","running"}]
nlohmann::json containers_json(
    const runtime::v1::ListContainersResponse& reply);

}  // namespace gd::pods
