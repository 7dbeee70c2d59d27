#!/usr/bin/env bash
# Installs every dependency, checks the formatting of src/, tests/ and tools/,
# and runs every test: a normal build (GCC, -O2), then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer (clang), then every libFuzzer
# harness for a bounded time (scripts/fuzz.sh, FUZZ_SECONDS each), built in
# the sanitizer pass: clang's libFuzzer instrumentation is compiled into that
# pass's libraries, so the harnesses cost no build of their own. The
# sanitizer build runs beside the normal tests and the fuzzers beside the
# sanitizer tests, at nice 19 (see "Work started beside a stage" below).
#   scripts/test.sh              all three passes
#   scripts/test.sh --fast       the normal pass only
#
# CI has two cores and a cold cache: both builds are unity builds
# (CMAKE_UNITY_BUILD: a target's .cc files compiled as one) linked with lld, with
# no debug information but line tables for the sanitizers' reports.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

# Each stage's wall time, printed at the end (also when a stage fails), so a
# slow run says where its minutes went.
stages=()
stage=""
stage_start=$SECONDS
begin_stage() {
  end_stage
  stage=$1
  stage_start=$SECONDS
}
end_stage() {
  if [[ -n $stage ]]; then stages+=("$(printf '%-26s %5d s' "$stage" $((SECONDS - stage_start)))"); fi
  stage=""
}
beside_pids=()
kill_beside() {
  local pid
  for pid in "${beside_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
}
print_stages() {
  local rc=$?
  kill_beside
  if [[ -n $stage ]]; then stage="$stage (failed)"; fi
  end_stage
  echo "=== stage times (wall, $(nproc) CPUs)"
  printf '%s\n' "${stages[@]}"
  printf '%-26s %5d s\n' total "$SECONDS"
  return $rc
}
trap print_stages EXIT

begin_stage install-deps
scripts/install-deps.sh --test

# Formatting first: it takes a second and names every file to fix.
begin_stage format
scripts/check-format.sh

# ccache, when installed, makes a re-run rebuild only what changed.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

common=(-G Ninja -DCMAKE_UNITY_BUILD=ON "${launcher[@]}"
        -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld)

configure() {
  local dir=$1; shift
  echo "=== configure $dir ($*)"
  cmake -S . -B "$dir" "${common[@]}" "$@"
}
run_tests() {  # DIR [TESTS_AT_ONCE]
  echo "=== test $1"
  begin_stage "test $1"
  ctest --test-dir "$1" --output-on-failure -j "${2:-$jobs}" --timeout 300
}

# Work started beside a stage runs at the lowest priority in a process group
# of its own (killed when the script exits), its output in a log printed when
# it fails. The end-to-end tests spend most of their time waiting on the
# processes they start (a 2-core machine is ~40% busy during the normal
# pass's tests), so the sanitizer build runs beside them and the fuzzers
# beside the sanitizer tests: at nice 19 they take the idle CPU and barely
# slow the tests (CFS gives a nice-19 task ~1.5% of a CPU it has to share).
# A new session is a scheduling group of its own where the kernel groups
# sessions (sched_autogroup, on in Debian's and Ubuntu's kernels), and nice
# counts only within a group: the group itself is set to nice 19 too, or the
# build would take half the CPUs from the tests.
start_beside() {  # LOG COMMAND...: sets beside_pid
  local log=$1; shift
  echo "=== started beside the tests (nice 19, log in $log): $*"
  setsid bash -c 'start=$(date +%s); { echo 19 >/proc/self/autogroup; } 2>/dev/null || true
                  nice -n 19 "$@"; rc=$?
                  echo "$(($(date +%s) - start))" >"$0.seconds"; exit $rc' "$log" "$@" >"$log" 2>&1 &
  beside_pid=$!
  beside_pids+=("$beside_pid")
}
finish_beside() {  # NAME LOG PID: waits; on failure prints the log's end and exits
  local name=$1 log=$2 pid=$3 rc=0
  begin_stage "wait for $name"
  wait "$pid" || rc=$?
  stages+=("$(printf '%-26s %5s s' "$name (beside)" "$(cat "$log.seconds" 2>/dev/null || echo '?')")")
  if ((rc != 0)); then
    echo "=== $name FAILED (exit $rc); the end of $log:" >&2
    tail -n 150 "$log" >&2
    exit "$rc"
  fi
}

begin_stage "configure build/test"
configure build/test -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG"
begin_stage "build build/test"
cmake --build build/test -j "$jobs"
fast=0
if [[ "${1:-}" == "--fast" ]]; then fast=1; fi
if ((!fast)); then
  # Benchmarks are not run under sanitizers; they run from bench/run.sh.
  CC=clang CXX=clang++ configure build/asan -DCMAKE_BUILD_TYPE=Debug -DGD_SANITIZE=ON -DGD_FUZZ=ON \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only" \
    -DGD_BUILD_BENCH=OFF
  start_beside build/asan-build.log cmake --build build/asan -j "$jobs"
  asan_build=$beside_pid
fi
run_tests build/test
if ((!fast)); then
  finish_beside "build build/asan" build/asan-build.log "$asan_build"
  # The fuzzers take the CPU the sanitizer tests leave idle, FUZZ_SECONDS
  # each; a longer hunt is scripts/fuzz.sh with a larger FUZZ_SECONDS. One
  # input may take 120 s of wall time here, not 10: at nice 19 beside four
  # busy tests a fuzzer gets ~1% of a CPU at times (an input that runs in
  # under a second alone was reported as a 10-s hang); a real hang still
  # fails.
  start_beside build/asan-fuzz.log \
    env FUZZ_BUILD=build/asan FUZZ_SECONDS="${FUZZ_SECONDS:-60}" \
    FUZZ_TIMEOUT="${FUZZ_TIMEOUT:-120}" scripts/fuzz.sh
  fuzz=$beside_pid
  # Twice as many sanitizer tests at once as CPUs: they too wait more than
  # they compute (this stage is the run's last), and the fuzzers beside
  # them take only what is left.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_tests build/asan $((2 * jobs))
  finish_beside fuzz build/asan-fuzz.log "$fuzz"
  sed -n '/^=== fuzz /,$p' build/asan-fuzz.log
fi
end_stage
echo "=== all tests passed"
