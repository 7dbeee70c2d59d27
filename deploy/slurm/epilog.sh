#!/bin/sh
# Slurm Epilog= (slurm.conf; run by slurmd as root when a job ends, with
# the job's environment): end what the job left behind and check that its
# GPUs got their memory back (`gpudoctor epilog`, docs/slurm.md "Epilog").
#   memory back (exit 0)   log, exit 0
#   memory not back (2)    drain the node with gpudoctor's reason, exit 1
#   could not check (1)    log, exit 0 (a broken check does not drain)
#   anything else          log, exit 0
# Every decision is one syslog/journald line (tag gpudoctor-epilog):
#   journalctl -t gpudoctor-epilog
# Environment: SLURM_JOB_ID, SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES (the
# job's GPUs; else the job's device cgroup; else all GPUs), SLURMD_NODENAME; GPUDOCTOR
# (default: gpudoctor on PATH), SCONTROL (default: scontrol on PATH),
# GPUDOCTOR_EPILOG_GRACE (SIGTERM -> SIGKILL, default 10s),
# GPUDOCTOR_EPILOG_MEMORY_TIMEOUT (default 30s), GPUDOCTOR_LOGGER (default:
# logger).
tag=gpudoctor-epilog
logger_cmd=${GPUDOCTOR_LOGGER:-logger}
gd=${GPUDOCTOR:-gpudoctor}
scontrol=${SCONTROL:-scontrol}
job=${SLURM_JOB_ID:-}
node=${SLURMD_NODENAME:-$(hostname -s)}
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}

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

log() {
	"$logger_cmd" -t "$tag" -- "job=${job:-?} $*" 2>/dev/null ||
		printf '%s: job=%s %s\n' "$tag" "${job:-?}" "$*" >&2
}

if [ -z "$job" ]; then
	log "action=none finding=no-SLURM_JOB_ID"
	exit 0
fi
if ! command -v "$gd" >/dev/null 2>&1; then
	log "action=none finding=gpudoctor-not-found path=$gd"
	exit 0
fi
# CUDA_VISIBLE_DEVICES may be NoDevFiles or empty when the job had no GPU;
# then the job's device cgroup may still say ("all": every GPU).
case "$gpus" in
NoDevFiles | none) gpus= ;;
esac
[ -n "$gpus" ] || gpus=$(cgroup_gpus "$job")
[ "$gpus" != all ] || gpus=

set -- epilog --job "$job" --grace "${GPUDOCTOR_EPILOG_GRACE:-10s}" \
	--memory-timeout "${GPUDOCTOR_EPILOG_MEMORY_TIMEOUT:-30s}"
[ -n "$gpus" ] && set -- "$@" --gpus "$gpus"
out=$("$gd" "$@" 2>&1)
rc=$?

# One line per decision, as gpudoctor wrote it ("job 77: ending pid ...",
# "job 77: GPU 0: memory back ..."), sanitised by gpudoctor.
printf '%s\n' "$out" | while IFS= read -r line; do
	[ -n "$line" ] && log "gpus=${gpus:-all} $line"
done

case $rc in
0)
	log "gpus=${gpus:-all} finding=clean action=none"
	exit 0
	;;
2)
	reason=$(printf '%s\n' "$out" | grep '^gpudoctor: ' | tail -n 1 | cut -c1-200)
	[ -n "$reason" ] || reason="gpudoctor: GPU memory not back after job $job ended"
	if "$scontrol" update nodename="$node" state=drain reason="$reason"; then
		log "gpus=${gpus:-all} finding=memory-not-back action=drain node=$node reason=\"$reason\""
	else
		log "gpus=${gpus:-all} finding=memory-not-back action=drain-failed node=$node reason=\"$reason\""
	fi
	exit 1
	;;
*)
	log "gpus=${gpus:-all} finding=could-not-check exit=$rc action=none"
	exit 0
	;;
esac
