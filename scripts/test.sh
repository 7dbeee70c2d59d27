#!/usr/bin/env bash
# Installs every dependency, checks the formatting of src/, tests/ and tools/,
# and runs every test: a normal build (GCC, -O2), then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer (clang), then every libFuzzer
# harness for a bounded time (scripts/fuzz.sh, FUZZ_SECONDS each), built in
# the sanitizer pass: clang's libFuzzer instrumentation is compiled into that
# pass's libraries, so the harnesses cost no build of their own.
#   scripts/test.sh              all three passes
#   scripts/test.sh --fast       the normal pass only
#
# CI has two cores and a cold cache: both builds are unity builds
# (CMAKE_UNITY_BUILD: a few .cc files compiled as one) linked with lld, with
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

common=(-G Ninja -DCMAKE_UNITY_BUILD=ON "${launcher[@]}"
        -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld)

run_pass() {
  local dir=$1; shift
  echo "=== build $dir ($*)"
  begin_stage "build $dir"
  cmake -S . -B "$dir" "${common[@]}" "$@"
  cmake --build "$dir" -j "$jobs"
  echo "=== test $dir"
  begin_stage "test $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 300
}

run_pass build/test -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG"
if [[ "${1:-}" != "--fast" ]]; then
  # Benchmarks are not run under sanitizers; they run from bench/run.sh.
  CC=clang CXX=clang++ \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_pass build/asan -DCMAKE_BUILD_TYPE=Debug -DGD_SANITIZE=ON -DGD_FUZZ=ON \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only" \
      -DGD_BUILD_BENCH=OFF
  # 30 s per harness keeps the whole run within CI's time on 2 cores; a
  # longer hunt is scripts/fuzz.sh with a larger FUZZ_SECONDS.
  begin_stage fuzz
  FUZZ_BUILD=build/asan FUZZ_SECONDS=${FUZZ_SECONDS:-30} scripts/fuzz.sh
fi
end_stage
echo "=== all tests passed"
