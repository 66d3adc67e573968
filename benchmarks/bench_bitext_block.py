"""The CPU a bitext pair costs in the block rule of a filter worker, with real fastText (issue 38).

    PYTHONPATH=/tmp/ft-source .venv/bin/python benchmarks/bench_bitext_block.py \\
        --pairs 400000 --runs 5 --tree . --tree /tmp/base
    .venv/bin/python benchmarks/bench_bitext_block.py --pairs 100000 --replay \\
        --tree . --tree /tmp/base

``bench_opusfilter.py``'s input (Tatoeba de-en, every line distinct), its first ``--pairs``
lines as the engine's blocks of 2,048 raw pairs, each through what a worker runs of the rule
(:func:`~corpusforge.pairing.columns.bitext_block`, :meth:`BitextBlock.columns`, and the
shard placement of the kept pairs' sort keys, :func:`~corpusforge.sinks.shards.placements`),
with the default rules of ``corpusforge bitext build``; reading and the Arrow table are left
out. fastText is the one on the path (put a source build first on ``PYTHONPATH`` to measure
it); ``--replay`` answers every line from a dict recorded once before timing (a Python call a
line in every tree), leaving the Python around fastText. As in a worker, the input held by
this process is frozen out of the garbage collector's sight (``gc.freeze``) and each block's
results are dropped once hashed: a collector walking 400k held pairs would time itself.

Each ``--tree`` runs in a fresh process with its ``src`` first on the path, the trees
alternating (A B A B ...); CPU is ``time.process_time`` over the blocks after one warm-up
block. Every tree must give the same blocks: each run prints a digest of its reasons, kept
columns and placements.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import time
from pathlib import Path
from typing import Any

from _blocks import BATCH, alternate, raw_fields

REPO = Path(__file__).resolve().parents[1]


def _run(pairs: int, replay: bool) -> None:
    """One timed run in this process (the tree is whatever ``corpusforge`` imports)."""
    from corpusforge.pairing.candidates import PairRules
    from corpusforge.pairing.columns import RawPairs, bitext_block
    from corpusforge.pairing.filters import BitextFilterConfig, LanguageFilterConfig
    from corpusforge.sinks.shards import placements
    from corpusforge.text.langid import LanguageIdentifier

    fields = raw_fields(pairs)
    blocks = [RawPairs.of_fields(fields[i : i + BATCH]) for i in range(0, len(fields), BATCH)]
    del fields
    rules = PairRules(LanguageFilterConfig(), BitextFilterConfig())
    lid = LanguageIdentifier.load(None)
    if replay:
        real = lid._predict
        answers: dict[str, list[tuple[float, str]]] = {}

        def record(line: str, *arguments: Any) -> list[tuple[float, str]]:
            answer = answers.get(line)
            if answer is None:
                answer = answers[line] = real(line, *arguments)
            return answer

        lid = LanguageIdentifier(lid.model_path, lid.requested, record)
        for block in blocks:
            bitext_block(block, rules, lid)
        get = answers.__getitem__
        lid = LanguageIdentifier(lid.model_path, lid.requested, lambda line, *_: get(line))

    def work(raw: RawPairs) -> tuple[Any, dict[str, list[Any]], Any]:
        block = bitext_block(raw, rules, lid)
        columns = block.columns()
        sort_keys = zip(columns["_dedup"], columns["anchor"], columns["positive"], strict=True)
        return block, columns, placements(sort_keys)

    work(blocks[0])
    gc.collect()
    gc.freeze()  # the input held here is not a worker's: out of the collector's sight
    digest = hashlib.sha256()
    cpu = 0.0
    for raw in blocks:  # each block's results dropped once hashed, as a worker sends them
        start = time.process_time()
        block, columns, placed = work(raw)
        cpu += time.process_time() - start
        digest.update(repr((block.reasons, columns)).encode())
        digest.update(placed.tobytes())
        del block, columns, placed
    print(f"{cpu / pairs * 1e6:.3f} {digest.hexdigest()[:16]}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", action="append", default=[], help="a checkout (default: this)")
    parser.add_argument("--replay", action="store_true", help="fastText's answers replayed")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _run(args.pairs, args.replay)
        return
    arguments = ["--pairs", str(args.pairs), *(["--replay"] if args.replay else [])]
    alternate(__file__, args.tree or [str(REPO)], args.runs, arguments)


if __name__ == "__main__":
    main()
