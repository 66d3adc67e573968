//go:build tools

// Package tools pins versitygw, the S3 server the tests marked `s3` start (Apache-2.0).
// scripts/versitygw.sh builds it: go build -o ../../build/tools/versitygw github.com/versity/versitygw/cmd/versitygw
package tools

import _ "github.com/versity/versitygw/cmd/versitygw"
