#!/usr/bin/env python3
"""A kubelet and a container runtime for the tests, speaking the real
protocols over Unix sockets: the kubelet's pod-resources API
(v1.PodResourcesLister: List, GetAllocatableResources) and the CRI
(runtime.v1.RuntimeService: ListPodSandbox, ListContainers), compiled at
start from gpudoctor's own .proto files (src/pods/proto) with Debian's
python3-grpc-tools.

    fake_kubelet.py --state STATE.json --pod-resources SOCK --cri SOCK

STATE.json, read again on every call (a test deletes a pod by rewriting it):
    {"allocatable": [{"resource": "nvidia.com/gpu", "ids": ["GPU-..."]}],
     "pods": [{"namespace": "ml", "name": "train-0", "uid": "...",
               "sandbox_id": "...",
               "containers": [{"name": "main", "id": "<64 hex>",
                               "devices": [{"resource": "nvidia.com/gpu",
                                            "ids": ["GPU-...::0"]}]}]}],
     "faults": {"delay_s": 0, "fail": false}}
A pod with "runtime_only": true is known to the runtime, not the kubelet;
"kubelet_only": true the other way round. "delay_s" makes every call that
slow (a hung kubelet); "fail" answers UNAVAILABLE.
Prints "ready" on stdout once both sockets listen."""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent import futures

import grpc
from grpc_tools import protoc

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "pods",
                         "proto")


def compile_protos():
    out = tempfile.mkdtemp(prefix="fake_kubelet_")
    args = ["protoc", f"-I{PROTO_DIR}", f"--python_out={out}", f"--grpc_python_out={out}",
            "podresources_v1.proto", "cri_runtime_v1.proto"]
    if protoc.main(args) != 0:
        shutil.rmtree(out, ignore_errors=True)
        sys.exit("fake_kubelet: protoc failed")
    sys.path.insert(0, out)
    return out


class State:
    def __init__(self, path):
        self.path = path

    def read(self):
        with open(self.path) as f:
            s = json.load(f)
        faults = s.get("faults", {})
        if faults.get("delay_s"):
            time.sleep(faults["delay_s"])
        return s, faults.get("fail", False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True)
    ap.add_argument("--pod-resources", required=True)
    ap.add_argument("--cri", required=True)
    a = ap.parse_args()
    generated = compile_protos()
    import cri_runtime_v1_pb2 as cri
    import cri_runtime_v1_pb2_grpc as cri_grpc
    import podresources_v1_pb2 as pr
    import podresources_v1_pb2_grpc as pr_grpc
    # Imported: the generated modules are in memory, their folder not needed.
    shutil.rmtree(generated, ignore_errors=True)

    state = State(a.state)

    def devices(msg_list, entries):
        for d in entries:
            msg_list.add(resource_name=d["resource"], device_ids=d["ids"])

    class Kubelet(pr_grpc.PodResourcesListerServicer):
        def List(self, request, context):
            s, fail = state.read()
            if fail:
                context.abort(grpc.StatusCode.UNAVAILABLE, "fake kubelet told to fail")
            reply = pr.ListPodResourcesResponse()
            for p in s.get("pods", []):
                if p.get("runtime_only"):
                    continue
                pod = reply.pod_resources.add(name=p["name"], namespace=p["namespace"])
                for c in p.get("containers", []):
                    devices(pod.containers.add(name=c["name"]).devices, c.get("devices", []))
            return reply

        def GetAllocatableResources(self, request, context):
            s, fail = state.read()
            if fail:
                context.abort(grpc.StatusCode.UNAVAILABLE, "fake kubelet told to fail")
            reply = pr.AllocatableResourcesResponse()
            devices(reply.devices, s.get("allocatable", []))
            return reply

    class Runtime(cri_grpc.RuntimeServiceServicer):
        def ListPodSandbox(self, request, context):
            s, fail = state.read()
            if fail:
                context.abort(grpc.StatusCode.UNAVAILABLE, "fake runtime told to fail")
            reply = cri.ListPodSandboxResponse()
            for p in s.get("pods", []):
                if p.get("kubelet_only"):
                    continue
                reply.items.add(
                    id=p["sandbox_id"], state=cri.SANDBOX_READY,
                    metadata=cri.PodSandboxMetadata(name=p["name"], uid=p["uid"],
                                                    namespace=p["namespace"]),
                    labels={"io.kubernetes.pod.name": p["name"],
                            "io.kubernetes.pod.namespace": p["namespace"],
                            "io.kubernetes.pod.uid": p["uid"]})
            return reply

        def ListContainers(self, request, context):
            s, fail = state.read()
            if fail:
                context.abort(grpc.StatusCode.UNAVAILABLE, "fake runtime told to fail")
            reply = cri.ListContainersResponse()
            for p in s.get("pods", []):
                if p.get("kubelet_only"):
                    continue
                for c in p.get("containers", []):
                    reply.containers.add(
                        id=c["id"], pod_sandbox_id=p["sandbox_id"], state=cri.CONTAINER_RUNNING,
                        metadata=cri.ContainerMetadata(name=c["name"]),
                        labels={"io.kubernetes.container.name": c["name"],
                                "io.kubernetes.pod.name": p["name"],
                                "io.kubernetes.pod.namespace": p["namespace"],
                                "io.kubernetes.pod.uid": p["uid"]})
            return reply

    servers = []
    for sock, add in ((a.pod_resources, lambda s: pr_grpc.add_PodResourcesListerServicer_to_server(
            Kubelet(), s)), (a.cri, lambda s: cri_grpc.add_RuntimeServiceServicer_to_server(
                Runtime(), s))):
        if os.path.exists(sock):
            os.unlink(sock)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        add(server)
        server.add_insecure_port(f"unix:{sock}")
        server.start()
        servers.append(server)
    print("ready", flush=True)
    try:
        servers[0].wait_for_termination()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
