"""What the Twitter pair job's ``--pairs-per-dataset`` sampling holds on a Beam worker: the
``Top`` per dataset over whole pair rows (before 2255944), over the rows' sample keys (tuples,
2255944) and over their priorities (one integer, ``SampledPairs`` now), each in a fresh
process, alternated.

    .venv/bin/python benchmarks/bench_twitter_sample.py --rows 400000 --n 100000 --runs 3

Each process feeds ``--rows`` generated ``pair.v1`` rows (two datasets, texts of
``--chars`` characters, as one bundle's precombine meets them) to Beam's own
``TopCombineFn`` as the pipeline configures it, and prints the memory the accumulators hold
(``tracemalloc``, the rows themselves dropped once added), the bytes of the ``Top``'s output
as Beam's default coder encodes them (what a precombine sends to the merge) and the CPU a row
costs (the ``Top`` and, but for the rows, the filter of every row against its dataset's
threshold; the cost of making the rows taken off). All must keep the same pairs.
"""

from __future__ import annotations

import argparse
import functools
import json
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

DATASETS = ("qt", "rp")


def _rows(count: int, chars: int) -> Iterator[dict[str, Any]]:
    """``count`` pair rows, alternating datasets, with texts of ``chars`` characters."""
    for i in range(count):
        word = f"tweet{i} "
        text = (word * (chars // len(word) + 1))[:chars]
        yield {
            "anchor": text,
            "positive": text[::-1],
            "anchor_id": 10**18 + 2 * i,
            "positive_id": 10**18 + 2 * i + 1,
            "root_id": 10**18 + 2 * i,
            "dataset": DATASETS[i % len(DATASETS)],
            "lang": "en",
        }


def _child(mode: str, rows: int, n: int, chars: int, seed: int) -> dict[str, Any]:
    """One measurement: the ``Top`` over ``rows``, ``keys`` or ``priorities``."""
    from apache_beam.coders.coders import FastPrimitivesCoder
    from apache_beam.transforms.combiners import TopCombineFn

    from corpusforge.pairing.conversations import sample_key
    from corpusforge.transforms.twitter.pairs import sample_priority

    if mode == "rows":  # what SamplePerDataset was: Top.PerKey(n, key=sample_key, reverse)
        fn, key = TopCombineFn(n, key=functools.partial(sample_key, seed), reverse=True), None
    elif mode == "keys":  # Top.SmallestPerKey(n) over sample keys
        fn, key = TopCombineFn(n, reverse=True), functools.partial(sample_key, seed)
    else:  # SampledPairs' TopPriorities: Top.LargestPerKey(n) over priorities
        fn, key = TopCombineFn(n), functools.partial(sample_priority, seed)

    def combine() -> dict[str, Any]:
        accumulators = {d: fn.create_accumulator() for d in DATASETS}
        for row in _rows(rows, chars):
            value = row if key is None else key(row)
            accumulators[row["dataset"]] = fn.add_input(accumulators[row["dataset"]], value)
        return accumulators

    cpu = time.process_time()
    for _ in _rows(rows, chars):
        pass
    making = time.process_time() - cpu  # the rows' own cost, taken off each pass over them
    cpu = time.process_time()
    outputs = {d: fn.extract_output(a) for d, a in combine().items()}
    cpu = time.process_time() - cpu - making
    if key is not None:  # and KeepSampled: every row against its dataset's threshold
        last = {d: out[-1] for d, out in outputs.items() if len(out) >= n}  # the last kept
        start = time.process_time()
        passed = 0
        for row in _rows(rows, chars):
            threshold = last.get(row["dataset"])
            if threshold is None:
                passed += 1
            elif mode == "keys":
                passed += key(row) <= threshold
            else:
                passed += key(row) >= threshold
        cpu += time.process_time() - start - making
        assert passed == sum(len(out) for out in outputs.values())
    tracemalloc.start()
    accumulators = combine()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del accumulators
    coder = FastPrimitivesCoder()
    sent = sum(len(coder.encode(out)) for out in outputs.values())
    return {
        "held_mib": held / 2**20,
        "sent_mib": sent / 2**20,
        "us_per_row": cpu / rows * 1e6,
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "kept": sum(len(out) for out in outputs.values()),
        "kept_hash": hash(tuple(sorted(_ids(mode, v) for out in outputs.values() for v in out))),
    }


def _ids(mode: str, value: Any) -> tuple[int, int]:
    """The (anchor id, positive id) of a value a ``Top`` kept."""
    if mode == "rows":
        return value["anchor_id"], value["positive_id"]
    if mode == "keys":
        return value[1], value[2]
    packed, mask = -value, 2**64 - 1  # sample_priority, undone
    return ((packed >> 64) & mask) - 2**63, (packed & mask) - 2**63


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--n", type=int, default=100_000, help="--pairs-per-dataset")
    parser.add_argument("--chars", type=int, default=80, help="characters a text")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", choices=("rows", "keys", "priorities"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.rows, args.n, args.chars, args.seed)))
        return
    results: dict[str, list[dict[str, Any]]] = {"rows": [], "keys": [], "priorities": []}
    for _ in range(args.runs):
        for mode in results:
            argv = [sys.argv[0], *sys.argv[1:], "--child", mode]
            out = subprocess.run(
                [sys.executable, *argv], capture_output=True, text=True, check=True
            ).stdout
            results[mode].append(json.loads(out.splitlines()[-1]))
    hashes = {r["kept_hash"] for runs in results.values() for r in runs}
    assert len(hashes) == 1, "the two samples differ"
    print(f"{args.rows:,} rows, --pairs-per-dataset {args.n:,}, {args.runs} runs, medians:")
    for mode, runs in results.items():
        figures = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "kept_hash"}
        print(
            f"  Top over {mode:10}: holds {figures['held_mib']:7.1f} MiB, sends "
            f"{figures['sent_mib']:6.1f} MiB, {figures['us_per_row']:5.2f} us a row, "
            f"max RSS {figures['maxrss_mib']:6.0f} MiB, keeps {figures['kept']:,.0f}"
        )


if __name__ == "__main__":
    main()
