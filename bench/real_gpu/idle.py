# Used by bench/real_gpu/issue25.sh.
# Holds 10 GiB on the GPU and computes nothing (a forgotten notebook kernel).
import time, torch
x = torch.empty(10 * 2**30, dtype=torch.uint8, device="cuda").fill_(1)
torch.cuda.synchronize()
time.sleep(600)
