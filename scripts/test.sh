#!/usr/bin/env bash
# Set up .venv/ (dev, train, testmodels and aws extras) and run the whole test suite: ruff, mypy, pytest.
# Extra arguments go to pytest, e.g. bash scripts/test.sh -k twitter
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/bootstrap.sh dev,train,testmodels,aws
echo "== ruff"
.venv/bin/ruff check src pipelines tests
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
.venv/bin/pytest "$@"
