#!/usr/bin/env bash
# Build Beam's Prism runner into build/tools/prism, pinned by tools/prism/go.mod and go.sum to
# the apache-beam version of pyproject.toml; builds again only when those files change.
# Needs Go (https://go.dev/dl) and the Go module proxy; the default local engine never needs it.
# Usage: bash scripts/prism.sh        (prints the binary's path)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/tools/prism
stamp=$out.stamp
if ! command -v go >/dev/null 2>&1; then
  echo "[corpusforge] Prism needs Go >= 1.26, which is not on PATH: install it from https://go.dev/dl" >&2
  exit 1
fi
hash=$(cat "$root/tools/prism/go.mod" "$root/tools/prism/go.sum" | sha256sum | cut -d' ' -f1)
if [ ! -x "$out" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$hash" ]; then
  echo "[corpusforge] building Prism into $out (about two minutes the first time)" >&2
  mkdir -p "$(dirname "$out")"
  (cd "$root/tools/prism" && GOFLAGS=-mod=readonly go build -o "$out.tmp" github.com/apache/beam/sdks/v2/go/cmd/prism)
  mv "$out.tmp" "$out"
  echo "$hash" > "$stamp"
fi
echo "$out"
