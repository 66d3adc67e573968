"""The streaming shuffle: every pair once, in an order set by seed and keys alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpusforge.keys import seeded_hash
from corpusforge.train.data import PairStream
from tests.train import pair_row, write_pairs

REPO = Path(__file__).resolve().parents[2]


def rows(n: int) -> list[dict[str, object]]:
    return [pair_row(f"anchor {i}", f"positive {i}", 10 * i, 10 * i + 1) for i in range(n)]


def sharded(root: Path, data: list[dict[str, object]], shards: int) -> Path:
    for s in range(shards):
        write_pairs(root / f"part-{s:05d}.parquet", data[s::shards])
    return root


def test_order_is_the_seeded_hash_order(tmp_path: Path) -> None:
    data = rows(23)
    stream = PairStream(sharded(tmp_path, data, 3), seed=7)
    expected = sorted(
        data,
        key=lambda r: seeded_hash(7, "order", 0, r["dataset"], r["anchor_id"], r["positive_id"]),
    )
    assert list(stream.pairs(0)) == [(r["anchor"], r["positive"]) for r in expected]


def test_order_ignores_sharding_row_order_and_bucket_size(tmp_path: Path) -> None:
    data = rows(40)
    three = PairStream(sharded(tmp_path / "a", data, 3), seed=1, bucket_rows=1000)
    one_reversed = PairStream(sharded(tmp_path / "b", data[::-1], 1), seed=1, bucket_rows=7)
    assert list(three.pairs(0)) == list(one_reversed.pairs(0))
    assert sorted(three.pairs(0)) == sorted((r["anchor"], r["positive"]) for r in data)


def test_epochs_and_seeds_reorder(tmp_path: Path) -> None:
    folder = sharded(tmp_path, rows(30), 2)
    first = list(PairStream(folder, seed=0).pairs(0))
    assert list(PairStream(folder, seed=0).pairs(1)) != first
    assert list(PairStream(folder, seed=1).pairs(0)) != first
    assert list(PairStream(folder, seed=0).pairs(0)) == first


def test_batches_keep_a_short_last_batch_of_two_or_more(tmp_path: Path) -> None:
    stream = PairStream(sharded(tmp_path / "a", rows(23), 2))
    assert [len(b) for b in stream.batches(5)] == [5, 5, 5, 5, 3]
    assert stream.batches_per_epoch(5) == 5
    lonely = PairStream(sharded(tmp_path / "b", rows(21), 2))
    assert [len(b) for b in lonely.batches(5)] == [5, 5, 5, 5]
    assert lonely.batches_per_epoch(5) == 4
    with pytest.raises(ValueError, match="batch_size"):
        next(lonely.batches(1))


def test_sample_texts_is_seeded_and_layout_free(tmp_path: Path) -> None:
    data = rows(400)
    a = PairStream(sharded(tmp_path / "a", data, 3), seed=3)
    b = PairStream(sharded(tmp_path / "b", data[::-1], 1), seed=3)
    sample = sorted(a.sample_texts(50))
    assert sample == sorted(b.sample_texts(50))
    assert 40 < len(sample) < 180  # about 2 texts x 50 pairs
    assert len(list(a.sample_texts(1000))) == 800  # everything when the cap exceeds the data


def test_missing_data_is_reported(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no Parquet pair shards"):
        PairStream(tmp_path)


def test_sub_folders_are_not_read(tmp_path: Path) -> None:
    # RELEASE/pairs holds rp/ and all/: reading it recursively would count pairs twice.
    sharded(tmp_path / "pairs" / "rp", rows(5), 1)
    with pytest.raises(FileNotFoundError, match="pairs/all"):
        PairStream(tmp_path / "pairs")


def test_a_bitext_dataset_folder_reads_every_language_pair(tmp_path: Path) -> None:
    # RELEASE/pairs/<dataset>/<l1>-<l2>/: the dataset folder is every language at once
    sharded(tmp_path / "pairs" / "opus" / "en-de", rows(5), 2)
    sharded(tmp_path / "pairs" / "opus" / "en-fr", rows(3), 1)
    sharded(tmp_path / "pairs" / "opus" / "notes", rows(4), 1)  # not a language pair
    assert PairStream(tmp_path / "pairs" / "opus").num_rows == 8


def test_torch_free_modules_do_not_import_torch() -> None:
    code = (
        "import sys\n"
        "import corpusforge.train, corpusforge.train.data, corpusforge.train.bitext_eval\n"
        "import corpusforge.commands.train\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    env = {"PYTHONPATH": f"{REPO / 'src'}:{REPO}"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
