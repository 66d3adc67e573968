"""FrameShards writes the shards the Beam sink's rules give, row by row, whatever the frames'
sizes, order and number of shards."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpusforge.local import shards as local_shards
from corpusforge.local.shards import FrameShards
from corpusforge.schemas import DEAD_LETTER, PAIR, arrow_schema
from corpusforge.sinks import shards as sink_shards
from corpusforge.sinks.shards import (
    parquet_bytes,
    placement,
    shard_count,
    shard_name,
    shard_of,
    table_bytes,
)

SORT = ["anchor_id", "positive_id", "dataset"]


def _rows(n: int) -> list[dict[str, object]]:
    rng = random.Random(3)
    return [
        {
            "anchor": f"anchor text {rng.randrange(10**6)} é 猫",
            "positive": f"positive text {i}",
            "anchor_id": rng.randrange(10**12),
            "positive_id": i,
            "root_id": rng.randrange(10**12),
            "dataset": rng.choice(["qt", "rp"]),
            "lang": "en",
        }
        for i in range(n)
    ]


def _key(row: dict[str, object]) -> tuple[object, ...]:
    return tuple(row[c] for c in SORT)


def _expected(rows: list[dict[str, object]], rows_per_shard: int) -> dict[str, tuple[int, str]]:
    """The Beam sink's rules, row by row: shard by hash of the key, sort by the key."""
    n = shard_count(len(rows), rows_per_shard)
    shards: list[list[dict[str, object]]] = [[] for _ in range(n)]
    for row in rows:
        shards[shard_of(_key(row), n)].append(row)
    out = {}
    for i, shard in enumerate(shards):
        if shard:
            data = table_bytes(sorted(shard, key=_key), arrow_schema(PAIR))
            out[shard_name(i, n)] = (len(shard), hashlib.sha256(data).hexdigest())
    return out


def _frame(rows: list[dict[str, object]], *, placed: bool) -> pl.DataFrame:
    frame = pl.from_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(PAIR)))
    assert isinstance(frame, pl.DataFrame)
    if placed:
        frame = frame.with_columns(
            pl.Series("_place", [placement(_key(r)) for r in rows], dtype=pl.UInt64)
        )
    return frame


@pytest.mark.parametrize("frame_rows", [1, 7, 300])
@pytest.mark.parametrize(
    ("placed", "declared", "threads"),
    [(False, False, 1), (True, False, 1), (True, True, 1), (False, False, 2), (True, True, 2)],
)
def test_frames_give_the_sinks_shards(
    tmp_path: Path, frame_rows: int, placed: bool, declared: bool, threads: int
) -> None:
    """With each destination's rows declared first, they go straight to their shards' files;
    with two threads, two shards are written at once: the same files, in the same order."""
    rows = _rows(300)
    spill = tmp_path / "spill"
    spill.mkdir()
    place = "_place" if placed else None
    writer = FrameShards(PAIR, SORT, 40, str(spill), placement=place, threads=threads)
    if declared:
        writer.declare(str(tmp_path / "out" / "all"), len(rows))
        for dataset in ("qt", "rp"):
            n = sum(r["dataset"] == dataset for r in rows)
            writer.declare(str(tmp_path / "out" / dataset), n)
    for at in range(0, len(rows), frame_rows):
        frame = _frame(rows[at : at + frame_rows], placed=placed)
        writer.add(str(tmp_path / "out" / "all"), frame)
        for (dataset,), part in frame.partition_by("dataset", as_dict=True).items():
            writer.add(str(tmp_path / "out" / str(dataset)), part)
    files = writer.close()
    assert list(spill.iterdir()) == []  # every spill file was consumed
    names = [Path(f["path"]).relative_to(tmp_path / "out").as_posix() for f in files]
    assert names == sorted(names)  # destination by destination, shard by shard
    got: dict[str, dict[str, tuple[int, str]]] = {}
    for f in files:
        path = Path(f["path"]).relative_to(tmp_path / "out")
        got.setdefault(path.parent.name, {})[path.name] = (f["rows"], f["sha256"])
        assert hashlib.sha256(Path(f["path"]).read_bytes()).hexdigest() == f["sha256"]
    assert got["all"] == _expected(rows, 40)
    assert len(got["all"]) == 8  # ceil(300 / 40)
    for dataset in ("qt", "rp"):
        assert got[dataset] == _expected([r for r in rows if r["dataset"] == dataset], 40)


def test_a_declared_destination_that_gets_other_rows_fails_close(tmp_path: Path) -> None:
    writer = FrameShards(PAIR, SORT, 40, str(tmp_path / "spill"), placement="_place")
    writer.declare(str(tmp_path / "out"), 301)
    writer.add(str(tmp_path / "out"), _frame(_rows(300), placed=True))
    with pytest.raises(RuntimeError, match="300 rows added, 301 declared"):
        writer.close()


def test_arrival_order_does_not_change_the_files(tmp_path: Path) -> None:
    rows = _rows(120)
    written = []
    for name, ordered in (("a", rows), ("b", rows[::-1])):
        (tmp_path / name).mkdir()
        writer = FrameShards(PAIR, SORT, 40, str(tmp_path / name))
        for at in range(0, len(ordered), 11):
            writer.add(str(tmp_path / "out" / name), _frame(ordered[at : at + 11], placed=False))
        written.append([(Path(f["path"]).name, f["sha256"]) for f in writer.close()])
    assert written[0] == written[1]


def test_files_come_back_in_order_and_a_failed_write_fails_close(tmp_path: Path) -> None:
    """The list goes destination by destination, shard by shard, and a write that fails
    raises from ``close``."""
    rows = _rows(300)
    writer = FrameShards(PAIR, SORT, 40, str(tmp_path / "spill"))
    for dest in ("b", "a"):
        writer.add(str(tmp_path / "out" / dest), _frame(rows, placed=False))
    names = [Path(f["path"]).relative_to(tmp_path / "out").as_posix() for f in writer.close()]
    assert names == [f"{d}/{shard_name(i, 8)}" for d in ("a", "b") for i in range(8)]

    broken = FrameShards(PAIR, SORT, 40, str(tmp_path / "spill2"))
    (tmp_path / "not-a-folder").write_text("")
    broken.add(str(tmp_path / "not-a-folder" / "all"), _frame(rows, placed=False))
    with pytest.raises(OSError):
        broken.close()


def test_a_shard_of_several_row_groups_is_the_whole_table_written_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shard written a row group at a time is byte for byte the sorted shard written
    whole, as the Beam sink writes it, with a last row group shorter than the others."""
    monkeypatch.setattr(sink_shards, "ROW_GROUP_SIZE", 16)
    monkeypatch.setattr(local_shards, "ROW_GROUP_SIZE", 16)
    rows = _rows(300)
    writer = FrameShards(PAIR, SORT, 150, str(tmp_path / "spill"), placement="_place")
    for at in range(0, len(rows), 37):
        writer.add(str(tmp_path / "out"), _frame(rows[at : at + 37], placed=True))
    files = writer.close()
    got = {Path(f["path"]).name: (f["rows"], f["sha256"]) for f in files}
    assert got == _expected(rows, 150)
    for f in files:
        groups = pq.ParquetFile(f["path"]).metadata.num_row_groups
        assert groups == -(-f["rows"] // 16) > 1


def test_nulls_in_the_sort_key_come_first_as_polars_sorts_them(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {
            "stage": "read",
            "reason": "bad",
            "origin_archive": None if i % 3 == 0 else f"a{i % 5}",
            "origin_member": None,
            "origin_line": None if i % 4 == 0 else i % 7,
            "detail": f"d{i}",
            "excerpt": "x",
        }
        for i in range(60)
    ]
    sort = ["origin_archive", "origin_line", "detail"]
    table = pa.Table.from_pylist(rows, schema=arrow_schema(DEAD_LETTER))
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    writer = FrameShards(DEAD_LETTER, sort, 100, str(tmp_path / "spill"))
    writer.add(str(tmp_path / "out"), frame[30:])
    writer.add(str(tmp_path / "out"), frame[:30])
    (written,) = writer.close()
    expected = frame.sort(sort).to_arrow().cast(arrow_schema(DEAD_LETTER))
    assert expected.column("origin_archive")[0].as_py() is None
    assert written["sha256"] == hashlib.sha256(parquet_bytes(expected)).hexdigest()
