//go:build tools

// Package tools pins fake-gcs-server, the GCS emulator the tests marked `gcs` start (BSD-2-Clause).
// scripts/fake-gcs-server.sh builds it: go build -o ../../build/tools/fake-gcs-server github.com/fsouza/fake-gcs-server
package tools

import _ "github.com/fsouza/fake-gcs-server"
