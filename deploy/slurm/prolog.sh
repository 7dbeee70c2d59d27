#!/bin/sh
# Slurm Prolog: gates the job's GPUs with `gpudoctor check` before the job
# starts (docs/check.md). slurmd runs it as root with the job's
# environment.
#   exit 0 (healthy)          the job starts
#   exit 1 (warnings only)    logged; the job starts
#   exit 2 (unhealthy)        the node is drained with gpudoctor's reason and
#                             the prolog fails, so Slurm requeues the job
#   exit 3 (could not check), 64, anything else: logged; the job starts
#                             (a broken gate must not drain a cluster)
# Environment: SLURM_JOB_ID, SLURMD_NODENAME, SLURM_JOB_GPUS or
# CUDA_VISIBLE_DEVICES (the job's GPUs; else the job's cgroup v1 device
# list under $GPUDOCTOR_CGROUP_ROOT, default /sys/fs/cgroup); GPUDOCTOR (default: gpudoctor on
# PATH); SCONTROL (default: scontrol on PATH); GPUDOCTOR_LOGGER (default:
# logger).
# Every decision is one syslog line, tag gpudoctor-prolog:
#   job=1234 gpus=0,1 finding="..." action=drain|none|log

gpudoctor=${GPUDOCTOR:-gpudoctor}
scontrol=${SCONTROL:-scontrol}
logger_cmd=${GPUDOCTOR_LOGGER:-logger}
job=${SLURM_JOB_ID:-unknown}
node=${SLURMD_NODENAME:-$(hostname -s 2>/dev/null || hostname)}

log() {
  # $1 priority, $2 the message
  "$logger_cmd" -t gpudoctor-prolog -p "user.$1" -- "$2" 2>/dev/null ||
    printf 'gpudoctor-prolog: %s\n' "$2" >&2
}

# The job's GPUs from its device cgroup, when Slurm's environment names
# none: cgroup v1 with ConstrainDevices=yes lists each device the job may
# open (.../devices/slurm*/uid_U/job_J/devices.list, "c 195:N rwm" for
# /dev/nvidiaN). Prints "/dev/nvidia2,/dev/nvidia5", "all" when the list
# allows every device, nothing when there is no such list (cgroup v2 keeps
# it in an eBPF program, which no file shows).
cgroup_gpus() {
  for list in "${GPUDOCTOR_CGROUP_ROOT:-/sys/fs/cgroup}"/devices/slurm*/uid_*/job_"$1"/devices.list; do
    [ -r "$list" ] || continue
    head -c 65536 "$list" | awk '
      $1 == "a" { all = 1 }
      $1 == "c" && $2 ~ /^195:([*]|[0-9]+)$/ {
        split($2, n, ":")
        if (n[2] == "*") all = 1
        else if (n[2] + 0 < 254) { out = out sep "/dev/nvidia" n[2]; sep = "," }
      }
      END { if (all) print "all"; else print out }'
    return
  done
}

# The job's GPUs: Slurm's list of indexes, else what CUDA sees (indexes or
# UUIDs), else the job's device cgroup; none (a CPU-only job, or
# "NoDevFiles") means nothing to gate.
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}
[ -n "$gpus" ] || gpus=$(cgroup_gpus "$job")
case $gpus in
  '' | NoDevFiles | none)
    log info "job=$job gpus=none finding=\"no GPUs for this job\" action=none"
    exit 0
    ;;
esac

set -- check --reason
[ "$gpus" = all ] || set -- "$@" --gpus "$gpus"
# gpudoctor bounds its own NVML reads; the timeout is for anything else.
if command -v timeout >/dev/null 2>&1; then
  reason=$(timeout 60 "$gpudoctor" "$@" 2>/dev/null)
else
  reason=$("$gpudoctor" "$@" 2>/dev/null)
fi
rc=$?
# One line of at most 200 characters, whatever was printed.
reason=$(printf '%s\n' "$reason" | head -n 1 | cut -c 1-200)

case $rc in
  0)
    log info "job=$job gpus=$gpus finding=healthy action=none"
    exit 0
    ;;
  1)
    log warning "job=$job gpus=$gpus finding=\"$reason\" action=log"
    exit 0
    ;;
  2)
    [ -n "$reason" ] || reason="gpudoctor: unhealthy GPU (no reason given)"
    if "$scontrol" update nodename="$node" state=drain reason="$reason"; then
      log err "job=$job gpus=$gpus finding=\"$reason\" action=drain node=$node"
    else
      log err "job=$job gpus=$gpus finding=\"$reason\" action=drain-failed node=$node"
    fi
    exit 1
    ;;
  *)
    log err "job=$job gpus=$gpus finding=\"gpudoctor check exited $rc: ${reason:-no output}\" action=none"
    exit 0
    ;;
esac
