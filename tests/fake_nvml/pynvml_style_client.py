#!/usr/bin/env python3
"""An independent NVML client, in the style of pynvml, written from the public
NVML API reference (not from gpudoctor's nvml_api.h). It loads an NVML library
with ctypes and prints what it reads as JSON:

  pynvml_style_client.py [--lib PATH]   (default: libnvidia-ml.so.1)

Output: {"driver_version", "device_count", "gpus": [{"index", "name", "uuid",
"memory": {"total", "free", "used"}, "memory_v2": {"total", "reserved", "free",
"used"}, "utilization": {"gpu", "memory"}, "temperature_c", "power_mw",
"remapped_rows": {"correctable", "uncorrectable", "pending", "failure"},
"compute_processes": [{"pid", "used_gpu_memory"}]}]}.
A call that fails gives {"error": NVML's error string} in place of its value;
used_gpu_memory is null where NVML says NVML_VALUE_NOT_AVAILABLE.
"""

import argparse
import ctypes
import json
import sys

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


class NvmlError(Exception):
    pass


class Nvml:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.nvmlErrorString.restype = ctypes.c_char_p

    def check(self, rc):
        if rc != NVML_SUCCESS:
            raise NvmlError(self.lib.nvmlErrorString(rc).decode())

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
        return [{"pid": infos[i].pid,
                 "used_gpu_memory": None if infos[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL
                 else infos[i].usedGpuMemory}
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
