#!/usr/bin/env bash
# Builds the release bundle and the Debian and RPM packages of gpudoctor:
#   OUT/gpudoctor-VERSION-linux-x86_64.tar.gz   unpack anywhere, run bin/gpudoctor
#   OUT/gpudoctor_VERSION_amd64.deb             /opt/gpudoctor, /usr/bin links,
#                                               the systemd unit (not enabled)
#   OUT/gpudoctor-VERSION-1.x86_64.rpm          the same files as the .deb, for
#                                               RHEL/Rocky 9
#
#   scripts/package.sh [--build-dir DIR [--no-build]] [--out DIR] [--no-deb] [--no-rpm]
#     --build-dir DIR  take gpudoctor and gpudoctor-full from this configured
#                      CMake build (built here if out of date); default: a
#                      Release build in build/release, configured as
#                      scripts/install.sh does
#     --no-build       take the binaries of --build-dir as they are (the
#                      tests, which must not rebuild the tree they test)
#     --out DIR        where the packages go (default build/package)
#     --no-deb         no .deb
#     --no-rpm         no .rpm
#
# What the bundle holds (docs/install.md):
#   bin/        gpudoctor, gpudoctor-full: stripped, run path $ORIGIN/../lib,
#               libstdc++ linked in (-static-libstdc++, src/cli/CMakeLists.txt)
#   lib/        every shared library they load that is not part of the base
#               system (BASE_LIBS below), each with run path $ORIGIN;
#               libgpudoctor-pods.so (dlopen'ed on Kubernetes) and its own
#   licenses/   LICENSE of gpudoctor; <debian package>/copyright of each
#               bundled library and of each linked in; cpp-httplib/ and
#               simdjson/: LICENSE and copyright of the source packages built in
#   deploy/     the systemd unit, Prometheus/Alertmanager/Grafana/Kubernetes
#               examples, the Dockerfile
#   docs/       the --help text of every command, install.md
#
# The glibc floor: the binaries and bundled libraries ask for no glibc symbol
# newer than GLIBC_2.34 (Ubuntu 22.04, RHEL/Rocky 9) and no libstdc++ symbol
# newer than GLIBCXX_3.4.29 (GCC 11: RHEL/Rocky 9). This script refuses to
# package anything that asks for more, naming the file and the symbols
# (objdump -T); tests/package checks the same from the outside.
#
# Needs: cmake, ninja, patchelf, dpkg-deb, rpmbuild (package rpm), objdump
# (binutils), strip, tar, gzip (scripts/install-deps.sh). SOURCE_DATE_EPOCH,
# when set, fixes the build date and the file times in the archives
# (reproducible builds).
set -euo pipefail
cd "$(dirname "$0")/.."
src_dir=$(pwd)
# Every mode is set explicitly below (set_modes); this umask only keeps the
# scratch files of the build private to the packager's user and group.
umask 022

build_dir=""
out_dir="build/package"
make_deb=1
make_rpm=1
no_build=0
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --build-dir=*) build_dir="${1#*=}"; shift ;;
    --out) out_dir="$2"; shift 2 ;;
    --out=*) out_dir="${1#*=}"; shift ;;
    --no-deb) make_deb=0; shift ;;
    --no-rpm) make_rpm=0; shift ;;
    --no-build) no_build=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# The highest versions anything shipped may ask for.
GLIBC_FLOOR=2.34
GLIBCXX_FLOOR=3.4.29
# Libraries taken from the target system, not bundled: glibc itself (it
# cannot be bundled: ld.so and libc must match each other and the kernel
# interface of the host), and the C++ runtime (GCC's). The binaries link
# libstdc++ in, and load no C++ library; libgpudoctor-pods.so (gRPC,
# protobuf) still loads the system's libstdc++.so.6, and asks it for no more
# than GLIBCXX_3.4.29, which every target has (GCC 11 and later). Debian 12's
# own libstdc++.so.6 asks for glibc 2.36, so it could not be bundled either.
# libgcc_s: the unwinder, on every system.
BASE_LIBS="linux-vdso.so.1 ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0
libdl.so.2 librt.so.1 libstdc++.so.6 libgcc_s.so.1"

for tool in cmake patchelf objdump strip tar gzip; do
  command -v "$tool" >/dev/null || {
    echo "package.sh: $tool not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
if ((make_deb)) && ! command -v dpkg-deb >/dev/null; then
  echo "package.sh: dpkg-deb not found (package dpkg)" >&2; exit 1
fi
if ((make_rpm)) && ! command -v rpmbuild >/dev/null; then
  echo "package.sh: rpmbuild not found (package rpm; or --no-rpm)" >&2; exit 1
fi

start=$(date +%s.%N)
if [[ -z "$build_dir" ]]; then
  build_dir=build/release
  # The build the tests run (scripts/test.sh, scripts/install.sh says why).
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
    -DCMAKE_UNITY_BUILD=ON -DGD_BUILD_TESTS=OFF -DGD_BUILD_BENCH=OFF >/dev/null
fi
[[ -f "$build_dir/CMakeCache.txt" ]] || {
  echo "package.sh: $build_dir is not a configured CMake build" >&2; exit 1; }
if ((!no_build)); then
  cmake --build "$build_dir" --target gpudoctor gpudoctor-full gpudoctor-manuals \
    gpudoctor-pods
fi
build_dir=$(cd "$build_dir" && pwd)

# The version: the header CMake generated from project(VERSION), the one
# source `gpudoctor --version` prints.
version=$(sed -n 's/^#define GD_VERSION "\(.*\)"$/\1/p' "$build_dir/generated/cli/version.h")
[[ -n "$version" ]] || { echo "package.sh: no GD_VERSION in $build_dir" >&2; exit 1; }
name="gpudoctor-$version-linux-x86_64"

mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
stage="$out_dir/stage"
root="$stage/$name"
rm -rf "$stage"
mkdir -p "$root"/{bin,lib,licenses,docs,deploy}

# The Debian package that owns a file (merged /usr: dpkg may know the
# /lib path of a file in /usr/lib or the other way round).
owner_package() {
  local p
  for p in "$1" "${1#/usr}" "/usr$1"; do
    dpkg-query -S "$p" 2>/dev/null | head -1 | cut -d: -f1 && return 0
  done
  return 1
}

is_base() { [[ " $(echo $BASE_LIBS) " == *" $1 "* ]]; }

# Modes set explicitly, whatever the packager's umask (with 002, the default
# for users on RHEL-family systems, every directory came out group-writable,
# /opt/gpudoctor/lib included, where the binaries load libraries from):
# directories and executables 0755, every other file 0644. Links keep their
# own (they have none).
set_modes() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -perm /111 -exec chmod 0755 {} +
  find "$1" -type f ! -perm /111 -exec chmod 0644 {} +
}

# bin/: stripped copies; the libraries they need, by ldd with a clean
# environment (what the build host resolves).
for b in gpudoctor gpudoctor-full; do
  install -m 0755 "$build_dir/src/cli/$b" "$root/bin/$b"
  strip --strip-unneeded "$root/bin/$b"
done
# lib/ also holds libgpudoctor-pods.so, the Kubernetes client gpudoctor
# loads with dlopen from $ORIGIN/../lib (docs/kubernetes.md), with the gRPC,
# protobuf and OpenSSL libraries it needs: only it links them.
pods_lib=src/pods/libgpudoctor-pods.so
[[ -f "$build_dir/$pods_lib" ]] || { echo "package.sh: $build_dir/$pods_lib not built" >&2; exit 1; }
install -m 0644 "$build_dir/$pods_lib" "$root/lib/libgpudoctor-pods.so"
strip --strip-unneeded "$root/lib/libgpudoctor-pods.so"
patchelf --set-rpath '$ORIGIN' "$root/lib/libgpudoctor-pods.so"
declare -A bundled=()  # soname -> resolved path
while read -r soname path; do
  is_base "$soname" && continue
  [[ "$path" == /* ]] || { echo "package.sh: $soname: not found on this host" >&2; exit 1; }
  bundled[$soname]=$path
done < <(for b in src/cli/gpudoctor src/cli/gpudoctor-full $pods_lib; do
           env -i ldd "$build_dir/$b"
         done | awk '$2 == "=>" { print $1, $3 }' | sort -u)

declare -A packages=()
for soname in "${!bundled[@]}"; do
  real=$(readlink -f "${bundled[$soname]}")
  install -m 0644 "$real" "$root/lib/$soname"
  strip --strip-unneeded "$root/lib/$soname"
  patchelf --set-rpath '$ORIGIN' "$root/lib/$soname"
  pkg=$(owner_package "${bundled[$soname]}" || owner_package "$real") || {
    echo "package.sh: no Debian package owns $real (its licence is unknown)" >&2; exit 1; }
  packages[$pkg]=1
done
for b in gpudoctor gpudoctor-full; do
  patchelf --set-rpath '$ORIGIN/../lib' "$root/bin/$b"
done

# What is compiled into the binaries rather than bundled has its licence in
# licenses/ too: the Debian packages of the static archives (libstdc++.a of
# the build's compiler, libyaml-cpp.a, libcrypt.a) and of the header-only
# fmt, spdlog and toml++, and cpp-httplib and simdjson (Debian's source
# packages, fetched by scripts/install-deps.sh).
cache_path() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }
cxx=$(cache_path CMAKE_CXX_COMPILER)
for f in "$("$cxx" -print-file-name=libstdc++.a)" "$(cache_path GD_YAMLCPP_STATIC)" \
         "$(cache_path GD_XCRYPT_STATIC)" /usr/include/fmt/format.h /usr/include/spdlog/spdlog.h \
         /usr/include/toml++/toml.h; do
  real=$(readlink -f "$f")
  pkg=$(owner_package "$f" || owner_package "$real") || {
    echo "package.sh: no Debian package owns $f (its licence is unknown)" >&2; exit 1; }
  packages[$pkg]=1
done
for src in cpp-httplib:GD_HTTPLIB_SOURCE_DIR simdjson:GD_SIMDJSON_SOURCE_DIR; do
  dir=$(cache_path "${src#*:}")
  mkdir -p "$root/licenses/${src%%:*}"
  install -m 0644 "$dir/LICENSE" "$root/licenses/${src%%:*}/LICENSE"
  install -m 0644 "$dir/debian/copyright" "$root/licenses/${src%%:*}/copyright"
done

# licenses/: gpudoctor's own and, per Debian package, its copyright file.
install -m 0644 LICENSE "$root/licenses/gpudoctor.LICENSE"
for pkg in "${!packages[@]}"; do
  base=${pkg%%:*}
  [[ -f "/usr/share/doc/$base/copyright" ]] || {
    echo "package.sh: /usr/share/doc/$base/copyright missing" >&2; exit 1; }
  mkdir -p "$root/licenses/$base"
  install -m 0644 "/usr/share/doc/$base/copyright" "$root/licenses/$base/copyright"
done

# The glibc floor, checked on everything that ships: each symbol FILE takes
# from another object (*UND*) with a version of PREFIX_ (GLIBC, GLIBCXX)
# above FLOOR, as "VERSION SYMBOL" lines.
above_floor() {
  objdump -T "$1" | awk -v p="$2" -v floor="$3" '
    function newer(a, b,   x, y, n, i) {
      n = split(a, x, "."); split(b, y, ".")
      for (i = 1; i <= n || i in y; i++) if (x[i] + 0 != y[i] + 0) return x[i] + 0 > y[i] + 0
      return 0
    }
    $0 ~ /\*UND\*/ && match($0, "[( ]" p "_[0-9][0-9.]*") {
      v = substr($0, RSTART + length(p) + 2, RLENGTH - length(p) - 2)
      if (newer(v, floor)) print p "_" v, $NF
    }'
}
too_new=""
for f in "$root"/bin/* "$root"/lib/*; do
  while read -r v sym; do
    too_new+="  ${f#$root/} asks for $sym@$v"$'\n'
  done < <(above_floor "$f" GLIBC "$GLIBC_FLOOR"; above_floor "$f" GLIBCXX "$GLIBCXX_FLOOR")
done
if [[ -n "$too_new" ]]; then
  printf 'package.sh: above the floor (GLIBC_%s, GLIBCXX_%s):\n%s' \
    "$GLIBC_FLOOR" "$GLIBCXX_FLOOR" "$too_new" >&2
  exit 1
fi

# deploy/ and docs/. The --help texts come from the staged binary run with
# an empty environment: the bundle is known to start before it is packed.
cp -r deploy/. "$root/deploy/"
rm -f "$root/deploy/docker/Dockerfile.dockerignore"
install -m 0644 docs/install.md "$root/docs/install.md"
# argv[0] is "gpudoctor", so that the usage lines read as typed (and the
# texts do not depend on where the bundle was staged).
help_of() { env -i bash -c 'exec -a gpudoctor "$0" "$@"' "$root/bin/gpudoctor-full" "$@" --help; }
help_of > "$root/docs/gpudoctor.txt"
commands=$(sed -n '/^Subcommands:/,$ s/^  \([a-z][a-z-]*\)  .*/\1/p' "$root/docs/gpudoctor.txt")
[[ -n "$commands" ]] || { echo "package.sh: no commands in --help" >&2; exit 1; }
for c in $commands; do
  help_of "$c" > "$root/docs/gpudoctor-$c.txt"
done
env -i "$root/bin/gpudoctor" --version > "$root/VERSION"

set_modes "$stage"

# Reproducible archives: fixed owner, order and times; gzip without a name.
mtime=${SOURCE_DATE_EPOCH:-$(date +%s)}
tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime")
tarball="$out_dir/$name.tar.gz"
tar -C "$stage" "${tar_flags[@]}" -cf - "$name" | gzip -n -9 > "$tarball"
echo "package.sh: $tarball ($(du -k "$tarball" | cut -f1) KiB)"

if ((make_deb || make_rpm)); then
  # The installed tree, the same in both packages: /opt/gpudoctor holds the
  # bundle as it is (its lib/ must not mix with the system's); /usr/bin gets
  # links; the unit goes where packages put units and names
  # /usr/bin/gpudoctor. No maintainer scripts: the service is installed, not
  # enabled and not started (docs/install.md).
  tree="$stage/tree"
  mkdir -p "$tree/opt" "$tree/usr/bin" "$tree/usr/lib/systemd/system" \
           "$tree/usr/share/doc/gpudoctor"
  cp -a "$root" "$tree/opt/gpudoctor"
  rm -rf "$tree/opt/gpudoctor/deploy/docker"
  for b in gpudoctor gpudoctor-full; do
    ln -s "/opt/gpudoctor/bin/$b" "$tree/usr/bin/$b"
  done
  sed 's|/usr/local/bin/gpudoctor|/usr/bin/gpudoctor|g' deploy/systemd/gpudoctor.service \
    > "$tree/usr/lib/systemd/system/gpudoctor.service"
  chmod 0644 "$tree/usr/lib/systemd/system/gpudoctor.service"
  install -m 0644 LICENSE "$tree/usr/share/doc/gpudoctor/copyright"
  # The manual pages (gzipped, as man-db reads them) and the completions,
  # written by the build from the command table.
  mkdir -p "$tree/usr/share/man/man1" "$tree/usr/share/bash-completion/completions" \
           "$tree/usr/share/zsh/vendor-completions" "$tree/usr/share/fish/vendor_completions.d"
  for page in "$build_dir"/share/man/man1/*.1; do
    gzip -n -9 -c "$page" > "$tree/usr/share/man/man1/$(basename "$page").gz"
  done
  completions="$build_dir/share/completions"
  install -m 0644 "$completions/gpudoctor.bash" "$tree/usr/share/bash-completion/completions/gpudoctor"
  install -m 0644 "$completions/_gpudoctor" "$tree/usr/share/zsh/vendor-completions/_gpudoctor"
  install -m 0644 "$completions/gpudoctor.fish" "$tree/usr/share/fish/vendor_completions.d/gpudoctor.fish"
  set_modes "$tree"
  find "$tree" -exec touch -h -d "@$mtime" {} +
fi

# The packages' one summary and description (the .deb indents it a space).
summary="tells what is wrong with a GPU server and helps fix it"
description="gpudoctor reads NVML, /proc and the kernel log to show who uses each GPU,
diagnose slow or under-used GPU servers, stress-test GPUs (burn) and serve
Prometheus metrics, a dashboard and history (gpudoctor serve). The systemd
unit gpudoctor.service is installed but neither enabled nor started.
Its libraries other than glibc and the C++ runtime are bundled in
/opt/gpudoctor/lib."

if ((make_deb)); then
  deb="$stage/deb"
  cp -a "$tree" "$deb"
  mkdir -p "$deb/DEBIAN"
  size_kib=$(du -sk --exclude=DEBIAN "$deb" | cut -f1)
  cat > "$deb/DEBIAN/control" <<EOF
Package: gpudoctor
Version: $version
Architecture: amd64
Maintainer: gpudoctor developers <gpudoctor@localhost>
Installed-Size: $size_kib
Depends: libc6 (>= $GLIBC_FLOOR), libstdc++6 (>= 11), libgcc-s1
Section: admin
Priority: optional
Description: $summary
$(sed 's/^/ /' <<<"$description")
EOF
  set_modes "$deb/DEBIAN"
  find "$deb/DEBIAN" -exec touch -h -d "@$mtime" {} +
  debfile="$out_dir/gpudoctor_${version}_amd64.deb"
  SOURCE_DATE_EPOCH=$mtime dpkg-deb --root-owner-group -Zgzip --build "$deb" "$debfile" >/dev/null
  echo "package.sh: $debfile ($(du -k "$debfile" | cut -f1) KiB)"
fi

if ((make_rpm)); then
  # The .rpm: the tree above as it is (no %build; rpmbuild only packs it).
  # rpm's automatic dependencies are off: they would make the bundled
  # libraries in /opt/gpudoctor/lib Provides of the package (other packages
  # could then be satisfied by a private copy) and ask for them again.
  # Requires: by soname, what the shipped files take from the system (glibc,
  # libgcc_s, and libstdc++ for libgpudoctor-pods.so), each at
  # the highest version asked of it: names every distribution's packages
  # provide (RHEL/Rocky 9: glibc, libstdc++, libgcc).
  declare -A needs=()  # soname -> highest version asked of it ("" if none)
  for f in "$root"/bin/* "$root"/lib/*; do
    while read -r lib; do
      if is_base "$lib"; then needs[$lib]=${needs[$lib]:-}; fi
    done < <(objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }')
    # objdump -p's Version References: "required from LIB:", then a line per
    # version of LIB asked for.
    while read -r lib v; do
      [[ -n "${needs[$lib]+x}" ]] || continue
      needs[$lib]=$(printf '%s\n%s\n' "${needs[$lib]}" "$v" | sed '/^$/d' | sort -V | tail -1)
    done < <(objdump -p "$f" | awk '/^  required from / { lib = $3; sub(/:$/, "", lib); next }
                                    lib && NF == 4 && $1 ~ /^0x/ { print lib, $4 }')
  done
  requires=""
  for lib in $(printf '%s\n' "${!needs[@]}" | sort); do
    requires+="Requires: $lib(${needs[$lib]})(64bit)"$'\n'
  done
  rpmtop="$stage/rpm"
  mkdir -p "$rpmtop"/{SPECS,RPMS,BUILD,tmp}
  cat > "$rpmtop/SPECS/gpudoctor.spec" <<EOF
Name: gpudoctor
Version: $version
Release: 1
Summary: $summary
License: MIT and the licences in /opt/gpudoctor/licenses
AutoReqProv: no
${requires}
%description
$description

%install
cp -a "$tree/." %{buildroot}/

%files
%defattr(-,root,root,-)
/opt/gpudoctor
/usr/bin/gpudoctor
/usr/bin/gpudoctor-full
/usr/lib/systemd/system/gpudoctor.service
/usr/share/man/man1/*
/usr/share/bash-completion/completions/gpudoctor
/usr/share/zsh/vendor-completions/_gpudoctor
/usr/share/fish/vendor_completions.d/gpudoctor.fish
%doc /usr/share/doc/gpudoctor
EOF
  # Packed as staged: no stripping, no /usr/lib/.build-id links, no debuginfo
  # package; a gzip payload (every rpm reads it); times from SOURCE_DATE_EPOCH.
  SOURCE_DATE_EPOCH=$mtime rpmbuild -bb --target x86_64 --quiet \
    --define "_topdir $rpmtop" --define "_tmppath $rpmtop/tmp" \
    --define "__os_install_post %{nil}" --define "debug_package %{nil}" \
    --define "_build_id_links none" --define "_binary_payload w9.gzdio" \
    --define "use_source_date_epoch_as_buildtime 1" \
    --define "clamp_mtime_to_source_date_epoch 1" --define "_buildhost localhost" \
    "$rpmtop/SPECS/gpudoctor.spec" >"$rpmtop/rpmbuild.log" 2>&1 || {
      cat "$rpmtop/rpmbuild.log" >&2; echo "package.sh: rpmbuild failed" >&2; exit 1; }
  rpmfile="$out_dir/gpudoctor-$version-1.x86_64.rpm"
  mv "$rpmtop/RPMS/x86_64/gpudoctor-$version-1.x86_64.rpm" "$rpmfile"
  echo "package.sh: $rpmfile ($(du -k "$rpmfile" | cut -f1) KiB)"
fi

echo "package.sh: bundled ${#bundled[@]} libraries, licences of ${#packages[@]} Debian packages, in" \
  "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
