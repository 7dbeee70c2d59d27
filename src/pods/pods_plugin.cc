// libgpudoctor-pods.so: one reading of the kubelet's pod-resources API and
// the container runtime's CRI over their Unix sockets (pods_plugin_abi.h).
// Each call has its deadline; a service that is absent, slow or refuses is
// an "error" in the reply, never a hang. Everything read is capped
// (pods_limits.h, reply_json.h) before it is written out.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <nlohmann/json.hpp>
#include <string>

#include "cri_runtime_v1.grpc.pb.h"
#include "podresources_v1.grpc.pb.h"
#include "pods/pods_limits.h"
#include "pods/pods_plugin_abi.h"
#include "pods/reply_json.h"

namespace gd::pods {
namespace {

using nlohmann::json;

std::string capped(const std::string& s) { return s.substr(0, kMaxName); }

std::shared_ptr<grpc::Channel> unix_channel(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReplyBytes);
  // One local daemon: no retries behind our back, no DNS.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  return grpc::CreateCustomChannel("unix:" + socket,
                                   grpc::InsecureChannelCredentials(), args);
}

void set_deadline(grpc::ClientContext& ctx, int deadline_ms) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(deadline_ms));
}

std::string why(const grpc::Status& s) {
  return capped(std::to_string(static_cast<int>(s.error_code())) + " " +
                s.error_message());
}

json read_kubelet(const std::string& socket, int deadline_ms) {
  json out = {{"error", nullptr},
              {"pods", json::array()},
              {"allocatable", json::array()}};
  auto stub = v1::PodResourcesLister::NewStub(unix_channel(socket));
  {
    grpc::ClientContext ctx;
    set_deadline(ctx, deadline_ms);
    v1::ListPodResourcesResponse reply;
    grpc::Status s = stub->List(&ctx, v1::ListPodResourcesRequest(), &reply);
    if (!s.ok()) {
      out["error"] = "List: " + why(s);
      return out;
    }
    out["pods"] = pods_json(reply);
  }
  grpc::ClientContext ctx;
  set_deadline(ctx, deadline_ms);
  v1::AllocatableResourcesResponse reply;
  grpc::Status s = stub->GetAllocatableResources(
      &ctx, v1::AllocatableResourcesRequest(), &reply);
  if (s.ok())
    out["allocatable"] = allocatable_json(reply);
  else  // older kubelets lack it: the pods alone are still right
    out["allocatable_error"] = "GetAllocatableResources: " + why(s);
  return out;
}

json read_runtime(const std::string& socket, int deadline_ms) {
  json out = {{"error", nullptr},
              {"sandboxes", json::array()},
              {"containers", json::array()}};
  auto stub = runtime::v1::RuntimeService::NewStub(unix_channel(socket));
  {
    grpc::ClientContext ctx;
    set_deadline(ctx, deadline_ms);
    runtime::v1::ListPodSandboxResponse reply;
    grpc::Status s = stub->ListPodSandbox(
        &ctx, runtime::v1::ListPodSandboxRequest(), &reply);
    if (!s.ok()) {
      out["error"] = "ListPodSandbox: " + why(s);
      return out;
    }
    out["sandboxes"] = sandboxes_json(reply);
  }
  grpc::ClientContext ctx;
  set_deadline(ctx, deadline_ms);
  runtime::v1::ListContainersResponse reply;
  grpc::Status s =
      stub->ListContainers(&ctx, runtime::v1::ListContainersRequest(), &reply);
  if (!s.ok()) {
    out["error"] = "ListContainers: " + why(s);
    return out;
  }
  out["containers"] = containers_json(reply);
  return out;
}

}  // namespace
}  // namespace gd::pods

extern "C" __attribute__((visibility("default"))) int gd_pods_snapshot_v1(
    const char* pod_resources_socket, const char* cri_socket, int deadline_ms,
    size_t max_bytes, char** out) {
  using gd::pods::read_kubelet;
  using gd::pods::read_runtime;
  try {
    nlohmann::json j = nlohmann::json::object();
    // Both services at once: a hung kubelet costs its deadline, not the
    // runtime's too.
    std::future<nlohmann::json> kubelet;
    if (pod_resources_socket && *pod_resources_socket)
      kubelet = std::async(std::launch::async, read_kubelet,
                           std::string(pod_resources_socket), deadline_ms);
    if (cri_socket && *cri_socket)
      j["runtime"] = read_runtime(cri_socket, deadline_ms);
    if (kubelet.valid()) j["kubelet"] = kubelet.get();
    std::string text =
        j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() + 1 > max_bytes)
      text = R"({"error":"the pods' listing exceeds its bound"})";
    char* buf = static_cast<char*>(std::malloc(text.size() + 1));
    if (!buf) return 1;
    std::memcpy(buf, text.c_str(), text.size() + 1);
    *out = buf;
    return 0;
  } catch (...) {
    return 1;
  }
}

extern "C" __attribute__((visibility("default"))) void gd_pods_free_v1(
    char* json) {
  std::free(json);
}
