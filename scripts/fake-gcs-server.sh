#!/usr/bin/env bash
# Build fake-gcs-server (BSD-2-Clause), the GCS emulator the tests marked `gcs` start, into
# build/tools/fake-gcs-server, pinned by tools/fake-gcs-server/go.mod and go.sum; builds again
# only when those files change. Needs Go and the Go module proxy; nothing else in corpusforge
# needs it.
# Usage: bash scripts/fake-gcs-server.sh        (prints the binary's path)
set -euo pipefail
exec bash "$(dirname "$0")/go-tool.sh" fake-gcs-server fake-gcs-server \
  github.com/fsouza/fake-gcs-server "about a minute"
