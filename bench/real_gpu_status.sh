#!/usr/bin/env bash
# One-shot wall time on a machine with a real NVIDIA GPU and driver:
# `gpudoctor status`, `status --json`, `nvidia-smi`, `nvidia-smi -q` (and a
# baseline gpudoctor's two, if given), alternated run by run, N rounds;
# prints each one's median and min, and gpudoctor's median as a share of
# nvidia-smi's (issue 25's goal: at most half). About 0.1 s a command:
# N=15 with a baseline takes ~10 s. Where strace is installed, one more run
# of `status` under strace says where its wall goes (loading NVML, driver
# ioctls, writing the output, exiting: nvmlShutdown and unloading).
#   bench/real_gpu_status.sh GPUDOCTOR [N=15] [BASELINE_GPUDOCTOR]
set -euo pipefail
gd=${1:?usage: real_gpu_status.sh GPUDOCTOR [N] [BASELINE_GPUDOCTOR]}
n=${2:-15}
base=${3:-}
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found" >&2; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1

names=("gpudoctor status" "gpudoctor status --json" "nvidia-smi" "nvidia-smi -q")
cmds=("$gd status" "$gd status --json" "nvidia-smi" "nvidia-smi -q")
if [[ -n "$base" ]]; then
  names+=("baseline status" "baseline status --json")
  cmds+=("$base status" "$base status --json")
fi
declare -A walls
for c in "${cmds[@]}"; do $c >/dev/null 2>&1 || true; done  # warm caches
for ((i = 0; i < n; i++)); do
  for k in "${!cmds[@]}"; do
    t0=$EPOCHREALTIME
    ${cmds[$k]} >/dev/null 2>&1 || true
    t1=$EPOCHREALTIME
    walls[$k]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f ", (b-a)*1000}')"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g |
  awk '{v[NR]=$1} END{m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2;
       printf "%.1f %.1f", m, v[1]}'; }
declare -A med
for k in "${!cmds[@]}"; do
  read -r m lo <<<"$(echo "${walls[$k]}" | median)"
  med[$k]=$m
  printf '%-26s median %7.1f ms  min %7.1f ms  (%d runs)\n' "${names[$k]}" "$m" "$lo" "$n"
done
awk -v a="${med[0]}" -v b="${med[2]}" -v c="${med[1]}" -v d="${med[3]}" 'BEGIN{
  printf "status / nvidia-smi: %.0f%%   status --json / nvidia-smi -q: %.0f%%   (goal <= 50%%)\n",
         100*a/b, 100*c/d }'

command -v strace >/dev/null && command -v python3 >/dev/null || exit 0
log=$(mktemp)
strace -f -ttt -e trace=execve,openat,ioctl,write,exit_group -o "$log" \
  "$gd" status >/dev/null 2>&1 || true
python3 - "$log" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
t = lambda l: float(l.split()[1])
t0 = t(lines[0])
def at(pat, last=False):
    hits = [l for l in lines if re.search(pat, l)]
    return (t(hits[-1 if last else 0]) - t0) * 1000 if hits else float("nan")
print("where `status` spends its wall (ms from exec, one run under strace):")
for name, pat, last in [
        ("open libnvidia-ml", r"openat\(.*libnvidia-ml", False),
        ("open libcuda", r"openat\(.*libcuda", False),
        ("first /dev/nvidia* open", r"openat\(.*/dev/nvidia", False),
        ("first ioctl", r" ioctl\(", False),
        ("output written (stdout)", r" write\(1,", True),
        ("last ioctl", r" ioctl\(", True),
        ("exit", r"exit_group\(", True)]:
    print(f"  {name:26s} {at(pat, last):8.1f}")
print(f"  ioctls: {sum(1 for l in lines if ' ioctl(' in l)}")
PY
rm -f "$log"
