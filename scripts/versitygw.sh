#!/usr/bin/env bash
# Build versitygw (Apache-2.0), the S3 server the tests marked `s3` start, into
# build/tools/versitygw, pinned by tools/versitygw/go.mod and go.sum; builds again only when
# those files change. Needs Go and the Go module proxy; nothing else in corpusforge needs it.
# Usage: bash scripts/versitygw.sh        (prints the binary's path)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/tools/versitygw
stamp=$out.stamp
if ! command -v go >/dev/null 2>&1; then
  echo "[corpusforge] versitygw needs Go >= 1.26, which is not on PATH: install it from https://go.dev/dl" >&2
  exit 1
fi
hash=$(cat "$root/tools/versitygw/go.mod" "$root/tools/versitygw/go.sum" | sha256sum | cut -d' ' -f1)
if [ ! -x "$out" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$hash" ]; then
  echo "[corpusforge] building versitygw into $out (about a minute the first time)" >&2
  mkdir -p "$(dirname "$out")"
  (cd "$root/tools/versitygw" && GOFLAGS=-mod=readonly go build -o "$out.tmp" github.com/versity/versitygw/cmd/versitygw)
  mv "$out.tmp" "$out"
  echo "$hash" > "$stamp"
fi
echo "$out"
