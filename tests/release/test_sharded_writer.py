"""ShardedWriter writes the same files whether its rows stay in memory or go through disk."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from corpusforge.schemas import PAIR
from corpusforge.sinks.parquet import ShardedWriter


def _rows(n: int) -> list[dict[str, object]]:
    rng = random.Random(3)
    return [
        {
            "anchor": f"anchor text {rng.randrange(10**6)}",
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
    return row["anchor_id"], row["positive_id"], row["dataset"]


def _written(
    folder: Path, buffer_rows: int, rows: list[dict[str, object]]
) -> list[tuple[str, int, str]]:
    spill = folder / "spill"
    spill.mkdir(parents=True)
    writer = ShardedWriter(PAIR, _key, rows_per_shard=40, spill=str(spill), buffer_rows=buffer_rows)
    for row in rows:
        writer.add(str(folder / row["dataset"]), row)  # type: ignore[operator]
        writer.add(str(folder / "all"), row)
    files = writer.close()
    assert list(spill.iterdir()) == []  # every run and shard file was consumed
    return [(str(Path(f["path"]).relative_to(folder)), f["rows"], f["sha256"]) for f in files]


@pytest.mark.parametrize("buffer_rows", [1, 7, 100])
def test_spilled_rows_give_the_files_of_rows_kept_in_memory(
    tmp_path: Path, buffer_rows: int
) -> None:
    rows = _rows(300)
    in_memory = tmp_path / "memory"
    expected = []
    for dest in ("all", "qt", "rp"):
        writer = ShardedWriter(PAIR, _key, rows_per_shard=40)  # no spill folder: in memory
        for row in rows:
            if dest in ("all", row["dataset"]):
                writer.add(str(in_memory / dest), row)
        for f in writer.close():
            expected.append((str(Path(f["path"]).relative_to(in_memory)), f["rows"], f["sha256"]))
    got = _written(tmp_path / "spilled", buffer_rows, rows)
    assert sorted(got) == sorted(expected)
    assert sum(n for name, n, _ in got if name.startswith("all/")) == 300
    assert len({name for name, _, _ in got if name.startswith("all/")}) == 8  # ceil(300 / 40)


def test_arrival_order_does_not_change_the_files(tmp_path: Path) -> None:
    rows = _rows(120)
    forward = _written(tmp_path / "a", 11, rows)
    backward = _written(tmp_path / "b", 11, rows[::-1])
    assert forward == backward


def test_buffer_rows_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="buffer_rows"):
        ShardedWriter(PAIR, _key, spill=str(tmp_path), buffer_rows=0)
