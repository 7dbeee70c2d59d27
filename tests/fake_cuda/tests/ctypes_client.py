#!/usr/bin/env python3
"""A CUDA driver API client written from the public API reference alone, in
another language than the project (ctypes): it must be able to use the fake
libcuda.so.1 as it would use the real one. Lists the devices, allocates,
copies, JIT-loads a PTX module and runs a kernel, then times it with events.
    ctypes_client.py --lib libcuda.so.1 --scenario S.jsonl --ptx module.ptx
"""
import argparse
import ctypes as C
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--ptx", required=True)
    a = ap.parse_args()
    os.environ["FAKE_CUDA_SCENARIO"] = a.scenario
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    cu = C.CDLL(a.lib)

    def ok(rc, what):
        if rc != 0:
            name = C.c_char_p()
            cu.cuGetErrorName(rc, C.byref(name))
            sys.exit(f"{what} failed: {rc} {name.value}")

    ok(cu.cuInit(0), "cuInit")
    n = C.c_int()
    ok(cu.cuDeviceGetCount(C.byref(n)), "cuDeviceGetCount")
    assert n.value == 4, n.value
    bus = C.create_string_buffer(32)
    name = C.create_string_buffer(128)
    ok(cu.cuDeviceGetPCIBusId(bus, 32, 0), "cuDeviceGetPCIBusId")
    ok(cu.cuDeviceGetName(name, 128, 0), "cuDeviceGetName")
    assert bus.value == b"0000:07:00.0", bus.value
    assert name.value == b"NVIDIA A100-SXM4-80GB", name.value

    ctx = C.c_void_p()
    ok(cu.cuCtxCreate_v2(C.byref(ctx), 0, 0), "cuCtxCreate_v2")
    count = 4096
    dptr = C.c_uint64()
    ok(cu.cuMemAlloc_v2(C.byref(dptr), C.c_size_t(count * 4)), "cuMemAlloc_v2")
    with open(a.ptx, "rb") as f:
        image = C.create_string_buffer(f.read())
    module = C.c_void_p()
    ok(cu.cuModuleLoadData(C.byref(module), image), "cuModuleLoadData")
    fn = C.c_void_p()
    ok(cu.cuModuleGetFunction(C.byref(fn), module, b"gd_mem_fill"), "cuModuleGetFunction")
    missing = C.c_void_p()
    assert cu.cuModuleGetFunction(C.byref(missing), module, b"nope") == 500  # NOT_FOUND

    stream, start, end = C.c_void_p(), C.c_void_p(), C.c_void_p()
    ok(cu.cuStreamCreate(C.byref(stream), 0), "cuStreamCreate")
    ok(cu.cuEventCreate(C.byref(start), 0), "cuEventCreate")
    ok(cu.cuEventCreate(C.byref(end), 0), "cuEventCreate")
    base, words = C.c_uint64(dptr.value), C.c_uint64(count)
    mode, param = C.c_uint32(0), C.c_uint32(0xC0FFEE)
    args = (C.c_void_p * 4)(*[C.cast(C.byref(x), C.c_void_p) for x in (base, words, mode, param)])
    ok(cu.cuEventRecord(start, stream), "cuEventRecord")
    ok(cu.cuLaunchKernel(fn, 16, 1, 1, 256, 1, 1, 0, stream, args, None), "cuLaunchKernel")
    ok(cu.cuEventRecord(end, stream), "cuEventRecord")
    ok(cu.cuEventSynchronize(end), "cuEventSynchronize")
    ms = C.c_float()
    ok(cu.cuEventElapsedTime(C.byref(ms), start, end), "cuEventElapsedTime")
    assert 0 < ms.value < 1000, ms.value
    host = (C.c_uint32 * count)()
    ok(cu.cuMemcpyDtoH_v2(host, dptr, C.c_size_t(count * 4)), "cuMemcpyDtoH_v2")
    assert all(v == 0xC0FFEE for v in host), hex(host[0])
    ok(cu.cuMemFree_v2(dptr), "cuMemFree_v2")
    ok(cu.cuCtxDestroy_v2(ctx), "cuCtxDestroy_v2")
    print("ctypes client: 4 devices, kernel ran, %.3f ms" % ms.value)


if __name__ == "__main__":
    main()
