#!/usr/bin/env bash
# Build Beam's Prism runner into build/tools/prism, pinned by tools/prism/go.mod and go.sum to
# the apache-beam version of pyproject.toml; builds again only when those files change.
# Needs Go (https://go.dev/dl) and the Go module proxy; the default local engine never needs it.
# Usage: bash scripts/prism.sh        (prints the binary's path)
set -euo pipefail
exec bash "$(dirname "$0")/go-tool.sh" prism Prism \
  github.com/apache/beam/sdks/v2/go/cmd/prism "about two minutes"
