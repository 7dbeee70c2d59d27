# Used by bench/real_gpu/issue25.sh.
# Grows its GPU memory by `rate` GiB every second for `secs` seconds, then
# holds it (a leak that would fill the GPU in minutes).
import sys, time, torch
rate, secs = float(sys.argv[1]), float(sys.argv[2])
keep = []
end = time.time() + secs
while time.time() < end:
    keep.append(torch.empty(int(rate * 2**30), dtype=torch.uint8, device="cuda").fill_(1))
    torch.cuda.synchronize()
    time.sleep(1)
time.sleep(600)
