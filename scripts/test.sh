#!/usr/bin/env bash
# Set up .venv/ (dev, train, testmodels, aws, gcp and read extras) and run the whole test suite: ruff, mypy, pytest.
# Every test runs, the ones marked slow and portable included (-m ""; portable ones skip
# when no Prism binary is built, see scripts/prism.sh). A plain `.venv/bin/pytest` runs the
# quick set instead (not slow, not portable: pyproject.toml's addopts).
# Extra arguments go to pytest, e.g. bash scripts/test.sh -k twitter, or
# bash scripts/test.sh -m 'not slow' for the quick set with ruff and mypy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/bootstrap.sh dev,train,testmodels,aws,gcp,read
echo "== ruff"
.venv/bin/ruff check src pipelines tests
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
.venv/bin/pytest -m "" "$@"
