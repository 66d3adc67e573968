"""A bz2 decompression bomb of a few KB -> the peak RSS of a build that reads it.

    PYTHONPATH=src:. python benchmarks/bench_bomb.py [--gib 4] [--workdir /tmp/bomb]

Builds a tar holding one good member and one bz2 member of about 5 KB that expands to
``--gib`` GiB (concatenated streams of 40 MiB of ``0``), then runs ``corpusforge twitter
build`` on it in a fresh process, once per decoder setting and once with the ratio cap off,
and prints each run's exit code, peak RSS (the build's own VmHWM), wall time and the member's
dead-letter reason. The target is a peak RSS under 1 GiB whatever the member expands to.
"""

from __future__ import annotations

import argparse
import bz2
import io
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import orjson

STREAM_BYTES = 40 << 20
GOOD_MEMBER = "2019/06/01/00/00.json.bz2"
BOMB_MEMBER = "2019/06/01/00/01.json.bz2"
RUNS = {
    "default (2 bz2 threads)": (),
    "stdlib decoder (--bz2-threads 0)": ("--bz2-threads", "0"),
    "ratio cap off (--max-member-ratio 0)": ("--max-member-ratio", "0"),
}


def bz2_bomb(expanded: int) -> bytes:
    """A bz2 member of about ``expanded`` decompressed bytes: one JSON line, then runs of
    ``0`` with no newline, as concatenated streams (49 bytes per 40 MiB)."""
    stream = bz2.compress(b"0" * STREAM_BYTES)
    head = bz2.compress(b'{"limit": {"track": 1}}\n')
    return head + stream * max(1, expanded // STREAM_BYTES)


def bomb_archive(folder: Path, expanded: int) -> Path:
    """A tar with a good member and a bomb member that expands to ``expanded`` bytes."""
    user = {"id_str": "42", "screen_name": "someone"}
    good = b"\n".join(
        orjson.dumps({"id_str": str(i), "user": user, "text": f"tweet {i}", "lang": "en"})
        for i in range(1, 6)
    )
    path = folder / f"bomb-{expanded >> 20}MiB.tar"
    members = ((GOOD_MEMBER, bz2.compress(good + b"\n")), (BOMB_MEMBER, bz2_bomb(expanded)))
    with tarfile.open(path, "w") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


# The build's own peak RSS, read from /proc/self/status (VmHWM) as it exits: the ru_maxrss
# that wait4 reports also counts what the parent held when it started the child, so a
# measurement taken from a large test process would be inflated by that process.
_MEASURED_BUILD = """
import atexit, sys
from corpusforge.perf import peak_rss_mb
path = sys.argv.pop(1)
atexit.register(lambda: open(path, "w").write(str(peak_rss_mb())))
from corpusforge.cli import main
main()
"""


def build_peak_rss(archive: Path, out: Path, flags: tuple[str, ...]) -> tuple[int, int, float]:
    """Run ``corpusforge twitter build`` in a fresh process: exit code, peak RSS bytes, seconds."""
    rss_file = out.parent / f".{out.name}.peak-rss-mb"
    cmd = [
        sys.executable, "-c", _MEASURED_BUILD, str(rss_file),
        "twitter", "build", str(archive), "--out", str(out), "--benchmark-queries", "0",
        "--quiet", *flags,
    ]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    rss = int(float(rss_file.read_text()) * (1 << 20))
    rss_file.unlink()
    return proc.returncode, rss, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4, help="GiB the bomb expands to")
    parser.add_argument("--workdir", default=None, help="folder for the archive and releases")
    args = parser.parse_args()
    folder = Path(args.workdir or tempfile.mkdtemp(prefix="corpusforge-bomb-"))
    folder.mkdir(parents=True, exist_ok=True)
    archive = bomb_archive(folder, int(args.gib * (1 << 30)))
    print(f"bomb member: {len(bz2_bomb(int(args.gib * (1 << 30)))):,} bytes -> {args.gib} GiB")
    import polars as pl

    for n, (label, flags) in enumerate(RUNS.items()):
        out = folder / f"release-{n}"
        code, rss, seconds = build_peak_rss(archive, out, flags)
        dead = pl.read_parquet(sorted(out.glob("dead_letter/*/*.parquet")))
        reasons = sorted(set(dead.filter(dead["origin_line"].is_null())["reason"])) or ["nothing"]
        print(
            f"{label}: exit {code}, peak RSS {rss / 2**20:,.0f} MiB, {seconds:.1f} s, "
            f"member dead-lettered as {', '.join(reasons)}"
        )


if __name__ == "__main__":
    main()
