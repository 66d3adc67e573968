"""The local bitext engine's spill and dedup: every copy of a dedup key in one partition, by
Arrow and NumPy alone; the first copy of each pair kept; no pandas import in the build's
processes; the Arrow files every spill writes."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from corpusforge.local.bitext_dedup import ORDER, _first_copies
from corpusforge.local.spill import (
    TEXT_PREFIX_BYTES,
    ArrowFiles,
    by_partition,
    partition_of,
    read_arrow,
    text_partitions,
)
from corpusforge.pairing.filters import FilterReason


def _one(text: str, partitions: int) -> int:
    """:func:`text_partitions` of one text, row by row."""
    prefix = text.encode()[:TEXT_PREFIX_BYTES].ljust(TEXT_PREFIX_BYTES, b"\0")
    low, high = int.from_bytes(prefix[:8], "little"), int.from_bytes(prefix[8:], "little")
    key = (low * 0x9E3779B97F4A7C15 + high) % 2**64
    return int(partition_of(np.array([key], dtype=np.uint64), partitions)[0])


def _texts(n: int) -> list[str]:
    rng = random.Random(5)
    alphabet = "0123456789abcdef é猫"
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 7, 15, 16, 17, 32])))
        for _ in range(n)
    ]


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_text_partitions_are_each_text_s_alone(kind: pa.DataType) -> None:
    """Short, empty and non-ASCII texts, a sliced array and several chunks: each text's
    partition is the one it has alone."""
    texts = _texts(600)
    expected = [_one(t, 7) for t in texts]
    whole = pa.array(texts, type=kind)
    assert text_partitions(whole, 7).tolist() == expected
    assert text_partitions(whole.slice(13, 300), 7).tolist() == expected[13:313]
    chunked = pa.chunked_array([whole.slice(0, 250), whole.slice(250)])
    assert text_partitions(chunked, 7).tolist() == expected


def test_hex_keys_spread_over_every_partition_and_copies_stay_together() -> None:
    rng = random.Random(9)
    keys = [f"{rng.getrandbits(128):032x}" for _ in range(2_000)]
    parts = text_partitions(pa.array(keys + keys[::-1]), 16)
    assert parts[:2_000].tolist() == parts[2_000:][::-1].tolist()
    counts = np.bincount(parts, minlength=16)
    assert counts.min() > 2 * 4_000 / 16 / 3, counts  # no partition starved


def test_by_partition_keeps_each_partition_s_rows_in_order() -> None:
    table = pa.table({"row": list(range(10)), "p": [3, 0, 3, 1, 0, 3, 1, 1, 0, 3]})
    parts = np.array(table.column("p").to_pylist())
    split = {p: rows.column("row").to_pylist() for p, rows in by_partition(table, parts, 5)}
    assert split == {0: [1, 4, 8], 1: [3, 6, 7], 3: [0, 2, 5, 9]}


SCRIPT = """
import os, sys
from corpusforge.builds import bitext
from corpusforge.config.bitext import BitextConfig
from corpusforge.local import bitext_filter

assert "pandas" not in sys.modules, "imported before the build"
filter_work = bitext_filter._filter_work

def reporting(batch):
    done = filter_work(batch)  # its table made by pyarrow from Python values
    with open(os.path.join(sys.argv[2], f"worker-{os.getpid()}"), "w") as f:
        f.write(str("pandas" in sys.modules))
    return done

bitext_filter._filter_work = reporting  # the workers are forked: they run this one
config = BitextConfig(inputs=tuple(sys.argv[3:]), out=sys.argv[1], engine="local", workers=2)
bitext.build(config)
assert "pandas" not in sys.modules, "imported by the build"
"""


def test_pyarrow_never_imports_pandas_in_a_bitext_build(tmp_path: Path) -> None:
    """The filter workers' first Arrow table and the spill's first ``take`` would each import
    pandas (issue 38: 0.2-0.4 s of CPU in each process); none of them may."""
    pytest.importorskip("pandas")
    from tests.bitext.test_build_bitext import MOSES_DE, MOSES_EN

    de, en = tmp_path / "mini.de-en.de", tmp_path / "mini.de-en.en"
    de.write_text("\n".join(MOSES_DE) + "\n", encoding="utf-8")
    en.write_text("\n".join(MOSES_EN) + "\n", encoding="utf-8")
    reports = tmp_path / "reports"
    reports.mkdir()
    command = [sys.executable, "-c", SCRIPT, str(tmp_path / "out"), str(reports), str(de), str(en)]
    subprocess.run(command, check=True)
    assert [p.read_text() for p in reports.iterdir()] == ["False"]


def test_first_copies_are_the_smallest_origins_of_each_pair() -> None:
    """Only rows with copies are sorted: the kept and dropped rows are those of sorting the
    whole partition, with copies spread over groups, files, members, lines and parts."""
    rng = random.Random(11)
    rows = [
        {
            "_group": rng.choice(["de-en", "fr-en"]),
            "_dedup": f"{rng.randrange(40):032x}",
            "_dataset": rng.choice(["opus", "tatoeba"]),
            "_file": rng.choice(["a", "b", "ab"]),
            "_member": rng.choice(["", "m"]),
            "_line": rng.randrange(5),
            "_part": rng.randrange(2),
            "row": i,
        }
        for i in range(400)
    ]
    frame = pl.DataFrame(rows).unique(subset=ORDER, keep="first")  # one row an origin
    counts: Counter[tuple[str, ...]] = Counter()
    kept = _first_copies(frame, counts)
    whole = frame.sort(ORDER)
    first = pl.struct("_group", "_dedup").is_first_distinct()
    assert sorted(kept["row"]) == sorted(whole.filter(first)["row"])
    dropped = whole.filter(~first).group_by("_dataset", "_group").len().iter_rows()
    assert counts == Counter(
        {("drop", d, g, str(FilterReason.DEDUP_DUPLICATE)): n for d, g, n in dropped}
    )
    assert 0 < sum(counts.values()) < frame.height - 40


def test_arrow_files_open_a_file_per_key_at_its_first_table(tmp_path: Path) -> None:
    """Every spill's files: a key's tables appended in order, the keys listed once closed,
    a second close harmless, and a table after the close refused, never a new file over
    the old one."""
    files: ArrowFiles[int] = ArrowFiles(lambda k: str(tmp_path / f"f{k}.arrow"))
    files.write(2, pa.table({"x": [1, 2]}))
    files.write(0, pa.record_batch({"x": [3]}))
    files.write(2, pa.table({"x": [4]}))
    files.close()
    files.close()
    assert files.written() == [0, 2]
    assert read_arrow(str(tmp_path / "f2.arrow"))["x"].to_pylist() == [1, 2, 4]
    assert read_arrow(str(tmp_path / "f0.arrow"), ["x"])["x"].to_pylist() == [3]
    with pytest.raises(ValueError, match="written to once closed"):
        files.write(2, pa.table({"x": [5]}))
    assert read_arrow(str(tmp_path / "f2.arrow"))["x"].to_pylist() == [1, 2, 4]
    typed = ArrowFiles(lambda k: str(tmp_path / f"t{k}.arrow"), pa.schema([("x", pa.int32())]))
    typed.write("a", pa.table({"x": pa.array([1], pa.int32())}))
    typed.close()
    assert read_arrow(str(tmp_path / "ta.arrow")).schema.field("x").type == pa.int32()
