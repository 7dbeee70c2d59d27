# Used by bench/real_gpu/issue25.sh.
# A CUDA process allocates ~6.6 GiB, forks a child that does nothing with
# CUDA (it inherits the device files) and exits. Prints "parent,child".
import os, sys, time
import torch
x = torch.empty(int(6.6 * 2**30), dtype=torch.uint8, device="cuda")
x.fill_(1)
torch.cuda.synchronize()
child = os.fork()
if child == 0:
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.setsid()
    time.sleep(900)
    os._exit(0)
print(f"{os.getpid()},{child}", flush=True)
sys.exit(0)
