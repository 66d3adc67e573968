#!/usr/bin/env bash
# Create (or reuse) the virtual environment .venv/ at the repo root and install corpusforge
# into it with the given extras. Installs again only when pyproject.toml changed or an extra
# is asked for that the environment does not have yet.
# Usage: bash scripts/bootstrap.sh [EXTRA,EXTRA...]      e.g. bash scripts/bootstrap.sh dev,train
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
extras=${1:-}
py=${PYTHON:-}
if [ -z "$py" ]; then
  for candidate in python3.11 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then py=$candidate; break; fi
  done
fi
if [ ! -x .venv/bin/python ]; then
  echo "[corpusforge] creating .venv with $("$py" --version 2>&1)" >&2
  "$py" -m venv .venv
fi
stamp=.venv/.corpusforge-installed
hash=$(sha256sum pyproject.toml | cut -d' ' -f1)
installed_hash=$(sed -n 1p "$stamp" 2>/dev/null || true)
installed_extras=$(sed -n 2p "$stamp" 2>/dev/null || true)
need=0
[ "$hash" = "$installed_hash" ] || need=1
IFS=, read -r -a wanted <<< "$extras"
for e in "${wanted[@]}"; do
  [[ ",$installed_extras," == *",$e,"* ]] || need=1
done
if [ "$need" = 1 ]; then
  all=$extras
  if [ "$hash" = "$installed_hash" ] && [ -n "$installed_extras" ]; then
    all=$(printf '%s,%s' "$installed_extras" "$extras" | tr , '\n' | sed '/^$/d' | sort -u | paste -sd,)
  fi
  echo "[corpusforge] installing corpusforge[${all}] into .venv" >&2
  spec="."
  [ -n "$all" ] && spec=".[${all}]"
  # pip downloads every wheel before it installs any (torch and its CUDA wheels, about 3 GB,
  # for 6 GB installed): the downloads go to a folder beside .venv, on its disk rather than
  # a small /tmp, and removed after; no cache keeps a second copy.
  free_kb=$(df -Pk .venv | awk 'NR == 2 {print $4}')
  if [[ ",$all," == *",train,"* ]] && [ "${free_kb:-0}" -lt $((10 * 1024 * 1024)) ]; then
    echo "[corpusforge] the train extra (torch with CUDA) needs about 10 GB free for .venv; $((free_kb / 1024 / 1024)) GB free here" >&2
  fi
  scratch=$(mktemp -d "$root/.venv/.pip-tmp.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  TMPDIR=$scratch .venv/bin/python -m pip install --quiet --disable-pip-version-check \
    --no-cache-dir -e "$spec" >&2
  printf '%s\n%s\n' "$hash" "$all" > "$stamp"
fi
