#!/usr/bin/env bash
# Builds nvtop from its source package in DIR, for the side-by-side
# benchmark; nothing of it is kept in the repository. Uses the machine's
# configured apt sources, by package name (the source needs deb-src entries
# for the section nvtop is in, contrib on Debian). Prints the path of the
# nvtop binary on the last line, or says why there is none.
#   get_nvtop.sh DIR [SUITE]
# SUITE: take the source from that suite of the same mirror instead (e.g.
# trixie on Debian 12, whose nvtop 3.0.1 has no -s for status_cost.py; 3.2.0
# has it); the build dependencies still come from the machine's own sources.
set -uo pipefail
dir=$1
suite_wanted=${2:-}
mkdir -p "$dir" && cd "$dir" && dir=$(pwd) || exit 1
if [[ -x build/src/nvtop ]]; then echo "$dir/build/src/nvtop"; exit 0; fi
if [[ -x extracted/usr/bin/nvtop ]]; then echo "$dir/extracted/usr/bin/nvtop"; exit 0; fi
# Debian 12 keeps nvtop in contrib (13 in main). Where the machine's sources
# name only main, or SUITE is given, apt is pointed at a private list of the
# same mirror with main and contrib (in DIR; the machine's own apt
# configuration is left as it is).
opts=()
if [[ -n $suite_wanted ]] || ! apt-cache policy nvtop 2>/dev/null | grep -q Candidate; then
  uri=$(grep -hm1 -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}')
  suite=${suite_wanted:-$(grep -hm1 -E '^Suites:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}')}
  if [[ -n $uri && -n $suite ]]; then
    mkdir -p apt/lists/partial
    printf 'deb %s %s main contrib\ndeb-src %s %s main contrib\n' "$uri" "$suite" "$uri" "$suite" >apt/sources.list
    opts=(-o Dir::Etc::sourcelist="$dir/apt/sources.list" -o Dir::Etc::sourceparts=-
          -o Dir::State::Lists="$dir/apt/lists")
    apt-get "${opts[@]}" update >apt-update.log 2>&1
  fi
fi
apt-get "${opts[@]}" source nvtop >apt-source.log 2>&1
# A mirror that lacks the Debian packaging tarball still gave the upstream
# one, all the build needs.
if [[ -z $(find . -maxdepth 1 -type d -name 'nvtop-*') ]] && ls nvtop_*.orig.tar.* >/dev/null 2>&1; then
  tar xf nvtop_*.orig.tar.*
fi
src=$(find . -maxdepth 1 -type d -name 'nvtop-*' | head -1)
if [[ -n $src ]]; then
  # Build dependencies of the package that matter for NVIDIA.
  apt-get install -y -qq --no-install-recommends libdrm-dev libsystemd-dev libudev-dev \
    libncurses-dev >/dev/null 2>&1
  if cmake -S "$src" -B build -DNVIDIA_SUPPORT=ON -DAMDGPU_SUPPORT=OFF -DINTEL_SUPPORT=OFF \
       -DCMAKE_BUILD_TYPE=Release >build.log 2>&1 && cmake --build build -j"$(nproc)" >>build.log 2>&1; then
    echo "nvtop built from its source package ($src)"
    echo "$dir/build/src/nvtop"
    exit 0
  fi
  echo "nvtop: the source package was fetched but did not build (see $dir/build.log)"
else
  echo "nvtop: no source package from this machine's apt sources (are deb-src entries configured?): $(grep -m1 -E '^E:' apt-source.log)"
fi
# The binary package of the same version, so the comparison still runs; the
# report says which it was.
if apt-get "${opts[@]}" download nvtop >apt-bin.log 2>&1; then
  dpkg -x nvtop_*.deb extracted
  echo "nvtop: using the binary package $(ls nvtop_*.deb) instead (not built here)"
  echo "$dir/extracted/usr/bin/nvtop"
  exit 0
fi
echo "nvtop: not available here; the comparison is skipped"
exit 1
