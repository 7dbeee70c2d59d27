#!/usr/bin/env bash
# Builds nvtop from Debian's source package (contrib) in DIR, for the
# side-by-side benchmark; nothing of it is kept in the repository. Prints the
# path of the nvtop binary on the last line, or says why there is none.
#   get_nvtop.sh DIR
set -uo pipefail
dir=$1
mkdir -p "$dir/lists/partial" && cd "$dir" || exit 1
apt_opts=(-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$dir/lists"
          -o Dir::Cache::archives="$dir" -o APT::Sandbox::User=root)
echo "deb-src http://deb.debian.org/debian bookworm contrib" >src.list
echo "deb http://deb.debian.org/debian bookworm contrib" >bin.list
if [[ -x build/src/nvtop ]]; then echo "$dir/build/src/nvtop"; exit 0; fi
if apt-get "${apt_opts[@]}" -o Dir::Etc::SourceList="$dir/src.list" update -qq >/dev/null 2>&1 &&
   apt-get "${apt_opts[@]}" -o Dir::Etc::SourceList="$dir/src.list" source nvtop >apt-source.log 2>&1; then
  src=$(find . -maxdepth 1 -type d -name 'nvtop-*' | head -1)
  # Build dependencies of the Debian package that matter for NVIDIA.
  apt-get install -y -qq --no-install-recommends libdrm-dev libsystemd-dev libncurses-dev >/dev/null 2>&1
  if cmake -S "$src" -B build -DNVIDIA_SUPPORT=ON -DAMDGPU_SUPPORT=OFF -DINTEL_SUPPORT=OFF \
       -DCMAKE_BUILD_TYPE=Release >build.log 2>&1 && cmake --build build -j"$(nproc)" >>build.log 2>&1; then
    echo "nvtop built from Debian's source package ($src)"
    echo "$dir/build/src/nvtop"
    exit 0
  fi
  echo "nvtop: the source package was fetched but did not build (see $dir/build.log)"
else
  echo "nvtop: Debian's source package (contrib) cannot be fetched here: $(grep -m1 -E '^E:' apt-source.log)"
fi
# The binary of the same Debian version, so the comparison still runs; the
# report says which it was.
if apt-get "${apt_opts[@]}" -o Dir::Etc::SourceList="$dir/bin.list" update -qq >/dev/null 2>&1 &&
   apt-get "${apt_opts[@]}" -o Dir::Etc::SourceList="$dir/bin.list" download nvtop >apt-bin.log 2>&1; then
  dpkg -x nvtop_*.deb extracted
  echo "nvtop: using Debian's binary package $(ls nvtop_*.deb) instead (not built here)"
  echo "$dir/extracted/usr/bin/nvtop"
  exit 0
fi
echo "nvtop: not available here; the comparison is skipped"
exit 1
