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
# job's GPUs; all GPUs when neither is set), SLURMD_NODENAME; GPUDOCTOR
# (default: gpudoctor on PATH), SCONTROL (default: scontrol on PATH),
# GPUDOCTOR_EPILOG_GRACE (SIGTERM -> SIGKILL, default 10s),
# GPUDOCTOR_EPILOG_MEMORY_TIMEOUT (default 30s).
tag=gpudoctor-epilog
gd=${GPUDOCTOR:-gpudoctor}
scontrol=${SCONTROL:-scontrol}
job=${SLURM_JOB_ID:-}
node=${SLURMD_NODENAME:-$(hostname -s)}
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}

log() {
	logger -t "$tag" -- "job=${job:-?} $*"
}

if [ -z "$job" ]; then
	log "action=none finding=no-SLURM_JOB_ID"
	exit 0
fi
if ! command -v "$gd" >/dev/null 2>&1; then
	log "action=none finding=gpudoctor-not-found path=$gd"
	exit 0
fi
# CUDA_VISIBLE_DEVICES may be NoDevFiles or empty when the job had no GPU.
case "$gpus" in
NoDevFiles | none) gpus= ;;
esac

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
