#!/usr/bin/env bash
# Rebuild fasttext-predict in .venv from its source distribution (opt-in; the default install
# keeps PyPI's wheel). Same version, same C++ code, the sdist's own flags (-O3 -flto) and no
# -march: portable to any x86-64 machine with this system's C++ runtime. It predicts in
# about half the CPU of the wheel, whose manylinux2014 toolchain (GCC 10 on CentOS 7, the old
# std::string ABI) makes fastText's hash lookups and string copies slower (benchmarks/RESULTS.md).
# The predictions are identical: the script ends by checking them against the wheel's
# (tests/bitext/test_fasttext_build.py). Needs g++ and Python's headers.
# Usage: bash scripts/fasttext-from-source.sh
# Undo:  .venv/bin/pip install --force-reinstall --no-deps --only-binary :all: fasttext-predict==VERSION
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v g++ >/dev/null 2>&1; then
  echo "error: building fasttext-predict needs g++ (apt-get install g++)" >&2
  exit 2
fi
version=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('fasttext-predict'))")
echo "[corpusforge] rebuilding fasttext-predict $version from source" >&2
# no CFLAGS/CXXFLAGS from the caller's shell: a -march=native there would tie the build to this CPU
env -u CFLAGS -u CXXFLAGS -u LDFLAGS .venv/bin/pip install --quiet --force-reinstall --no-deps \
  --no-binary fasttext-predict "fasttext-predict==$version"
.venv/bin/pytest -q -m "" -p no:cacheprovider tests/bitext/test_fasttext_build.py
