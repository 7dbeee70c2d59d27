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
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'clang-format would change: %s\n' "${bad[@]}" >&2
  echo "run scripts/check-format.sh --fix (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1))" >&2
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
