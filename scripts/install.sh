#!/usr/bin/env bash
# Installs gpudoctor on this machine (Debian 12) and runs `gpudoctor status`.
#   scripts/install.sh [PREFIX]     default PREFIX=/usr/local
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/usr/local}"

scripts/install-deps.sh
# The build the tests run (scripts/test.sh): -O2, a few .cc files compiled
# as one, so that the code `top` runs each second is laid out as
# src/cli/hot-functions.txt names it.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON \
  -DGD_BUILD_TESTS=OFF -DGD_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX="$prefix"
cmake --build build/release --target gpudoctor gpudoctor-manuals
SUDO=""
if [[ $(id -u) -ne 0 && ! -w "$prefix" ]]; then SUDO="sudo"; fi
$SUDO cmake --install build/release --strip
echo
# status exits 3-6 when NVML cannot be used (no driver, no permission,
# driver/library mismatch, other NVML error): gpudoctor is installed all the
# same, and status has said why on its screen.
rc=0
"$prefix/bin/gpudoctor" status || rc=$?
case $rc in
  0) ;;
  3 | 4 | 5 | 6) echo "gpudoctor is installed; NVML is not usable here (status exit $rc, see above)" ;;
  *) exit "$rc" ;;
esac
