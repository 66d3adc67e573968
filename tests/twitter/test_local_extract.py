"""The local extract writes the Beam extract pipeline's files and counts, spilled or not."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from corpusforge.builds import twitter_extract as tb
from corpusforge.builds import twitter_pairs as tp
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig
from corpusforge.local import extract as local_extract
from corpusforge.local.spill import ArrowFiles
from corpusforge.synth.twitter import write_synthetic_archive
from tests.hostile.conftest import GOOD, member, tweet, write_tar

M0 = "2019/06/01/00/00.json.bz2"
M1 = "2019/06/01/00/01.json.bz2"


def _extract(archive: str, out: Path, engine: str, workers: int = 1) -> dict[str, Any]:
    """Extract ``archive`` with ``engine``; its files (path -> rows, sha256) and counts."""
    config = TwitterConfig(
        inputs=(archive,),
        out=str(out),
        extract_engine=engine,
        rows_per_shard=700,
        workers=workers,
    )
    described = tb.describe_input(archive, config)
    tb.run_extract([described], config, Runner())
    folder = out / "tweets" / described.extract
    files = json.loads((folder / "_files.json").read_text())
    assert (folder / "_SUCCESS").is_file()
    assert not list(folder.glob("_spill-*"))
    return {
        "files": {f["path"]: (f["rows"], f["sha256"]) for f in files},  # relative to the release
        "counts": json.loads((folder / "_counts.json").read_text()),
    }


def _damaged_archive(tmp_path: Path) -> str:
    """A truncated member, bad lines, a duplicate tweet and repeated delete notices."""
    big = [
        tweet(100 + i, f"tweet {i} about the spring garden and its many roses") for i in range(3000)
    ]
    damaged = member(big)
    lines = [
        *GOOD,
        b"this is not json",
        GOOD[1],  # the same tweet twice
        b'{"delete": {"status": {"id_str": "3", "user_id_str": "42"}}}',
        b'{"delete": {"status": {"id_str": "3", "user_id_str": "42"}}}',
        b'{"id_str": "8", "user": {}, "text": "cut off in the mid',
    ]
    return write_tar(
        tmp_path / "damaged.tar",
        [(M0, damaged[: len(damaged) // 2]), (M1, member(lines, newline_at_end=False))],
    )


ARCHIVES = {
    "zip-2020": lambda p: _synthetic(p, "zip-2020", "v1"),
    "tar-2022-v2": lambda p: _synthetic(p, "tar-2022", "v2"),
    "tar-2013": lambda p: _synthetic(p, "tar-2013", "v1"),
    "tar-gz": lambda p: _synthetic(p, "tar-gz", "v1"),
    "damaged": _damaged_archive,
}


def _synthetic(tmp_path: Path, layout: str, api: str) -> str:
    suffix = {"zip-2020": "zip", "tar-gz": "tar.gz"}.get(layout, "tar")
    path = tmp_path / f"twitter-stream-{layout}.{suffix}"
    write_synthetic_archive(path, tweets=2500, layout=layout, api=api, seed=11)
    return str(path)


QUICK = {("zip-2020", 2, True), ("damaged", 2, False), ("damaged", 1, True)}
"""The cases of the default run; the others are marked slow."""


@pytest.mark.parametrize(
    ("name", "workers", "partitioned"),
    [
        pytest.param(
            name,
            workers,
            partitioned,
            id=f"{name}-{workers}w-{'partitioned' if partitioned else 'whole'}",
            marks=() if (name, workers, partitioned) in QUICK else pytest.mark.slow,
        )
        for name in sorted(ARCHIVES)
        for workers in (1, 2, 4)
        for partitioned in (False, True)
    ],
)
def test_same_extract_as_the_beam_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, workers: int, partitioned: bool
) -> None:
    archive = ARCHIVES[name](tmp_path)
    reference = _extract(archive, tmp_path / "beam", "beam")
    spilled: list[str] = []
    if partitioned:  # many partitions, and rows to disk every few records
        monkeypatch.setattr(tb, "partition_bytes", lambda budget: 2_000)
        monkeypatch.setattr(local_extract, "BATCH_ROWS", 7)
        real_write = ArrowFiles.write
        monkeypatch.setattr(
            ArrowFiles,
            "write",
            lambda self, key, rows: (
                spilled.append(self._path(key)),
                real_write(self, key, rows),
            ),
        )
    local = _extract(archive, tmp_path / "local", "local", workers)
    assert local == reference
    assert reference["counts"]["lines_read"] > 0
    if partitioned and workers == 1:  # (worker processes append to their own list)
        partitioned_files = [p for p in spilled if re.search(r"\.p\d{5}\.arrow$", p)]
        assert len({p.rsplit(".p", 1)[1] for p in partitioned_files}) > 3  # partitions written
        assert len([p for p in partitioned_files if "records" in p]) > 3  # batches written
    if name == "damaged":
        assert reference["counts"]["dead_letter_lines"] >= 2
        assert reference["counts"]["dead_letter.read_member_truncated"] == 1


def test_auto_extracts_locally_only_without_a_runner_or_remote_paths() -> None:
    config = TwitterConfig(inputs=("a.zip",), out="out")
    assert tb.extract_engine(config, Runner()) == "local"
    assert tb.extract_engine(config, Runner(name="DataflowRunner")) == "beam"
    assert tb.extract_engine(config, Runner(options=("--direct_num_workers=2",))) == "beam"
    remote = TwitterConfig(inputs=("gs://bucket/a.zip",), out="out")
    assert tb.extract_engine(remote, Runner()) == "beam"
    assert tp.pair_engine(remote, Runner()) == "local"  # the pair stage reads only the extracts
    forced = TwitterConfig(inputs=("a.zip",), out="out", extract_engine="beam")
    assert tb.extract_engine(forced, Runner()) == "beam"
