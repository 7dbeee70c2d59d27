# Used by bench/real_gpu/issue25.sh.
# A GPU job whose steps need the CPU: each step prepares a batch on the CPU
# (a few ms of arithmetic) and then runs a short matmul on the GPU. When
# other work saturates the CPUs, the GPU waits.
import time, torch
torch.set_num_threads(1)
w = torch.randn(4096, 4096, device="cuda")
end = time.time() + 600
while time.time() < end:
    x = torch.randn(512, 4096)
    for _ in range(3):
        x = torch.tanh(x * 1.01 + 0.1)
    y = x.cuda(non_blocking=False) @ w
    for _ in range(10):
        y = y @ w
    torch.cuda.synchronize()
