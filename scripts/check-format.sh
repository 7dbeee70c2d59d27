#!/usr/bin/env bash
# Fails, naming each file, when clang-format (the .clang-format at the top of
# the tree) would change a C/C++ file under src/, tests/, tools/ or bench/.
#   scripts/check-format.sh          check
#   scripts/check-format.sh --fix    reformat those files in place
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- 'src/*.cc' 'src/*.h' 'tests/*.cc' \
    'tests/*.h' 'tools/*.cc' 'tools/*.h' 'bench/*.cc' 'bench/*.h')
else  # an unpacked tarball
  mapfile -t files < <(find src tests tools bench -name '*.cc' -o -name '*.h' | sort)
fi
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# Many files per clang-format run, one run per CPU: a process per file cost
# CI ~40 s on a slow 2-core machine. A file that needs formatting is named in
# clang-format's "file:line:col: error: code should be clang-formatted".
report=$(printf '%s\0' "${files[@]}" |
  xargs -0 -n 64 -P "$(nproc)" clang-format --dry-run -Werror 2>&1 >/dev/null) && rc=0 || rc=$?
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
  <<<"$report" | sort -u)
if ((rc != 0 && ${#bad[@]} == 0)); then
  printf 'clang-format failed:\n%s\n' "$report" >&2
  exit 1
fi
if ((${#bad[@]})); then
  printf 'clang-format would change: %s\n' "${bad[@]}" >&2
  echo "run scripts/check-format.sh --fix (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1))" >&2
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
