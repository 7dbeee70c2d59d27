#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang (ASan + UBSan) in
# build/fuzz and runs each for FUZZ_SECONDS on a fresh copy of its seed
# corpus. Fails on any crash, sanitizer report, leak, timeout or broken
# invariant; the input that did it is left in build/fuzz/artifacts/.
#   scripts/fuzz.sh                  every harness
#   scripts/fuzz.sh NAME...          only these (e.g. procfs_fuzz)
#   FUZZ_SECONDS=600 scripts/fuzz.sh longer runs (default 60 s each)
#   FUZZ_JOBS=1 scripts/fuzz.sh      harnesses at a time (default: CPUs)
#   FUZZ_TIMEOUT=120 scripts/fuzz.sh one input's limit in seconds of wall time
#                                    (default 10); scripts/test.sh gives more
#                                    beside the tests, where the fuzzers get
#                                    only the CPU the tests leave
#   FUZZ_BUILD=build/asan scripts/fuzz.sh
#                                    the harnesses of a build configured with
#                                    clang and -DGD_FUZZ=ON (scripts/test.sh's
#                                    sanitizer pass), not a build of their own
# Reproduce a finding: build/fuzz/tests/fuzz/NAME build/fuzz/artifacts/NAME-crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-10}
jobs=${FUZZ_JOBS:-$(nproc)}
build=${FUZZ_BUILD:-build/fuzz}
started=$(date +%s)

for tool in clang clang++; do
  command -v "$tool" >/dev/null || {
    echo "fuzz.sh: $tool not found (scripts/install-deps.sh --test installs it)" >&2
    exit 2
  }
done

echo "=== build $build (clang, libFuzzer + ASan + UBSan)"
if [[ -n ${FUZZ_BUILD:-} ]]; then
  [[ -f $build/fuzz_targets.txt ]] || {
    echo "fuzz.sh: $build is not a build configured with clang and -DGD_FUZZ=ON" >&2
    exit 2
  }
else
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGD_FUZZ=ON -DGD_BUILD_TESTS=OFF -DGD_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
fi
mapfile -t all < "$build/fuzz_targets.txt"
targets=("$@")
if ((${#targets[@]} == 0)); then targets=("${all[@]}"); fi
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || {
    echo "fuzz.sh: no harness '$t' (have: ${all[*]})" >&2
    exit 2
  }
done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
built=$(date +%s)

rm -rf "$build/artifacts" "$build/logs" "$build/corpus"
mkdir -p "$build/artifacts" "$build/logs" "$build/corpus"

# One harness: its own corpus copy, dictionary if any, log in logs/NAME.log.
run_one() {
  local name=$1 corpus="$build/corpus/$1" opts=()
  mkdir -p "$corpus"
  if [[ -d tests/fuzz/corpus/$name ]]; then cp -r "tests/fuzz/corpus/$name/." "$corpus/"; fi
  if [[ -f tests/fuzz/$name.dict ]]; then opts+=("-dict=tests/fuzz/$name.dict"); fi
  "$build/tests/fuzz/$name" "$corpus" "${opts[@]}" \
    -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
    >"$build/logs/$name.log" 2>&1
}

echo "=== fuzz ${#targets[@]} harnesses, ${seconds} s each, $jobs at a time"
declare -A pid_of
for name in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_one "$name" &
  pid_of[$name]=$!
done

failed=0
printf '%-22s %10s %8s %8s  %s\n' HARNESS RUNS COV CORPUS RESULT
for name in "${targets[@]}"; do
  rc=0
  wait "${pid_of[$name]}" || rc=$?
  log="$build/logs/$name.log"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=ok
  if ((rc != 0)); then
    result="FAILED (exit $rc): $(grep -m1 -E 'ERROR: |invariant broken|runtime error' "$log" || echo 'see log')"
    failed=1
  fi
  printf '%-22s %10s %8s %8s  %s\n' "$name" "${runs:-?}" "${cov:-?}" "${corp:-?}" "$result"
done
echo "build $((built - started)) s, fuzzing $(($(date +%s) - built)) s, logs in $build/logs"
if ((failed)); then
  echo "=== fuzzing FAILED; reproducers:" >&2
  ls -1 "$build/artifacts" >&2 || true
  for name in "${targets[@]}"; do
    grep -q -E 'ERROR: |invariant broken' "$build/logs/$name.log" &&
      { echo "--- $name" >&2; tail -40 "$build/logs/$name.log" >&2; }
  done
  exit 1
fi
echo "=== fuzzing passed"
