#!/usr/bin/env python3
"""An independent NVML client, in the style of pynvml, written from the public
NVML API reference (not from gpudoctor's nvml_api.h). It loads an NVML library
with ctypes and prints what it reads as JSON:

  pynvml_style_client.py [--lib PATH]   (default: libnvidia-ml.so.1)

Output: {"driver_version", "device_count", "gpus": [{"index", "name", "uuid",
"memory": {"total", "free", "used"}, "memory_v2": {"total", "reserved", "free",
"used"}, "utilization": {"gpu", "memory"}, "temperature_c", "power_mw",
"remapped_rows": {"correctable", "uncorrectable", "pending", "failure"},
"compute_processes": [{"pid", "used_gpu_memory", "gpu_instance_id",
"compute_instance_id"}], "is_mig_device", "mig": {"current", "pending",
"devices": [{"gpu_instance_id", "compute_instance_id", "uuid", "name",
"profile", "memory": {"total", "used"}}]}, "nvlinks": [{"link", "active",
"version", "crc_errors", "replays", "recoveries"}], "gpm": {"supported",
"sm_util", "sm_occupancy", "any_tensor_util", "dram_bw_util", "fp64_util",
"fp32_util", "fp16_util", "graphics_util"}, "process_utilization": [{"pid",
"sm", "mem"}]}]}.
A call that fails gives {"error": NVML's error string} in place of its value;
used_gpu_memory is null where NVML says NVML_VALUE_NOT_AVAILABLE.
"""

import argparse
import ctypes
import json
import sys
import time

NVML_SUCCESS = 0
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_TEMPERATURE_GPU = 0
NVML_VALUE_NOT_AVAILABLE_ULL = 2**64 - 1


class NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class NvmlMemoryV2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


# NVML's versioned-struct rule: the struct's size | version << 24.
NVML_MEMORY_V2 = ctypes.sizeof(NvmlMemoryV2) | (2 << 24)


class NvmlUtilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class NvmlProcessInfo(ctypes.Structure):  # the _v2/_v3 layout
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


class NvmlProcessUtilizationSample(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("timeStamp", ctypes.c_ulonglong),
                ("smUtil", ctypes.c_uint), ("memUtil", ctypes.c_uint),
                ("encUtil", ctypes.c_uint), ("decUtil", ctypes.c_uint)]


class NvmlGpuInstanceProfileInfoV2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("id", ctypes.c_uint),
                ("isP2pSupported", ctypes.c_uint), ("sliceCount", ctypes.c_uint),
                ("instanceCount", ctypes.c_uint), ("multiprocessorCount", ctypes.c_uint),
                ("copyEngineCount", ctypes.c_uint), ("decoderCount", ctypes.c_uint),
                ("encoderCount", ctypes.c_uint), ("jpegCount", ctypes.c_uint),
                ("ofaCount", ctypes.c_uint), ("memorySizeMB", ctypes.c_ulonglong),
                ("name", ctypes.c_char * 96)]


NVML_GPU_INSTANCE_PROFILE_INFO_V2 = ctypes.sizeof(NvmlGpuInstanceProfileInfoV2) | (2 << 24)
NVML_GPU_INSTANCE_PROFILE_COUNT = 8


class NvmlGpuInstancePlacement(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint), ("size", ctypes.c_uint)]


class NvmlGpuInstanceInfo(ctypes.Structure):
    _fields_ = [("device", ctypes.c_void_p), ("id", ctypes.c_uint),
                ("profileId", ctypes.c_uint), ("placement", NvmlGpuInstancePlacement)]


class NvmlGpmMetricInfo(ctypes.Structure):
    _fields_ = [("shortName", ctypes.c_char_p), ("longName", ctypes.c_char_p),
                ("unit", ctypes.c_char_p)]


class NvmlGpmMetric(ctypes.Structure):
    _fields_ = [("metricId", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint),
                ("value", ctypes.c_double), ("metricInfo", NvmlGpmMetricInfo)]


NVML_GPM_METRIC_MAX = 98
NVML_GPM_METRICS_GET_VERSION = 1
NVML_GPM_SUPPORT_VERSION = 1
GPM_METRICS = {"graphics_util": 1, "sm_util": 2, "sm_occupancy": 3, "any_tensor_util": 5,
               "dram_bw_util": 10, "fp64_util": 11, "fp32_util": 12, "fp16_util": 13}


class NvmlGpmMetricsGet(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("numMetrics", ctypes.c_uint),
                ("sample1", ctypes.c_void_p), ("sample2", ctypes.c_void_p),
                ("metrics", NvmlGpmMetric * NVML_GPM_METRIC_MAX)]


class NvmlGpmSupport(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("isSupportedDevice", ctypes.c_uint)]


NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_NVLINK_MAX_LINKS = 18
NVML_NVLINK_ERROR_DL_REPLAY = 0
NVML_NVLINK_ERROR_DL_RECOVERY = 1
NVML_NVLINK_ERROR_DL_CRC_FLIT = 2


class NvmlError(Exception):
    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class Nvml:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.nvmlErrorString.restype = ctypes.c_char_p

    def check(self, rc):
        if rc != NVML_SUCCESS:
            raise NvmlError(self.lib.nvmlErrorString(rc).decode(), rc)

    def call(self, name, *args):
        self.check(getattr(self.lib, name)(*args))

    def string(self, name, *args, size=96):
        buf = ctypes.create_string_buffer(size)
        self.call(name, *args, buf, ctypes.c_uint(size))
        return buf.value.decode()

    def compute_processes(self, handle):
        fn = self.lib.nvmlDeviceGetComputeRunningProcesses_v3
        count = ctypes.c_uint(0)
        rc = fn(handle, ctypes.byref(count), None)  # first call: how many?
        if rc == NVML_SUCCESS:
            return []
        if rc != NVML_ERROR_INSUFFICIENT_SIZE:
            self.check(rc)
        infos = (NvmlProcessInfo * count.value)()
        self.check(fn(handle, ctypes.byref(count), infos))
        no_instance = 0xFFFFFFFF
        return [{"pid": infos[i].pid,
                 "used_gpu_memory": None if infos[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL
                 else infos[i].usedGpuMemory,
                 "gpu_instance_id": None if infos[i].gpuInstanceId == no_instance
                 else infos[i].gpuInstanceId,
                 "compute_instance_id": None if infos[i].computeInstanceId == no_instance
                 else infos[i].computeInstanceId}
                for i in range(count.value)]

    def uint(self, name, *args):
        v = ctypes.c_uint()
        self.call(name, *args, ctypes.byref(v))
        return v.value

    def mig(self, handle):
        cur, pend = ctypes.c_uint(), ctypes.c_uint()
        self.call("nvmlDeviceGetMigMode", handle, ctypes.byref(cur), ctypes.byref(pend))
        out = {"current": cur.value, "pending": pend.value, "devices": []}
        # GPU instance profile id -> name, by profile index.
        names = {}
        for index in range(NVML_GPU_INSTANCE_PROFILE_COUNT):
            info = NvmlGpuInstanceProfileInfoV2(version=NVML_GPU_INSTANCE_PROFILE_INFO_V2)
            rc = self.lib.nvmlDeviceGetGpuInstanceProfileInfoV(handle, ctypes.c_uint(index),
                                                               ctypes.byref(info))
            if rc == NVML_SUCCESS:
                names[info.id] = info.name.decode().removeprefix("MIG ")
        for i in range(self.uint("nvmlDeviceGetMaxMigDeviceCount", handle)):
            mig = ctypes.c_void_p()
            rc = self.lib.nvmlDeviceGetMigDeviceHandleByIndex(handle, ctypes.c_uint(i),
                                                              ctypes.byref(mig))
            if rc == NVML_ERROR_NOT_FOUND:
                continue
            self.check(rc)
            gi = self.uint("nvmlDeviceGetGpuInstanceId", mig)
            gi_handle = ctypes.c_void_p()
            self.call("nvmlDeviceGetGpuInstanceById", handle, ctypes.c_uint(gi),
                      ctypes.byref(gi_handle))
            gi_info = NvmlGpuInstanceInfo()
            self.call("nvmlGpuInstanceGetInfo", gi_handle, ctypes.byref(gi_info))
            m = NvmlMemory()
            self.call("nvmlDeviceGetMemoryInfo", mig, ctypes.byref(m))
            out["devices"].append({
                "gpu_instance_id": gi,
                "compute_instance_id": self.uint("nvmlDeviceGetComputeInstanceId", mig),
                "uuid": self.string("nvmlDeviceGetUUID", mig),
                "name": self.string("nvmlDeviceGetName", mig),
                "profile": names.get(gi_info.profileId),
                "memory": {"total": m.total, "used": m.used}})
        return out

    def nvlinks(self, handle):
        links = []
        for link in range(NVML_NVLINK_MAX_LINKS):
            state = ctypes.c_uint()
            rc = self.lib.nvmlDeviceGetNvLinkState(handle, ctypes.c_uint(link), ctypes.byref(state))
            if rc in (NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_INVALID_ARGUMENT):
                break  # no NVLink, or past the GPU's last link
            self.check(rc)

            def counter(kind):
                v = ctypes.c_ulonglong()
                self.call("nvmlDeviceGetNvLinkErrorCounter", handle, ctypes.c_uint(link),
                          ctypes.c_uint(kind), ctypes.byref(v))
                return v.value
            links.append({"link": link, "active": state.value == 1,
                          "version": self.uint("nvmlDeviceGetNvLinkVersion", handle,
                                               ctypes.c_uint(link)),
                          "crc_errors": counter(NVML_NVLINK_ERROR_DL_CRC_FLIT),
                          "replays": counter(NVML_NVLINK_ERROR_DL_REPLAY),
                          "recoveries": counter(NVML_NVLINK_ERROR_DL_RECOVERY)})
        return links

    def gpm(self, handle):
        support = NvmlGpmSupport(version=NVML_GPM_SUPPORT_VERSION)
        self.call("nvmlGpmQueryDeviceSupport", handle, ctypes.byref(support))
        out = {"supported": support.isSupportedDevice}
        if not support.isSupportedDevice:
            return out
        samples = [ctypes.c_void_p(), ctypes.c_void_p()]
        for s in samples:
            self.call("nvmlGpmSampleAlloc", ctypes.byref(s))
        try:
            self.call("nvmlGpmSampleGet", handle, samples[0])
            time.sleep(0.05)
            self.call("nvmlGpmSampleGet", handle, samples[1])
            req = NvmlGpmMetricsGet(version=NVML_GPM_METRICS_GET_VERSION,
                                    numMetrics=len(GPM_METRICS),
                                    sample1=samples[0], sample2=samples[1])
            for i, metric_id in enumerate(GPM_METRICS.values()):
                req.metrics[i].metricId = metric_id
            self.call("nvmlGpmMetricsGet", ctypes.byref(req))
            for i, name in enumerate(GPM_METRICS):
                m = req.metrics[i]
                out[name] = m.value if m.nvmlReturn == NVML_SUCCESS else None
        finally:
            for s in samples:
                self.lib.nvmlGpmSampleFree(s)
        return out

    def process_utilization(self, handle):
        fn = self.lib.nvmlDeviceGetProcessUtilization
        count = ctypes.c_uint(0)
        rc = fn(handle, None, ctypes.byref(count), ctypes.c_ulonglong(0))
        if rc == NVML_ERROR_NOT_FOUND:
            return []
        if rc != NVML_ERROR_INSUFFICIENT_SIZE:
            self.check(rc)
        buf = (NvmlProcessUtilizationSample * count.value)()
        self.check(fn(handle, buf, ctypes.byref(count), ctypes.c_ulonglong(0)))
        return [{"pid": buf[i].pid, "sm": buf[i].smUtil, "mem": buf[i].memUtil}
                for i in range(count.value)]


def guarded(fn):
    try:
        return fn()
    except NvmlError as e:
        return {"error": str(e)}


def read_gpu(nvml, index):
    handle = ctypes.c_void_p()
    nvml.call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
    gpu = {"index": index}
    gpu["name"] = guarded(lambda: nvml.string("nvmlDeviceGetName", handle))
    gpu["uuid"] = guarded(lambda: nvml.string("nvmlDeviceGetUUID", handle))

    def memory():
        m = NvmlMemory()
        nvml.call("nvmlDeviceGetMemoryInfo", handle, ctypes.byref(m))
        return {"total": m.total, "free": m.free, "used": m.used}

    def memory_v2():
        m = NvmlMemoryV2(version=NVML_MEMORY_V2)
        nvml.call("nvmlDeviceGetMemoryInfo_v2", handle, ctypes.byref(m))
        return {"total": m.total, "reserved": m.reserved, "free": m.free, "used": m.used}

    def remapped_rows():
        corr, unc, pending, failure = (ctypes.c_uint() for _ in range(4))
        nvml.call("nvmlDeviceGetRemappedRows", handle, ctypes.byref(corr), ctypes.byref(unc),
                  ctypes.byref(pending), ctypes.byref(failure))
        return {"correctable": corr.value, "uncorrectable": unc.value,
                "pending": pending.value, "failure": failure.value}

    def utilization():
        u = NvmlUtilization()
        nvml.call("nvmlDeviceGetUtilizationRates", handle, ctypes.byref(u))
        return {"gpu": u.gpu, "memory": u.memory}

    def temperature():
        t = ctypes.c_uint()
        nvml.call("nvmlDeviceGetTemperature", handle, ctypes.c_int(NVML_TEMPERATURE_GPU),
                  ctypes.byref(t))
        return t.value

    def power():
        p = ctypes.c_uint()
        nvml.call("nvmlDeviceGetPowerUsage", handle, ctypes.byref(p))
        return p.value

    gpu["memory"] = guarded(memory)
    gpu["memory_v2"] = guarded(memory_v2)
    gpu["remapped_rows"] = guarded(remapped_rows)
    gpu["utilization"] = guarded(utilization)
    gpu["temperature_c"] = guarded(temperature)
    gpu["power_mw"] = guarded(power)
    gpu["compute_processes"] = guarded(lambda: nvml.compute_processes(handle))
    gpu["is_mig_device"] = guarded(lambda: nvml.uint("nvmlDeviceIsMigDeviceHandle", handle))
    gpu["mig"] = guarded(lambda: nvml.mig(handle))
    gpu["nvlinks"] = guarded(lambda: nvml.nvlinks(handle))
    gpu["gpm"] = guarded(lambda: nvml.gpm(handle))
    gpu["process_utilization"] = guarded(lambda: nvml.process_utilization(handle))
    return gpu


def main():
    ap = argparse.ArgumentParser(description="NVML ctypes client")
    ap.add_argument("--lib", default="libnvidia-ml.so.1")
    args = ap.parse_args()
    nvml = Nvml(args.lib)
    try:
        nvml.call("nvmlInit_v2")
    except NvmlError as e:
        print(json.dumps({"init_error": str(e)}))
        return 1
    try:
        out = {"driver_version": nvml.string("nvmlSystemGetDriverVersion", size=80)}
        count = ctypes.c_uint()
        nvml.call("nvmlDeviceGetCount_v2", ctypes.byref(count))
        out["device_count"] = count.value
        out["gpus"] = [read_gpu(nvml, i) for i in range(count.value)]
    finally:
        nvml.call("nvmlShutdown")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
