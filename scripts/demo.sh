#!/usr/bin/env bash
# Set up .venv/ and run the main job on the bundled default input: a synthetic Archive Team
# daily ZIP that corpusforge generates (20,000 tweets), built into a pair release.
# Usage: bash scripts/demo.sh [TWEETS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tweets=${1:-20000}
bash scripts/bootstrap.sh
demo=build/demo
archive=$demo/twitter-stream-2021-01-01.zip
if [ ! -f "$archive" ] || [ "$(cat "$demo/.tweets" 2>/dev/null)" != "$tweets" ]; then
  mkdir -p "$demo"
  .venv/bin/corpusforge synth twitter --out "$archive" --tweets "$tweets" --layout zip-2020 --seed 0
  echo "$tweets" > "$demo/.tweets"
fi
# 20 queries per benchmark: the paper's 5,000 would hold out every conversation of a demo-sized
# archive and leave few training pairs.
.venv/bin/corpusforge twitter build "$archive" --out "$demo/release" --benchmark-queries 20
