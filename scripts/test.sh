#!/usr/bin/env bash
# Installs every dependency, checks the formatting of src/, tests/ and tools/,
# and runs every test: a normal build, then the same
# tests under AddressSanitizer + UndefinedBehaviorSanitizer, then every
# libFuzzer harness for a bounded time (scripts/fuzz.sh, FUZZ_SECONDS each).
#   scripts/test.sh              all three passes
#   scripts/test.sh --fast       the normal pass only
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
print_stages() {
  local rc=$?
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

run_pass() {
  local dir=$1; shift
  echo "=== build $dir ($*)"
  begin_stage "build $dir"
  cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "$@"
  cmake --build "$dir" -j "$jobs"
  echo "=== test $dir"
  begin_stage "test $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 300
}

run_pass build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [[ "${1:-}" != "--fast" ]]; then
  # Benchmarks are not run under sanitizers; they run from bench/run.sh.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_pass build/asan -DCMAKE_BUILD_TYPE=Debug -DGD_SANITIZE=ON -DGD_BUILD_BENCH=OFF
  # 30 s per harness keeps the whole run within CI's hour on 2 cores; a
  # longer hunt is scripts/fuzz.sh with a larger FUZZ_SECONDS.
  begin_stage fuzz
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} scripts/fuzz.sh
fi
end_stage
echo "=== all tests passed"
