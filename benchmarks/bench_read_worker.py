"""A Twitter read worker's CPU a line beyond decoding: this checkout's extract against another's.

    .venv/bin/python benchmarks/bench_read_worker.py ARCHIVE --base OTHER_CHECKOUT \
        [--members 6] [--rounds 15]

The first ``--members`` members are decoded once; then, in this one process, the read
worker's path over those lines (``read_member``: parsing and counting, then the spill:
Arrow batches, shard placement, spill files) runs with this checkout's
``corpusforge/local/extract.py`` and with ``--base``'s, alternately, ``--rounds`` times,
and ``read_member`` alone once a round. Prints CPU µs a line (min and median) of each, and
the median of the per-round difference: alternating in one process keeps the two codes
under the same load, where whole builds on a busy machine say little. The ceiling's own
parsing (``orjson.loads`` of every line) is printed beside them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from types import ModuleType

import orjson
import pyarrow as pa

import corpusforge.local.extract as this
import corpusforge.sources.twitter.read as read
from corpusforge.builds.twitter_extract import _tweet_key, extract_dead_letter_key
from corpusforge.sources.twitter.archive import MemberRef, ReadLimits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--base", required=True, help="another checkout")
    parser.add_argument("--members", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    base = _load(os.path.join(args.base, "src/corpusforge/local/extract.py"))
    refs = [r for r in read.list_archive(args.archive, read.Tally()) if isinstance(r, MemberRef)]
    refs = refs[: args.members]
    decoded = {r.member: list(read.read_member_lines(r, ReadLimits())) for r in refs}
    lines = sum(len(v) for v in decoded.values())
    read.read_member_lines = lambda ref, limits=None: iter(decoded[ref.member])
    for module in (this, base):
        module.read_member = read.read_member  # type: ignore[attr-defined]
    pa.array([0])  # pyarrow's first conversion (and its pandas question) before any timing

    texts = [item[2] for items in decoded.values() for item in items if isinstance(item, tuple)]

    def loads() -> None:
        for line in texts:
            if line.strip():
                orjson.loads(line)

    def member() -> None:
        for ref in refs:
            for _ in read.read_member(ref, ReadLimits(), read.Tally()):
                pass

    times: dict[str, list[float]] = {"this": [], "base": [], "read_member": [], "orjson": []}
    for _ in range(args.rounds):
        times["this"].append(_worker(this, refs))
        times["base"].append(_worker(base, refs))
        times["read_member"].append(_cpu(member))
        times["orjson"].append(_cpu(loads))
    print(f"{lines} lines of {len(refs)} members, {args.rounds} rounds, load {os.getloadavg()}")
    for name, values in times.items():
        low, mid = min(values) * 1e6 / lines, statistics.median(values) * 1e6 / lines
        print(f"{name:12s} min {low:.2f}  median {mid:.2f} us a line")
    gain = [(b - t) * 1e6 / lines for t, b in zip(times["this"], times["base"], strict=True)]
    print(
        f"base - this per round: median {statistics.median(gain):.2f} us a line "
        f"({min(gain):.2f} .. {max(gain):.2f})"
    )


def _load(path: str) -> ModuleType:
    """Another checkout's extract module, under a name of its own."""
    spec = importlib.util.spec_from_file_location("corpusforge.local.extract_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _cpu(task: Callable[[], object]) -> float:
    start = time.process_time()
    task()
    return time.process_time() - start


def _worker(module: ModuleType, refs: list[MemberRef]) -> float:
    """CPU seconds of ``module``'s read worker over ``refs`` (the spill folder made and
    removed outside the timing)."""
    spill = tempfile.mkdtemp(prefix="bench-read-worker-")
    try:
        job = module.ExtractJob(ReadLimits(), spill, 1, _tweet_key, extract_dead_letter_key)
        members = list(enumerate(refs, start=1))

        def run() -> None:
            for _ in module._read_members(job, 1, iter(members)):
                pass

        return _cpu(run)
    finally:
        shutil.rmtree(spill, ignore_errors=True)


if __name__ == "__main__":
    main()
