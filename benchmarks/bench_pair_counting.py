"""Peak RSS of the pair stage's counting pass and partition spread as the input grows.

    .venv/bin/python benchmarks/bench_pair_counting.py RELEASE [RELEASE ...] \\
        --repeat 1 4 16 32 --bucket-rows 2000000 --partitions 8 [--tree OTHER_CHECKOUT ...]

RELEASE folders hold Twitter extracts (``tweets/*/tweets/*.parquet`` and ``.../deletes/``,
as ``corpusforge twitter build`` leaves them). The input is every RELEASE's extracts, listed
``--repeat`` times (a repeated file is the same tweets once more, as an archive read twice:
more rows and conversation records, no more distinct ids). For each size and tree, in a fresh
process: :class:`~corpusforge.local.tweet_rows.TweetRows`' counting pass, then its plan for
``--partitions`` (which writes the partition files), each with its own peak (``VmHWM`` reset
between them) and wall time. Before 1058878 the stage kept its id arrays in memory; such a
tree is run through its own calls (``count_and_ids``, ``deleted_ids``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RUN = """
import json, sys, tempfile, shutil, time
from collections import Counter
sys.path.insert(0, sys.argv[1] + "/src")
from corpusforge import perf
from corpusforge.local import tweet_rows as tr
from corpusforge.text.clean import get_profile
partitions, bucket_rows = int(sys.argv[2]), int(sys.argv[3])
files = json.loads(sys.argv[4])
spill = tempfile.mkdtemp(prefix="bench-counting-")
counts, out = Counter(), {}

def step(name, start):
    seconds = round(time.perf_counter() - start, 2)
    out[name] = {"seconds": seconds, "peak_mb": round(perf.peak_rss_mb())}
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return time.perf_counter()

start = step("start", time.perf_counter())
if hasattr(tr.TweetRows, "count"):
    rows = tr.TweetRows(files["tweets"], ["en"], None, get_profile("paper"), spill, bucket_rows)
    rows.count(files["deletes"], counts)
    start = step("count", start)
    rows.plan(partitions)
else:
    rows = tr.TweetRows(files["tweets"], ["en"], None, get_profile("paper"))
    kept = rows.count_and_ids(counts)
    deleted = tr.deleted_ids(files["deletes"], kept)
    start = step("count", start)
    rows.plan(partitions, spill)
step("plan", start)
out["records"] = counts["records_in_conversations"]
print(json.dumps(out))
shutil.rmtree(spill)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="+")
    parser.add_argument("--repeat", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--bucket-rows", type=int, default=2_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--tree", action="append", default=[], help="another checkout")
    args = parser.parse_args()
    tweets: list[str] = []
    deletes: list[str] = []
    for release in args.releases:
        tweets += sorted(glob.glob(os.path.join(release, "tweets/*/tweets/*.parquet")))
        deletes += sorted(glob.glob(os.path.join(release, "tweets/*/deletes/*.parquet")))
    for repeat in args.repeat:
        files = json.dumps({"tweets": tweets * repeat, "deletes": deletes * repeat})
        for tree in [HERE, *args.tree]:
            command = [sys.executable, "-c", RUN, tree, str(args.partitions)]
            out = subprocess.run(
                [*command, str(args.bucket_rows), files], check=True, capture_output=True, text=True
            ).stdout
            run = json.loads(out)
            print(
                f"{tree} x{repeat}: {run['records']:,} records; "
                f"count {run['count']['seconds']} s, {run['count']['peak_mb']} MB; "
                f"plan {run['plan']['seconds']} s, {run['plan']['peak_mb']} MB",
                flush=True,
            )


if __name__ == "__main__":
    main()
