#!/usr/bin/env bash
# Build a Go tool pinned by tools/NAME/go.mod and go.sum into build/tools/NAME; builds again
# only when those two files change. Needs Go (https://go.dev/dl) and the Go module proxy.
# Usage: bash scripts/go-tool.sh NAME LABEL PACKAGE TIME     (prints the binary's path)
#   e.g. bash scripts/go-tool.sh prism Prism github.com/apache/beam/sdks/v2/go/cmd/prism "about two minutes"
set -euo pipefail
name=$1 label=$2 package=$3 takes=$4
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/tools/$name
stamp=$out.stamp
if ! command -v go >/dev/null 2>&1; then
  echo "[corpusforge] $label needs Go >= 1.26, which is not on PATH: install it from https://go.dev/dl" >&2
  exit 1
fi
hash=$(cat "$root/tools/$name/go.mod" "$root/tools/$name/go.sum" | sha256sum | cut -d' ' -f1)
if [ ! -x "$out" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$hash" ]; then
  echo "[corpusforge] building $label into $out ($takes the first time)" >&2
  mkdir -p "$(dirname "$out")"
  # Go's module and build caches of this one build (about 3 GB for the three tools) live in
  # a scratch folder removed after it: a tool is built once, and a fresh CI machine needs
  # that room for .venv's torch.
  scratch=$(mktemp -d "$root/build/tools/.go-scratch.XXXXXX")
  trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
  export GOMODCACHE=$scratch/mod GOCACHE=$scratch/cache
  (cd "$root/tools/$name" && GOFLAGS=-mod=readonly go build -o "$out.tmp" "$package")
  mv "$out.tmp" "$out"
  echo "$hash" > "$stamp"
fi
echo "$out"
