; gpudoctor burn's GPU kernels, in LLVM IR (typed pointers: LLVM 14, Debian
; 12's llc). Compiled at build time by `llc -march=nvptx64 -mcpu=sm_60
; -mattr=+ptx60` to PTX ISA 6.0 for sm_60, which every driver since CUDA 9
; (2017) JIT-compiles for its GPU; the PTX is embedded in the binary.
;
; Every kernel is a pure function of its parameters and the memory it reads,
; so a CPU can compute the same results (the reference checks in src/burn, the
; fake libcuda.so.1 of the tests). Contracts a caller must keep are written
; above each kernel. Kernels are 1-D: global thread id = ctaid.x * ntid.x +
; tid.x; memory kernels walk their range with a grid-wide stride.

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare float @llvm.fma.f32(float, float, float)
declare double @llvm.fma.f64(double, double, double)

define internal i32 @gd_gid32() {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %cta, %ntid
  %gid = add i32 %base, %tid
  ret i32 %gid
}

define internal i64 @gd_gid64() {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid64 = zext i32 %tid to i64
  %cta64 = zext i32 %cta to i64
  %ntid64 = zext i32 %ntid to i64
  %base = mul i64 %cta64, %ntid64
  %gid = add i64 %base, %tid64
  ret i64 %gid
}

define internal i64 @gd_stride64() {
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %ntid64 = zext i32 %ntid to i64
  %nctaid64 = zext i32 %nctaid to i64
  %stride = mul i64 %ntid64, %nctaid64
  ret i64 %stride
}

; ---- compute: FMA chains --------------------------------------------------
; gd_fma_f32(out, seeds, nseeds, rounds, iters) and gd_fma_f64 (same, double
; seeds, i64 out). Thread g starts from s = seeds[g % nseeds] (nseeds >= 1)
; and runs `rounds` rounds; each round re-reads s, starts 8 independent
; chains at c_j = s + j/16, and applies max(iters, 1) times, 4 times over,
; the pair x = fma(x, A, B); x = fma(x, A2, B2) with A = 1 + 2^-10, B = 2^-7,
; A2 = 1/A and B2 = -B*A2 rounded to the type. The pair is close to the
; identity, so values stay near s, and an error made anywhere survives to
; the end instead of being damped away. A round's result is the chains'
; sum (((c0+c1)+c2)+...+c7), whose bits are added (mod 2^32 or 2^64) into
; out[g]. FLOPs per thread: 2 * 2 * 4 * 8 * max(iters, 1) * rounds.

define void @gd_fma_f32(i32* %out, float* %seeds, i32 %nseeds, i32 %rounds, i32 %iters) {
entry:
  %gid = call i32 @gd_gid32()
  %sidx = urem i32 %gid, %nseeds
  %sidx64 = zext i32 %sidx to i64
  %sp = getelementptr float, float* %seeds, i64 %sidx64
  %any = icmp sgt i32 %rounds, 0
  br i1 %any, label %round, label %store
round:
  %r = phi i32 [ 0, %entry ], [ %r.next, %round.end ]
  %acc = phi i32 [ 0, %entry ], [ %acc.next, %round.end ]
  ; volatile: the seed is re-read every round, so no compiler can hoist
  ; the (identical) work of a round out of the loop.
  %s = load volatile float, float* %sp
  %c0 = fadd float %s, 0.0
  %c1 = fadd float %s, 0x3FB0000000000000
  %c2 = fadd float %s, 0x3FC0000000000000
  %c3 = fadd float %s, 0x3FC8000000000000
  %c4 = fadd float %s, 0x3FD0000000000000
  %c5 = fadd float %s, 0x3FD4000000000000
  %c6 = fadd float %s, 0x3FD8000000000000
  %c7 = fadd float %s, 0x3FDC000000000000
  br label %step
step:
  %i = phi i32 [ 0, %round ], [ %i.next, %step ]
  %x0 = phi float [ %c0, %round ], [ %x0.u3b, %step ]
  %x1 = phi float [ %c1, %round ], [ %x1.u3b, %step ]
  %x2 = phi float [ %c2, %round ], [ %x2.u3b, %step ]
  %x3 = phi float [ %c3, %round ], [ %x3.u3b, %step ]
  %x4 = phi float [ %c4, %round ], [ %x4.u3b, %step ]
  %x5 = phi float [ %c5, %round ], [ %x5.u3b, %step ]
  %x6 = phi float [ %c6, %round ], [ %x6.u3b, %step ]
  %x7 = phi float [ %c7, %round ], [ %x7.u3b, %step ]
  %x0.u0a = call float @llvm.fma.f32(float %x0, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x1.u0a = call float @llvm.fma.f32(float %x1, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x2.u0a = call float @llvm.fma.f32(float %x2, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x3.u0a = call float @llvm.fma.f32(float %x3, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x4.u0a = call float @llvm.fma.f32(float %x4, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x5.u0a = call float @llvm.fma.f32(float %x5, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x6.u0a = call float @llvm.fma.f32(float %x6, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x7.u0a = call float @llvm.fma.f32(float %x7, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x0.u0b = call float @llvm.fma.f32(float %x0.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x1.u0b = call float @llvm.fma.f32(float %x1.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x2.u0b = call float @llvm.fma.f32(float %x2.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x3.u0b = call float @llvm.fma.f32(float %x3.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x4.u0b = call float @llvm.fma.f32(float %x4.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x5.u0b = call float @llvm.fma.f32(float %x5.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x6.u0b = call float @llvm.fma.f32(float %x6.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x7.u0b = call float @llvm.fma.f32(float %x7.u0a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x0.u1a = call float @llvm.fma.f32(float %x0.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x1.u1a = call float @llvm.fma.f32(float %x1.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x2.u1a = call float @llvm.fma.f32(float %x2.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x3.u1a = call float @llvm.fma.f32(float %x3.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x4.u1a = call float @llvm.fma.f32(float %x4.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x5.u1a = call float @llvm.fma.f32(float %x5.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x6.u1a = call float @llvm.fma.f32(float %x6.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x7.u1a = call float @llvm.fma.f32(float %x7.u0b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x0.u1b = call float @llvm.fma.f32(float %x0.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x1.u1b = call float @llvm.fma.f32(float %x1.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x2.u1b = call float @llvm.fma.f32(float %x2.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x3.u1b = call float @llvm.fma.f32(float %x3.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x4.u1b = call float @llvm.fma.f32(float %x4.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x5.u1b = call float @llvm.fma.f32(float %x5.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x6.u1b = call float @llvm.fma.f32(float %x6.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x7.u1b = call float @llvm.fma.f32(float %x7.u1a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x0.u2a = call float @llvm.fma.f32(float %x0.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x1.u2a = call float @llvm.fma.f32(float %x1.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x2.u2a = call float @llvm.fma.f32(float %x2.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x3.u2a = call float @llvm.fma.f32(float %x3.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x4.u2a = call float @llvm.fma.f32(float %x4.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x5.u2a = call float @llvm.fma.f32(float %x5.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x6.u2a = call float @llvm.fma.f32(float %x6.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x7.u2a = call float @llvm.fma.f32(float %x7.u1b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x0.u2b = call float @llvm.fma.f32(float %x0.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x1.u2b = call float @llvm.fma.f32(float %x1.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x2.u2b = call float @llvm.fma.f32(float %x2.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x3.u2b = call float @llvm.fma.f32(float %x3.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x4.u2b = call float @llvm.fma.f32(float %x4.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x5.u2b = call float @llvm.fma.f32(float %x5.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x6.u2b = call float @llvm.fma.f32(float %x6.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x7.u2b = call float @llvm.fma.f32(float %x7.u2a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x0.u3a = call float @llvm.fma.f32(float %x0.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x1.u3a = call float @llvm.fma.f32(float %x1.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x2.u3a = call float @llvm.fma.f32(float %x2.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x3.u3a = call float @llvm.fma.f32(float %x3.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x4.u3a = call float @llvm.fma.f32(float %x4.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x5.u3a = call float @llvm.fma.f32(float %x5.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x6.u3a = call float @llvm.fma.f32(float %x6.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x7.u3a = call float @llvm.fma.f32(float %x7.u2b, float 0x3FF0040000000000, float 0x3F80000000000000)
  %x0.u3b = call float @llvm.fma.f32(float %x0.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x1.u3b = call float @llvm.fma.f32(float %x1.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x2.u3b = call float @llvm.fma.f32(float %x2.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x3.u3b = call float @llvm.fma.f32(float %x3.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x4.u3b = call float @llvm.fma.f32(float %x4.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x5.u3b = call float @llvm.fma.f32(float %x5.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x6.u3b = call float @llvm.fma.f32(float %x6.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %x7.u3b = call float @llvm.fma.f32(float %x7.u3a, float 0x3FEFF80200000000, float 0xBF7FF80200000000)
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %iters
  br i1 %more, label %step, label %round.end
round.end:
  %sum1 = fadd float %x0.u3b, %x1.u3b
  %sum2 = fadd float %sum1, %x2.u3b
  %sum3 = fadd float %sum2, %x3.u3b
  %sum4 = fadd float %sum3, %x4.u3b
  %sum5 = fadd float %sum4, %x5.u3b
  %sum6 = fadd float %sum5, %x6.u3b
  %sum7 = fadd float %sum6, %x7.u3b
  %bits = bitcast float %sum7 to i32
  %acc.next = add i32 %acc, %bits
  %r.next = add i32 %r, 1
  %again = icmp slt i32 %r.next, %rounds
  br i1 %again, label %round, label %store
store:
  %result = phi i32 [ 0, %entry ], [ %acc.next, %round.end ]
  %gid64 = zext i32 %gid to i64
  %op = getelementptr i32, i32* %out, i64 %gid64
  store i32 %result, i32* %op
  ret void
}

define void @gd_fma_f64(i64* %out, double* %seeds, i32 %nseeds, i32 %rounds, i32 %iters) {
entry:
  %gid = call i32 @gd_gid32()
  %sidx = urem i32 %gid, %nseeds
  %sidx64 = zext i32 %sidx to i64
  %sp = getelementptr double, double* %seeds, i64 %sidx64
  %any = icmp sgt i32 %rounds, 0
  br i1 %any, label %round, label %store
round:
  %r = phi i32 [ 0, %entry ], [ %r.next, %round.end ]
  %acc = phi i64 [ 0, %entry ], [ %acc.next, %round.end ]
  ; volatile: the seed is re-read every round, so no compiler can hoist
  ; the (identical) work of a round out of the loop.
  %s = load volatile double, double* %sp
  %c0 = fadd double %s, 0.0
  %c1 = fadd double %s, 0x3FB0000000000000
  %c2 = fadd double %s, 0x3FC0000000000000
  %c3 = fadd double %s, 0x3FC8000000000000
  %c4 = fadd double %s, 0x3FD0000000000000
  %c5 = fadd double %s, 0x3FD4000000000000
  %c6 = fadd double %s, 0x3FD8000000000000
  %c7 = fadd double %s, 0x3FDC000000000000
  br label %step
step:
  %i = phi i32 [ 0, %round ], [ %i.next, %step ]
  %x0 = phi double [ %c0, %round ], [ %x0.u3b, %step ]
  %x1 = phi double [ %c1, %round ], [ %x1.u3b, %step ]
  %x2 = phi double [ %c2, %round ], [ %x2.u3b, %step ]
  %x3 = phi double [ %c3, %round ], [ %x3.u3b, %step ]
  %x4 = phi double [ %c4, %round ], [ %x4.u3b, %step ]
  %x5 = phi double [ %c5, %round ], [ %x5.u3b, %step ]
  %x6 = phi double [ %c6, %round ], [ %x6.u3b, %step ]
  %x7 = phi double [ %c7, %round ], [ %x7.u3b, %step ]
  %x0.u0a = call double @llvm.fma.f64(double %x0, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x1.u0a = call double @llvm.fma.f64(double %x1, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x2.u0a = call double @llvm.fma.f64(double %x2, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x3.u0a = call double @llvm.fma.f64(double %x3, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x4.u0a = call double @llvm.fma.f64(double %x4, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x5.u0a = call double @llvm.fma.f64(double %x5, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x6.u0a = call double @llvm.fma.f64(double %x6, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x7.u0a = call double @llvm.fma.f64(double %x7, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x0.u0b = call double @llvm.fma.f64(double %x0.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x1.u0b = call double @llvm.fma.f64(double %x1.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x2.u0b = call double @llvm.fma.f64(double %x2.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x3.u0b = call double @llvm.fma.f64(double %x3.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x4.u0b = call double @llvm.fma.f64(double %x4.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x5.u0b = call double @llvm.fma.f64(double %x5.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x6.u0b = call double @llvm.fma.f64(double %x6.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x7.u0b = call double @llvm.fma.f64(double %x7.u0a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x0.u1a = call double @llvm.fma.f64(double %x0.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x1.u1a = call double @llvm.fma.f64(double %x1.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x2.u1a = call double @llvm.fma.f64(double %x2.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x3.u1a = call double @llvm.fma.f64(double %x3.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x4.u1a = call double @llvm.fma.f64(double %x4.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x5.u1a = call double @llvm.fma.f64(double %x5.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x6.u1a = call double @llvm.fma.f64(double %x6.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x7.u1a = call double @llvm.fma.f64(double %x7.u0b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x0.u1b = call double @llvm.fma.f64(double %x0.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x1.u1b = call double @llvm.fma.f64(double %x1.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x2.u1b = call double @llvm.fma.f64(double %x2.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x3.u1b = call double @llvm.fma.f64(double %x3.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x4.u1b = call double @llvm.fma.f64(double %x4.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x5.u1b = call double @llvm.fma.f64(double %x5.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x6.u1b = call double @llvm.fma.f64(double %x6.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x7.u1b = call double @llvm.fma.f64(double %x7.u1a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x0.u2a = call double @llvm.fma.f64(double %x0.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x1.u2a = call double @llvm.fma.f64(double %x1.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x2.u2a = call double @llvm.fma.f64(double %x2.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x3.u2a = call double @llvm.fma.f64(double %x3.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x4.u2a = call double @llvm.fma.f64(double %x4.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x5.u2a = call double @llvm.fma.f64(double %x5.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x6.u2a = call double @llvm.fma.f64(double %x6.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x7.u2a = call double @llvm.fma.f64(double %x7.u1b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x0.u2b = call double @llvm.fma.f64(double %x0.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x1.u2b = call double @llvm.fma.f64(double %x1.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x2.u2b = call double @llvm.fma.f64(double %x2.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x3.u2b = call double @llvm.fma.f64(double %x3.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x4.u2b = call double @llvm.fma.f64(double %x4.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x5.u2b = call double @llvm.fma.f64(double %x5.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x6.u2b = call double @llvm.fma.f64(double %x6.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x7.u2b = call double @llvm.fma.f64(double %x7.u2a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x0.u3a = call double @llvm.fma.f64(double %x0.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x1.u3a = call double @llvm.fma.f64(double %x1.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x2.u3a = call double @llvm.fma.f64(double %x2.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x3.u3a = call double @llvm.fma.f64(double %x3.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x4.u3a = call double @llvm.fma.f64(double %x4.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x5.u3a = call double @llvm.fma.f64(double %x5.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x6.u3a = call double @llvm.fma.f64(double %x6.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x7.u3a = call double @llvm.fma.f64(double %x7.u2b, double 0x3FF0040000000000, double 0x3F80000000000000)
  %x0.u3b = call double @llvm.fma.f64(double %x0.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x1.u3b = call double @llvm.fma.f64(double %x1.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x2.u3b = call double @llvm.fma.f64(double %x2.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x3.u3b = call double @llvm.fma.f64(double %x3.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x4.u3b = call double @llvm.fma.f64(double %x4.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x5.u3b = call double @llvm.fma.f64(double %x5.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x6.u3b = call double @llvm.fma.f64(double %x6.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %x7.u3b = call double @llvm.fma.f64(double %x7.u3a, double 0x3FEFF801FF801FF8, double 0xBF7FF801FF801FF8)
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %iters
  br i1 %more, label %step, label %round.end
round.end:
  %sum1 = fadd double %x0.u3b, %x1.u3b
  %sum2 = fadd double %sum1, %x2.u3b
  %sum3 = fadd double %sum2, %x3.u3b
  %sum4 = fadd double %sum3, %x4.u3b
  %sum5 = fadd double %sum4, %x5.u3b
  %sum6 = fadd double %sum5, %x6.u3b
  %sum7 = fadd double %sum6, %x7.u3b
  %bits = bitcast double %sum7 to i64
  %acc.next = add i64 %acc, %bits
  %r.next = add i32 %r, 1
  %again = icmp slt i32 %r.next, %rounds
  br i1 %again, label %round, label %store
store:
  %result = phi i64 [ 0, %entry ], [ %acc.next, %round.end ]
  %gid64 = zext i32 %gid to i64
  %op = getelementptr i64, i64* %out, i64 %gid64
  store i64 %result, i64* %op
  ret void
}

; ---- memory: cuda_memtest-style patterns ----------------------------------
; Words are 32 bits. The pattern of word i (device address `addr`):
;   mode 0  constant: param
;   mode 1  walking ones: 1 << ((i + param) & 31)
;   mode 2  walking zeros: ~(1 << ((i + param) & 31))
;   mode 3  address in address: (addr >> 2) ^ param (low 32 bits)
;   mode 4  seeded random: fmix32(lo(i) * 0x9E3779B1 ^ hi(i) * 0x85EBCA77
;           ^ param), fmix32 being MurmurHash3's finaliser
; An unknown mode is the constant pattern.
define internal i32 @gd_pattern(i32 %mode, i32 %param, i64 %addr, i64 %i) {
entry:
  switch i32 %mode, label %const [ i32 1, label %walk1
                                   i32 2, label %walk0
                                   i32 3, label %address
                                   i32 4, label %random ]
const:
  ret i32 %param
walk1:
  %lo1 = trunc i64 %i to i32
  %sum1 = add i32 %lo1, %param
  %sh1 = and i32 %sum1, 31
  %v1 = shl i32 1, %sh1
  ret i32 %v1
walk0:
  %lo0 = trunc i64 %i to i32
  %sum0 = add i32 %lo0, %param
  %sh0 = and i32 %sum0, 31
  %one0 = shl i32 1, %sh0
  %v0 = xor i32 %one0, -1
  ret i32 %v0
address:
  %word = lshr i64 %addr, 2
  %word32 = trunc i64 %word to i32
  %v3 = xor i32 %word32, %param
  ret i32 %v3
random:
  %lo = trunc i64 %i to i32
  %hi64 = lshr i64 %i, 32
  %hi = trunc i64 %hi64 to i32
  %a = mul i32 %lo, -1640531535
  %b = mul i32 %hi, -2048144777
  %ab = xor i32 %a, %b
  %x0 = xor i32 %ab, %param
  %s1 = lshr i32 %x0, 16
  %x1 = xor i32 %x0, %s1
  %x2 = mul i32 %x1, -2048144789
  %s2 = lshr i32 %x2, 13
  %x3 = xor i32 %x2, %s2
  %x4 = mul i32 %x3, -1028477387
  %s3 = lshr i32 %x4, 16
  %x5 = xor i32 %x4, %s3
  ret i32 %x5
}

; Error log of the check kernels: log[0] counts every mismatch; mismatch k
; (k < cap) is kept in log[1 + 2k] (the word's device address) and
; log[2 + 2k] (expected << 32 | found).
define internal void @gd_log_error(i64* %log, i32 %cap, i64 %addr, i32 %expected, i32 %found) {
entry:
  %k = atomicrmw add i64* %log, i64 1 monotonic
  %cap64 = zext i32 %cap to i64
  %fits = icmp ult i64 %k, %cap64
  br i1 %fits, label %keep, label %done
keep:
  %twok = shl i64 %k, 1
  %slot = add i64 %twok, 1
  %pa = getelementptr i64, i64* %log, i64 %slot
  store i64 %addr, i64* %pa
  %slot2 = add i64 %twok, 2
  %pv = getelementptr i64, i64* %log, i64 %slot2
  %e64 = zext i32 %expected to i64
  %eh = shl i64 %e64, 32
  %f64 = zext i32 %found to i64
  %both = or i64 %eh, %f64
  store i64 %both, i64* %pv
  br label %done
done:
  ret void
}

; gd_mem_fill(base, n, mode, param): word i of base[0..n) = pattern(i).
define void @gd_mem_fill(i32* %base, i64 %n, i32 %mode, i32 %param) {
entry:
  %start = call i64 @gd_gid64()
  %stride = call i64 @gd_stride64()
  %go = icmp ult i64 %start, %n
  br i1 %go, label %loop, label %done
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %loop ]
  %p = getelementptr i32, i32* %base, i64 %i
  %addr = ptrtoint i32* %p to i64
  %v = call i32 @gd_pattern(i32 %mode, i32 %param, i64 %addr, i64 %i)
  store i32 %v, i32* %p
  %i.next = add i64 %i, %stride
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; gd_mem_check(base, n, mode, param, log, cap): every word of base[0..n)
; that differs from pattern(i) goes to the error log.
define void @gd_mem_check(i32* %base, i64 %n, i32 %mode, i32 %param, i64* %log, i32 %cap) {
entry:
  %start = call i64 @gd_gid64()
  %stride = call i64 @gd_stride64()
  %go = icmp ult i64 %start, %n
  br i1 %go, label %loop, label %done
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %next ]
  %p = getelementptr i32, i32* %base, i64 %i
  %addr = ptrtoint i32* %p to i64
  %found = load volatile i32, i32* %p
  %want = call i32 @gd_pattern(i32 %mode, i32 %param, i64 %addr, i64 %i)
  %bad = icmp ne i32 %found, %want
  br i1 %bad, label %record, label %next
record:
  call void @gd_log_error(i64* %log, i32 %cap, i64 %addr, i32 %want, i32 %found)
  br label %next
next:
  %i.next = add i64 %i, %stride
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; gd_mem_invert(base, n, expect, log, cap): one step of moving inversions:
; every word must hold `expect` (else it goes to the log) and is then
; overwritten with ~expect.
define void @gd_mem_invert(i32* %base, i64 %n, i32 %expect, i64* %log, i32 %cap) {
entry:
  %start = call i64 @gd_gid64()
  %stride = call i64 @gd_stride64()
  %go = icmp ult i64 %start, %n
  %inverse = xor i32 %expect, -1
  br i1 %go, label %loop, label %done
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %next ]
  %p = getelementptr i32, i32* %base, i64 %i
  %found = load volatile i32, i32* %p
  %bad = icmp ne i32 %found, %expect
  br i1 %bad, label %record, label %next
record:
  %addr = ptrtoint i32* %p to i64
  call void @gd_log_error(i64* %log, i32 %cap, i64 %addr, i32 %expect, i32 %found)
  br label %next
next:
  store i32 %inverse, i32* %p
  %i.next = add i64 %i, %stride
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; ---- compute: tensor-core GEMM operands and check --------------------------
; The GEMM itself is cuBLAS's (when the system has it). Its operands hold
; small integers, so every partial sum is an exact integer in FP32 and the
; product is known exactly whatever order the GPU adds in.

; gd_gemm_fill_f16(out, rows, count, coef_r, coef_c): column-major matrix of
; `rows` rows, elements 0..count: element (r, c) = half(((r * coef_r + c *
; coef_c) mod 5) - 2), i.e. one of -2, -1, 0, 1, 2. rows >= 1.
define void @gd_gemm_fill_f16(i16* %out, i64 %rows, i64 %count, i64 %coef_r, i64 %coef_c) {
entry:
  %start = call i64 @gd_gid64()
  %stride = call i64 @gd_stride64()
  %go = icmp ult i64 %start, %count
  br i1 %go, label %loop, label %done
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %loop ]
  %r = urem i64 %i, %rows
  %c = udiv i64 %i, %rows
  %tr = mul i64 %r, %coef_r
  %tc = mul i64 %c, %coef_c
  %t = add i64 %tr, %tc
  %k = urem i64 %t, 5
  ; half bits of -2, -1, 0, 1, 2
  %is0 = icmp eq i64 %k, 0
  %is1 = icmp eq i64 %k, 1
  %is2 = icmp eq i64 %k, 2
  %is3 = icmp eq i64 %k, 3
  %h34 = select i1 %is3, i16 15360, i16 16384
  %h234 = select i1 %is2, i16 0, i16 %h34
  %h1234 = select i1 %is1, i16 -17408, i16 %h234
  %h = select i1 %is0, i16 -16384, i16 %h1234
  %p = getelementptr i16, i16* %out, i64 %i
  store i16 %h, i16* %p
  %i.next = add i64 %i, %stride
  %more = icmp ult i64 %i.next, %count
  br i1 %more, label %loop, label %done
done:
  ret void
}

; gd_gemm_check(c, rows, count, table, log, cap): column-major FP32 matrix;
; element (r, col) must equal table[(r mod 5) + 5 * (col mod 5)] bit for bit
; (else its address goes to the error log). rows >= 1.
define void @gd_gemm_check(float* %cm, i64 %rows, i64 %count, float* %table, i64* %log, i32 %cap) {
entry:
  %start = call i64 @gd_gid64()
  %stride = call i64 @gd_stride64()
  %go = icmp ult i64 %start, %count
  br i1 %go, label %loop, label %done
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %next ]
  %r = urem i64 %i, %rows
  %col = udiv i64 %i, %rows
  %r5 = urem i64 %r, 5
  %c5 = urem i64 %col, 5
  %c5x5 = mul i64 %c5, 5
  %ti = add i64 %r5, %c5x5
  %tp = getelementptr float, float* %table, i64 %ti
  %wantf = load float, float* %tp
  %want = bitcast float %wantf to i32
  %p = getelementptr float, float* %cm, i64 %i
  %foundf = load float, float* %p
  %found = bitcast float %foundf to i32
  %bad = icmp ne i32 %found, %want
  br i1 %bad, label %record, label %next
record:
  %addr = ptrtoint float* %p to i64
  call void @gd_log_error(i64* %log, i32 %cap, i64 %addr, i32 %want, i32 %found)
  br label %next
next:
  %i.next = add i64 %i, %stride
  %more = icmp ult i64 %i.next, %count
  br i1 %more, label %loop, label %done
done:
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6}
!0 = !{void (i32*, float*, i32, i32, i32)* @gd_fma_f32, !"kernel", i32 1}
!1 = !{void (i64*, double*, i32, i32, i32)* @gd_fma_f64, !"kernel", i32 1}
!2 = !{void (i32*, i64, i32, i32)* @gd_mem_fill, !"kernel", i32 1}
!3 = !{void (i32*, i64, i32, i32, i64*, i32)* @gd_mem_check, !"kernel", i32 1}
!4 = !{void (i32*, i64, i32, i64*, i32)* @gd_mem_invert, !"kernel", i32 1}
!5 = !{void (i16*, i64, i64, i64, i64)* @gd_gemm_fill_f16, !"kernel", i32 1}
!6 = !{void (float*, i64, i64, float*, i64*, i32)* @gd_gemm_check, !"kernel", i32 1}
