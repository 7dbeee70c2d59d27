#!/usr/bin/env bash
# Installs what gpudoctor needs from Debian 12 (bookworm) packages.
#   scripts/install-deps.sh          build dependencies
#   scripts/install-deps.sh --test   plus what the test suite and benchmarks use
set -euo pipefail

build_pkgs=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libzstd-dev libfmt-dev
  libspdlog-dev libtomlplusplus-dev libsqlite3-dev
  # cpp-httplib is built header-only, and fmt and simdjson compiled in, from
  # Debian's own source packages (fetched below with dpkg-dev's dpkg-source;
  # CMakeLists.txt says why),
  # with what Debian builds it with: TLS, gzip and brotli content coding.
  dpkg-dev libssl-dev zlib1g-dev libbrotli-dev
  libncurses-dev
  # serve's HTTP server (epoll event loop, connection and memory limits).
  libmicrohttpd-dev
  # serve --web-config: the YAML file, bcrypt via libxcrypt.
  libyaml-cpp-dev libcrypt-dev
  # serve's dashboard: its charting library (uPlot) is installed from npm at
  # build time (`npm ci` of web/package-lock.json). Skipped below when an npm
  # is already on PATH (e.g. a NodeSource nodejs, which bundles npm and
  # conflicts with Debian's npm package).
  nodejs npm
  # burn: its GPU kernels (LLVM IR) are compiled to PTX by llc's NVPTX
  # backend at build time (no CUDA toolkit).
  llvm
  # scripts/package.sh: the release bundle's run paths ($ORIGIN/../lib).
  patchelf
  # gpudoctor is linked with lld, which lays out the code `top` runs each
  # second together (src/cli/CMakeLists.txt); scripts/test.sh links every
  # test binary with it too (much faster than ld.bfd).
  lld
  # diagnose/export --prometheus: Prometheus' remote-read protocol
  # (protobuf messages, snappy-compressed), both linked statically.
  protobuf-compiler libprotobuf-dev libsnappy-dev
  # Kubernetes: the kubelet's pod-resources API and the container runtime's
  # CRI are gRPC; their client is libgpudoctor-pods.so (src/pods), the one
  # part that links gRPC.
  libgrpc++-dev protobuf-compiler-grpc
)
test_pkgs=(
  libgtest-dev libgmock-dev libbenchmark-dev python3 zstd procps util-linux
  # bindgen output of a real nvml.h: the independent reference the ABI
  # cross-check test compares the project's NVML declarations against.
  librust-nvml-wrapper-sys-dev
  # deploy/: promtool checks and unit-tests the alerting rules, a real
  # Prometheus scrapes `gpudoctor serve` in the fleet e2e test, amtool checks
  # the Alertmanager example, python3-yaml parses the Kubernetes manifests,
  # systemd-analyze verifies the unit.
  prometheus prometheus-alertmanager python3-yaml systemd
  # tests/pods: a kubelet and a container runtime that speak the real gRPC
  # protocols over Unix sockets, compiled from the same .proto files.
  python3-grpcio python3-grpc-tools
  # The fleet e2e tests read the same backfilled series from VictoriaMetrics
  # too (its Prometheus-compatible query API), not only from Prometheus.
  victoria-metrics
  # bench/serve_load: HTTP load generator and node_exporter for comparison.
  wrk prometheus-node-exporter
  # scripts/fuzz.sh: libFuzzer harnesses need clang 14 and its runtimes; the
  # sanitizer pass of scripts/test.sh is built with them too.
  clang libclang-rt-14-dev
  # serve --web-config e2e test: a self-signed certificate.
  openssl
  # scripts/check-format.sh: the formatting gate of scripts/test.sh.
  clang-format
  # The dashboard's e2e test and web benchmark: a real headless Chromium
  # driven over the DevTools protocol from Debian's python3.
  chromium python3-websocket
  # `top` e2e tests: the TUI runs in a real terminal (tests/e2e/gd_tmux.py).
  tmux
  # The command-table test (tests/e2e/test_command_table.py): the generated
  # completions run in the real shells (bash's bash-completion, zsh, fish)
  # and the man pages are read by man's own checker (groff).
  bash-completion zsh fish groff-base man-db
  # serve's remote kill e2e test calls POST /api/v1/kill as docs/serve.md does.
  curl
  # scripts/package.sh builds the .rpm for RHEL/Rocky 9 with rpmbuild, and
  # tests/package reads it (rpm -qpl, -qpR) and unpacks it (rpm2cpio, cpio).
  rpm cpio
  # A real Slurm in the e2e tests (tests/e2e/gd_slurm.py): slurmctld, slurmd,
  # scontrol, sbatch (Slurm 22.05) and munge, each daemon started and
  # stopped by the tests themselves (their services are not needed).
  slurm-wlm munge
  # deploy/slurm's prolog and epilog scripts are checked with shellcheck.
  shellcheck
  # deploy/kubernetes is a kustomize base: `kubectl kustomize` (kustomize is
  # built into kubectl) renders it offline for tests/deploy/check_kustomize.py.
  # Skipped below when a kubectl is already on PATH: another package's kubectl
  # (e.g. the Google Cloud CLI's `kubectl`) owns /usr/bin/kubectl, and dpkg
  # refuses to install Debian's over it.
  kubernetes-client
)

pkgs=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then pkgs+=("${test_pkgs[@]}"); fi

missing=()
for p in "${pkgs[@]}"; do
  if [[ ($p == nodejs || $p == npm) ]] && command -v npm >/dev/null; then continue; fi
  if [[ $p == kubernetes-client ]] && command -v kubectl >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages present"
else
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Source packages the build compiles in (CMakeLists.txt's gd_httplib and
# gd_fmt and gd_simdjson). cpp-httplib: the version CMakeLists.txt names (its
# CVE-2023-26130 fix), or a later one; fmt and simdjson: Debian 12's, or a
# later one.
"$(dirname "$0")/fetch-deb-source.sh" cpp-httplib "$(cd "$(dirname "$0")/.." && pwd)/.deps/cpp-httplib" \
  0.11.4+ds-1+deb12u1
"$(dirname "$0")/fetch-deb-source.sh" fmtlib "$(cd "$(dirname "$0")/.." && pwd)/.deps/fmt" \
  9.1.0+ds1-2
"$(dirname "$0")/fetch-deb-source.sh" simdjson "$(cd "$(dirname "$0")/.." && pwd)/.deps/simdjson" \
  3.0.1-1
