#!/usr/bin/env bash
# Build versitygw (Apache-2.0), the S3 server the tests marked `s3` start, into
# build/tools/versitygw, pinned by tools/versitygw/go.mod and go.sum; builds again only when
# those files change. Needs Go and the Go module proxy; nothing else in corpusforge needs it.
# Usage: bash scripts/versitygw.sh        (prints the binary's path)
set -euo pipefail
exec bash "$(dirname "$0")/go-tool.sh" versitygw versitygw \
  github.com/versity/versitygw/cmd/versitygw "about a minute"
