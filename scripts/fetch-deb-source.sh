#!/usr/bin/env bash
# Fetches a Debian source package and unpacks it, patches applied, into DEST:
#   scripts/fetch-deb-source.sh PACKAGE DEST [VERSION]
#
# VERSION pins what is built in: that version is asked for first; when the
# sources no longer have it (a later security update replaced it), the
# newest is taken only if it is not older than VERSION. An older source, or
# an older one already unpacked in DEST, is refused.
#
# For a library Debian ships only compiled in a form the release bundle
# cannot carry (cpp-httplib: CMakeLists.txt says why), the build uses
# Debian's own source of it instead. The package comes from the machine's
# configured apt sources: each "deb" entry is read as the matching
# "deb-src" one, in a private apt state under a temporary directory, so the
# system's apt configuration is left as it is and no root is needed.
# DEST/.source-version names what was unpacked; when it is there already,
# nothing is fetched again.
set -euo pipefail

if (($# != 2 && $# != 3)); then
  echo "usage: fetch-deb-source.sh PACKAGE DEST [VERSION]" >&2
  exit 2
fi
pkg=$1
dest=$2
pin=${3:-}

# True when version $1 is not older than the pin (or there is no pin).
at_least_pin() {
  [[ -z $pin ]] || dpkg --compare-versions "$1" ge "$pin"
}

if [[ -f "$dest/.source-version" ]]; then
  have=$(cut -d' ' -f2 "$dest/.source-version")
  if at_least_pin "$have"; then
    echo "fetch-deb-source: $(cat "$dest/.source-version") already in $dest"
    exit 0
  fi
  echo "fetch-deb-source: $pkg $have in $dest is older than $pin: fetching again"
fi
for tool in apt-get dpkg-source; do
  command -v "$tool" >/dev/null || {
    echo "fetch-deb-source: $tool not found (scripts/install-deps.sh installs dpkg-dev)" >&2
    exit 1
  }
done

work=$(mktemp -d)
chmod 0755 "$work" # apt downloads as its own _apt user where it can
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parts" "$work/state/lists/partial" "$work/cache/archives/partial" "$work/dl"
: >"$work/empty.list"

# One-line sources ("deb [opts] URI suite comp...") and deb822 stanzas
# ("Types: deb ..."), each turned into its deb-src twin.
shopt -s nullglob
n=0
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [[ -f $f ]] || continue
  sed -nE 's/^[[:space:]]*deb[[:space:]]+/deb-src /p' "$f" >"$work/parts/src$((n++)).list"
done
for f in /etc/apt/sources.list.d/*.sources; do
  sed -E 's/^Types:.*$/Types: deb-src/' "$f" >"$work/parts/src$((n++)).sources"
done

apt=(apt-get -q
  -o "Dir::Etc::SourceList=$work/empty.list"
  -o "Dir::Etc::SourceParts=$work/parts"
  -o "Dir::State=$work/state"
  -o "Dir::Cache=$work/cache"
  -o Debug::NoLocking=1
  -o Acquire::Languages=none)
# A configured source without a source index (some vendors' repositories)
# fails its own deb-src fetch only; the package is looked up in the rest.
"${apt[@]}" update >"$work/update.log" 2>&1 || true
fetched=false
if [[ -n $pin ]] && (cd "$work/dl" && "${apt[@]}" source --download-only "$pkg=$pin" >"$work/source.log" 2>&1); then
  fetched=true
fi
if ! $fetched && ! (cd "$work/dl" && "${apt[@]}" source --download-only "$pkg" >>"$work/source.log" 2>&1); then
  echo "fetch-deb-source: no source package '$pkg' in the configured apt sources:" >&2
  grep -hE '^E:' "$work/update.log" "$work/source.log" >&2 || tail -5 "$work/source.log" >&2
  exit 1
fi
dsc=("$work"/dl/*.dsc)
(cd "$work/dl" && dpkg-source -x "${dsc[0]}" "$work/src" >"$work/unpack.log" 2>&1) || {
  echo "fetch-deb-source: dpkg-source could not unpack ${dsc[0]##*/}:" >&2
  tail -5 "$work/unpack.log" >&2
  exit 1
}
version=$(sed -n 's/^Version: //p' "${dsc[0]}")
if ! at_least_pin "$version"; then
  echo "fetch-deb-source: the sources offer $pkg $version, older than $pin (the version" \
    "this build pins): update the apt sources (e.g. add the security archive)" >&2
  exit 1
fi
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/src" "$dest"
echo "$pkg $version" >"$dest/.source-version"
echo "fetch-deb-source: $pkg $version unpacked in $dest"
