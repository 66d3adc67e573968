//go:build tools

// Package tools pins Beam's Prism runner to the apache-beam version of pyproject.toml.
// scripts/prism.sh builds it: go build -o ../../build/tools/prism github.com/apache/beam/sdks/v2/go/cmd/prism
package tools

import _ "github.com/apache/beam/sdks/v2/go/cmd/prism"
