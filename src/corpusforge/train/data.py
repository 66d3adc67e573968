"""Stream a release's training pairs, in a seeded shuffle, as batches of (anchor, positive) texts.

Input: the Parquet shards with the ``pair.v1`` schema directly in one folder, e.g.
``RELEASE/pairs/all/*.parquet`` (not searched recursively: ``RELEASE/pairs`` itself would count
every pair twice, once in its dataset's folder and once in ``all``); only the columns
``anchor``, ``positive`` and the stable key ``(dataset, anchor_id, positive_id)`` are read.

The order of an epoch is the order of ``seeded_hash(seed, "order", epoch, dataset, anchor_id,
positive_id)``: it depends on the seed and the pairs' keys only, never on file names, shard
count, row order or thread timing. The shuffle is an external bucket sort, so memory holds one
bucket of about ``bucket_rows`` pairs, never the release: one pass over the shards hashes each
key and spills (anchor, positive, hash) rows to Arrow IPC files in a temporary folder, one file
per range of hash values; each bucket is then read back alone, sorted by hash, and handed out.
Buckets cover increasing hash ranges, so their concatenation is the global hash order.

This module needs pyarrow and numpy only: no torch.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.ipc as ipc

from corpusforge.keys import seeded_hash, unit_interval
from corpusforge.schemas import PAIR, arrow_schema

KEY_COLUMNS = ("dataset", "anchor_id", "positive_id")
_LANGUAGE_PAIR = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")  # a bitext release's <l1>-<l2> folder
TEXT_COLUMNS = ("anchor", "positive")
_SPILL_SCHEMA = pa.schema(
    [("anchor", pa.string()), ("positive", pa.string()), ("order", pa.uint64())]
)


class NoPairs(ValueError):
    """The pair shards hold no pair: nothing to train on (a release whose inputs yielded none)."""


@dataclass(frozen=True)
class PairBatch:
    """A batch of pairs: ``anchors[i]`` and ``positives[i]`` are one pair."""

    anchors: list[str]
    positives: list[str]

    def __post_init__(self) -> None:
        if len(self.anchors) != len(self.positives):
            raise ValueError(
                f"{len(self.anchors)} anchors but {len(self.positives)} positives in a batch"
            )

    def __len__(self) -> int:
        return len(self.anchors)


def open_pairs(data: Path) -> ds.Dataset:
    """The pair shards directly in ``data`` as one pyarrow dataset.

    A bitext dataset folder (``RELEASE/pairs/<dataset>``, which holds no shard itself) reads
    the shards of its language-pair sub-folders (``<l1>-<l2>/``): every language at once.

    Args:
        data: a folder of ``pair.v1`` Parquet shards, e.g. ``RELEASE/pairs/all``, or a bitext
            dataset folder; no other sub-folder is read.

    Returns:
        A dataset read with the explicit ``pair.v1`` schema.

    Raises:
        FileNotFoundError: when ``data`` holds no ``*.parquet`` file.
    """
    files = sorted(str(p) for p in Path(data).glob("*.parquet") if p.is_file())
    if not files:
        files = sorted(
            str(p)
            for p in Path(data).glob("*/*.parquet")
            if p.is_file() and _LANGUAGE_PAIR.fullmatch(p.parent.name)
        )
    if not files:
        raise FileNotFoundError(
            f"no Parquet pair shards in {data} (give the folder of one dataset, e.g. "
            "RELEASE/pairs/all)"
        )
    return ds.dataset(files, format="parquet", schema=arrow_schema(PAIR))


def pair_order(
    seed: int, epoch: int, datasets: list[str], anchor_ids: list[int], positive_ids: list[int]
) -> np.ndarray:
    """The shuffle key of each pair: ``seeded_hash(seed, "order", epoch, dataset, ids...)``.

    Args:
        seed: the training seed.
        epoch: the epoch number (each epoch has its own order).
        datasets: the ``dataset`` column (pairs of two datasets may share tweet ids).
        anchor_ids: the ``anchor_id`` column.
        positive_ids: the ``positive_id`` column.

    Returns:
        A ``uint64`` array, one key per pair.
    """
    keys = zip(datasets, anchor_ids, positive_ids, strict=True)
    return np.fromiter(
        (seeded_hash(seed, "order", epoch, d, a, p) for d, a, p in keys),
        dtype=np.uint64,
        count=len(datasets),
    )


def bucket_of(order: np.ndarray, n_buckets: int) -> np.ndarray:
    """Map 64-bit keys to ``[0, n_buckets)`` monotonically: bucket ``b`` holds a hash range."""
    # (order >> 32) * n_buckets < 2**64 for any n_buckets < 2**32: no overflow.
    return ((order >> np.uint64(32)) * np.uint64(n_buckets)) >> np.uint64(32)


class PairStream:
    """The pairs of a release, one seeded shuffle per epoch, streamed bucket by bucket.

    Args:
        data: a folder of ``pair.v1`` Parquet shards, e.g. ``RELEASE/pairs/all``.
        seed: the seed of every order and sample drawn from it.
        bucket_rows: about how many pairs one shuffle bucket holds in memory.
        tmp_dir: where the buckets spill (a temporary folder inside it); the system's default
            temporary folder when ``None``.
        read_rows: rows per record batch read from Parquet.
    """

    def __init__(
        self,
        data: Path,
        *,
        seed: int = 0,
        bucket_rows: int = 200_000,
        tmp_dir: Path | None = None,
        read_rows: int = 65_536,
    ) -> None:
        if bucket_rows < 1:
            raise ValueError(f"bucket_rows must be >= 1, got {bucket_rows}")
        self.data = Path(data)
        self.seed = seed
        self.bucket_rows = bucket_rows
        self.tmp_dir = tmp_dir
        self.read_rows = read_rows
        self.dataset = open_pairs(self.data)
        self.num_rows: int = self.dataset.count_rows()

    def _record_batches(self, columns: tuple[str, ...]) -> Iterator[pa.RecordBatch]:
        yield from self.dataset.to_batches(columns=list(columns), batch_size=self.read_rows)

    def pairs(self, epoch: int = 0) -> Iterator[tuple[str, str]]:
        """Every pair once, as ``(anchor, positive)``, in the seeded order of ``epoch``."""
        n_buckets = max(1, math.ceil(self.num_rows / self.bucket_rows))
        with tempfile.TemporaryDirectory(prefix="corpusforge-shuffle-", dir=self.tmp_dir) as tmp:
            for path in self._spill(epoch, n_buckets, Path(tmp)):
                with pa.memory_map(str(path)) as source:
                    bucket = ipc.open_file(source).read_all().sort_by("order")
                anchors = bucket.column("anchor").to_pylist()
                positives = bucket.column("positive").to_pylist()
                del bucket
                yield from zip(anchors, positives, strict=True)

    def _spill(self, epoch: int, n_buckets: int, tmp: Path) -> list[Path]:
        """Write each pair to the bucket file of its hash range; return the files in order."""
        writers: dict[int, ipc.RecordBatchFileWriter] = {}
        try:
            for batch in self._record_batches(TEXT_COLUMNS + KEY_COLUMNS):
                order = pair_order(
                    self.seed,
                    epoch,
                    batch.column("dataset").to_pylist(),
                    batch.column("anchor_id").to_pylist(),
                    batch.column("positive_id").to_pylist(),
                )
                buckets = bucket_of(order, n_buckets)
                by_bucket = np.argsort(buckets, kind="stable")
                table = pa.table(
                    [batch.column("anchor"), batch.column("positive"), pa.array(order)],
                    schema=_SPILL_SCHEMA,
                ).take(pa.array(by_bucket))
                ids, counts = np.unique(buckets[by_bucket], return_counts=True)
                start = 0
                for b, count in zip(ids.tolist(), counts.tolist(), strict=True):
                    if b not in writers:
                        writers[b] = ipc.new_file(str(tmp / f"bucket-{b:06d}.arrow"), _SPILL_SCHEMA)
                    writers[b].write_table(table.slice(start, count))
                    start += count
        finally:
            for writer in writers.values():
                writer.close()
        return [tmp / f"bucket-{b:06d}.arrow" for b in sorted(writers)]

    def batches(self, batch_size: int, epoch: int = 0) -> Iterator[PairBatch]:
        """``pairs(epoch)`` cut into batches of ``batch_size``.

        The last, short batch is kept when it has at least two pairs (a pair needs another
        pair's positive as its negative) and dropped otherwise.
        """
        if batch_size < 2:
            raise ValueError(f"batch_size must be >= 2 (in-batch negatives), got {batch_size}")
        anchors: list[str] = []
        positives: list[str] = []
        for anchor, positive in self.pairs(epoch):
            anchors.append(anchor)
            positives.append(positive)
            if len(anchors) == batch_size:
                yield PairBatch(anchors, positives)
                anchors, positives = [], []
        if len(anchors) >= 2:
            yield PairBatch(anchors, positives)

    def batches_per_epoch(self, batch_size: int) -> int:
        """How many batches ``batches(batch_size)`` yields."""
        full, rest = divmod(self.num_rows, batch_size)
        return full + (1 if rest >= 2 else 0)

    def sample_texts(self, max_pairs: int) -> Iterator[str]:
        """Anchors and positives of about ``max_pairs`` pairs, sampled by seeded hash of key.

        A pair is kept when ``unit_interval(seed, "sample", dataset, anchor_id, positive_id)``
        falls under ``max_pairs / num_rows``: one streaming pass, no shuffle, and the same sample
        whatever the file layout. Used to train the fast encoder's tokenizer.
        """
        rate = 1.0 if self.num_rows <= max_pairs else max_pairs / self.num_rows
        for batch in self._record_batches(TEXT_COLUMNS + KEY_COLUMNS):
            rows = zip(
                batch.column("anchor").to_pylist(),
                batch.column("positive").to_pylist(),
                batch.column("dataset").to_pylist(),
                batch.column("anchor_id").to_pylist(),
                batch.column("positive_id").to_pylist(),
                strict=True,
            )
            for anchor, positive, dataset, anchor_id, positive_id in rows:
                if (
                    rate >= 1.0
                    or unit_interval(self.seed, "sample", dataset, anchor_id, positive_id) < rate
                ):
                    yield anchor
                    yield positive
