#!/usr/bin/env python3
"""Turns burn's optimised NVPTX kernel IR into IR for the build host, so the
very IR that becomes the embedded PTX can run on the CPU in a test: drops the
NVPTX target lines and function attributes (target-cpu sm_60), and turns the
PTX special registers (tid.x, ctaid.x, ntid.x, nctaid.x) into calls of host
functions the test defines.
    host_kernels.py IN.opt.ll OUT.host.ll
"""
import re
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    text = open(src).read()
    if "@llvm.nvvm.read.ptx.sreg." not in text:
        sys.exit(f"{src}: no PTX special registers found (not burn's kernel IR?)")
    out = []
    for line in text.splitlines():
        if line.startswith(("target datalayout", "target triple", "attributes #")):
            continue
        line = re.sub(r" #\d+", "", line)
        line = re.sub(r"@llvm\.nvvm\.read\.ptx\.sreg\.(tid|ctaid|ntid|nctaid)\.x",
                      r"@gd_host_\1_x", line)
        out.append(line)
    leftover = [l for l in out if "llvm.nvvm" in l and not l.startswith("!")]
    if leftover:
        sys.exit(f"{src}: NVVM intrinsics the host cannot run: {leftover[0].strip()}")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
