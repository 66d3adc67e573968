"""Pair and benchmark files of a release -> the row-level failures of ``validate``.

Streams every Parquet file as record batches (``pyarrow`` ``iter_batches``), benchmarks
first, and finds empty texts, misaligned benchmark lists, duplicate pairs, rows missing from
or extra in ``pairs/all``, and training pairs that leak a benchmark tweet by id or by text.
Memory grows only with a 64-bit hash per training pair and per benchmark tweet; duplicates
and text leaks found by hash are confirmed on the texts themselves, so a hash collision is
never reported. Used by :func:`corpusforge.inspect.validate.validate_release`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from corpusforge.inspect.checks import Check, Failures, ReleaseDir

_TEXT_HASH_SEED = 0
MIX = "pairs/all"
"""The folder that mixes every dataset (when the release has one)."""


def _blank(texts: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Row mask: null, empty or whitespace-only text."""
    empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(texts)), 0)
    mask = pc.fill_null(pc.or_kleene(pc.is_null(texts), empty), True)
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)


def _text_hashes(texts: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """64-bit hashes of texts (stable within a process: only compared within one run)."""
    return pl.Series(texts).hash(seed=_TEXT_HASH_SEED).to_numpy()


def _ints(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.fill_null(values, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _short(text: str | None, limit: int = 60) -> str:
    if text is None:
        return "None"
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _has(batch: pa.RecordBatch, name: str, kind: Callable[[pa.DataType], bool]) -> bool:
    index = batch.schema.get_field_index(name)
    return index >= 0 and kind(batch.schema.field(index).type)


def _is_text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _is_text_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_text(t.value_type)


def _is_int_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_integer(
        t.value_type
    )


@dataclass
class ContentScan:
    """Row-level checks over pair and benchmark files, benchmarks first."""

    release: ReleaseDir
    out: Failures
    batch_rows: int
    rows: int = 0
    _incomplete: bool = False
    _bench_ids: list[np.ndarray] = field(default_factory=list)
    _bench_text_hashes: list[np.ndarray] = field(default_factory=list)
    _bench_files: list[str] = field(default_factory=list)
    _ids: np.ndarray | None = None
    _texts: np.ndarray | None = None
    _pair_hashes: dict[str, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    _pair_files: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _text_hits: dict[int, list[tuple[str, str, str]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _heldout: list[np.ndarray] = field(default_factory=list)
    _heldout_keys: np.ndarray | None = None

    def _stream(self, rel: str, columns: list[str]) -> Iterator[tuple[int, pa.RecordBatch]]:
        """(offset of the batch's first row, batch); a read error is reported, not raised."""
        offset = 0
        try:
            for batch in self.release.batches(rel, columns, self.batch_rows):
                yield offset, batch
                offset += batch.num_rows
        except (OSError, pa.ArrowException) as exc:
            self._incomplete = True
            self.out.add(Check.FILE_UNREADABLE, rel, f"failed at row {offset:,}: {exc}")

    def _columns(self, rel: str, wanted: tuple[str, ...]) -> list[str]:
        return [c for c in wanted if c in self._schema(rel).names]

    def _schema(self, rel: str) -> pa.Schema:
        with self.release.fs.open_input_file(self.release.path(rel)) as f:
            schema: pa.Schema = pq.ParquetFile(f).schema_arrow
        return schema

    # -- benchmarks ---------------------------------------------------------------------

    def scan_benchmark(self, rel: str) -> None:
        wanted = ("query", "query_id", "candidates", "candidate_ids", "labels", "root_id")
        self._bench_files.append(rel)
        for offset, batch in self._stream(rel, self._columns(rel, wanted)):
            self.rows += batch.num_rows
            if _has(batch, "query", _is_text):
                query = batch.column("query")
                blank = _blank(query)
                bad = np.flatnonzero(blank)
                self.out.rows(
                    Check.EMPTY_TEXT,
                    rel,
                    len(bad),
                    [f"row {offset + i}: query {_short(query[i].as_py())}" for i in bad],
                )
                self._bench_text_hashes.append(_text_hashes(query)[~blank])
            if _has(batch, "candidates", _is_text_list):
                self._scan_candidates(rel, offset, batch)
            for name in ("query_id", "root_id"):
                if _has(batch, name, pa.types.is_integer):
                    self._bench_ids.append(_ints(batch.column(name)))
            if _has(batch, "candidate_ids", _is_int_list):
                self._bench_ids.append(_ints(pc.list_flatten(batch.column("candidate_ids"))))
            self._check_aligned(rel, offset, batch)

    def _scan_candidates(self, rel: str, offset: int, batch: pa.RecordBatch) -> None:
        candidates = batch.column("candidates")
        flat = pc.list_flatten(candidates)
        blank_flat = _blank(flat)
        parents = np.asarray(pc.list_parent_indices(candidates).to_numpy(), dtype=np.int64)
        lengths = pc.fill_null(pc.list_value_length(candidates), 0).to_numpy()
        bad_rows = set(parents[blank_flat].tolist()) | set(np.flatnonzero(lengths == 0).tolist())
        self.out.rows(
            Check.EMPTY_TEXT,
            rel,
            len(bad_rows),
            [f"row {offset + i}: an empty, blank or missing candidate" for i in sorted(bad_rows)],
        )
        self._bench_text_hashes.append(_text_hashes(flat)[~blank_flat])

    def _check_aligned(self, rel: str, offset: int, batch: pa.RecordBatch) -> None:
        names = [
            n
            for n in ("candidates", "candidate_ids", "labels")
            if _has(batch, n, lambda t: bool(pa.types.is_list(t) or pa.types.is_large_list(t)))
        ]
        if len(names) < 2:
            return
        lengths = [
            pc.fill_null(pc.list_value_length(batch.column(n)), -1).to_numpy() for n in names
        ]
        bad = np.flatnonzero(np.any([lengths[0] != other for other in lengths[1:]], axis=0))
        self.out.rows(
            Check.BENCHMARK_MISALIGNED,
            rel,
            len(bad),
            [
                f"row {offset + i}: lengths "
                + ", ".join(f"{n}={int(ln[i])}" for n, ln in zip(names, lengths, strict=True))
                for i in bad
            ],
        )

    # -- pairs --------------------------------------------------------------------------

    def scan_heldout(self, rel: str) -> None:
        """Keep the pair keys of a ``heldout/`` file (before the pair files are scanned), so
        that a held-out pair found among the training pairs is reported."""
        columns = self._columns(rel, ("dataset", "anchor", "positive"))
        for _, batch in self._stream(rel, columns):
            self._heldout.append(_pair_keys(batch))

    def scan_pairs(self, rel: str) -> None:
        if self._heldout and self._heldout_keys is None:
            self._heldout_keys = np.unique(np.concatenate(self._heldout))
        if self._ids is None:
            self._ids = np.unique(np.concatenate([np.empty(0, np.int64), *self._bench_ids]))
            self._texts = np.unique(
                np.concatenate([np.empty(0, np.uint64), *self._bench_text_hashes])
            )
        group = "/".join(rel.split("/")[:2])  # pairs/<dataset>
        wanted = ("anchor", "positive", "anchor_id", "positive_id", "dataset")
        schema = self._schema(rel)
        columns = [c for c in wanted if c in schema.names]
        if not all(s in columns and _is_text(schema.field(s).type) for s in ("anchor", "positive")):
            self._incomplete = True  # a schema mismatch, already reported
            return
        self._pair_files[group].append(rel)
        for offset, batch in self._stream(rel, columns):
            self.rows += batch.num_rows
            self._pair_batch(rel, group, offset, batch)

    def _pair_batch(self, rel: str, group: str, offset: int, batch: pa.RecordBatch) -> None:
        assert self._ids is not None and self._texts is not None
        for side in ("anchor", "positive"):
            texts = batch.column(side)
            blank = _blank(texts)
            bad = np.flatnonzero(blank)
            self.out.rows(
                Check.EMPTY_TEXT,
                rel,
                len(bad),
                [f"row {offset + i}: {side} {_short(texts[i].as_py())}" for i in bad],
            )
            if self._texts.size:
                hashes = _text_hashes(texts)
                for i in np.flatnonzero(np.isin(hashes, self._texts) & ~blank):
                    text = texts[i].as_py()
                    example = f"row {offset + i}: {side} {_short(text)}"
                    self._text_hits[int(hashes[i])].append((rel, text, example))
            id_column = f"{side}_id"
            if self._ids.size and _has(batch, id_column, pa.types.is_integer):
                ids = _ints(batch.column(id_column))
                bad = np.flatnonzero(np.isin(ids, self._ids))
                self.out.rows(
                    Check.BENCHMARK_LEAK_ID,
                    rel,
                    len(bad),
                    [f"row {offset + i}: {id_column}={ids[i]}" for i in bad],
                )
        keys = _pair_keys(batch)
        self._pair_hashes[group].append(keys)
        if self._heldout_keys is not None:
            self._confirm_heldout(rel, offset, batch, np.isin(keys, self._heldout_keys))

    def _confirm_heldout(
        self, rel: str, offset: int, batch: pa.RecordBatch, hits: np.ndarray
    ) -> None:
        """Report the rows of a pair file whose key is a held-out pair's (64-bit hashes of
        ``(dataset, anchor, positive)``: a collision is one in 2^64 per pair)."""
        bad = np.flatnonzero(hits)
        self.out.rows(
            Check.HELDOUT_LEAK,
            rel,
            len(bad),
            [f"row {offset + i}: anchor {_short(batch.column('anchor')[i].as_py())}" for i in bad],
        )

    # -- confirming what hashes found ---------------------------------------------------

    def finish(self, *, check_mix: bool) -> None:
        """Confirm duplicates and text leaks; compare ``pairs/all`` with the datasets.

        Args:
            check_mix: every pair file is present and as the manifest records it, so
                ``pairs/all`` can be compared with the union of the other datasets.
        """
        sorted_keys = {}
        for group, chunks in self._pair_hashes.items():
            hashes = np.sort(np.concatenate(chunks)) if chunks else np.empty(0, np.uint64)
            sorted_keys[group] = hashes
            repeated = np.unique(hashes[1:][hashes[1:] == hashes[:-1]])
            if repeated.size:
                self._confirm_duplicates(group, repeated)
        if self._text_hits:
            self._confirm_text_leaks()
        mix = sorted_keys.pop(MIX, None)
        if check_mix and not self._incomplete and mix is not None and sorted_keys:
            self._compare_mix(mix, np.sort(np.concatenate(list(sorted_keys.values()))))

    def _compare_mix(self, mix: np.ndarray, union: np.ndarray) -> None:
        """``pairs/all`` must hold the rows of the other datasets, each once (as multisets)."""
        if mix.shape == union.shape and np.array_equal(mix, union):
            return
        mix_values, mix_counts = np.unique(mix, return_counts=True)
        union_values, union_counts = np.unique(union, return_counts=True)
        values = np.union1d(mix_values, union_values)
        diff = np.zeros(len(values), dtype=np.int64)
        diff[np.searchsorted(values, mix_values)] += mix_counts
        diff[np.searchsorted(values, union_values)] -= union_counts
        extra, missing = int(diff[diff > 0].sum()), int(-diff[diff < 0].sum())
        self.out.add(
            Check.MIX_MISMATCH,
            f"{MIX}/",
            f"{extra:,} rows in {MIX}/ that no other dataset has, {missing:,} rows of the "
            f"datasets missing from {MIX}/ (by dataset, anchor and positive)",
        )

    def _confirm_duplicates(self, group: str, repeated: np.ndarray) -> None:
        seen: Counter[tuple[Any, ...]] = Counter()
        for rel in self._pair_files[group]:
            columns = self._columns(rel, ("dataset", "anchor", "positive"))
            for _, batch in self._stream(rel, columns):
                hits = np.flatnonzero(np.isin(_pair_keys(batch), repeated))
                if hits.size:
                    taken = batch.select(columns).take(pa.array(hits)).to_pylist()
                    seen.update(tuple(row[c] for c in columns) for row in taken)
        extra = {key: n - 1 for key, n in sorted(seen.items(), key=repr) if n > 1}
        self.out.rows(
            Check.DUPLICATE_PAIR,
            f"{group}/",
            sum(extra.values()),
            [
                f"{n + 1}x anchor {_short(key[-2])} positive {_short(key[-1])}"
                for key, n in extra.items()
            ],
        )

    def _confirm_text_leaks(self) -> None:
        wanted = np.fromiter(self._text_hits, dtype=np.uint64, count=len(self._text_hits))
        bench_texts: set[str] = set()
        for rel in self._bench_files:
            columns = self._columns(rel, ("query", "candidates"))
            for _, batch in self._stream(rel, columns):
                arrays = []
                if _has(batch, "query", _is_text):
                    arrays.append(batch.column("query"))
                if _has(batch, "candidates", _is_text_list):
                    arrays.append(pc.list_flatten(batch.column("candidates")))
                for arr in arrays:
                    hits = np.flatnonzero(np.isin(_text_hashes(arr), wanted))
                    bench_texts.update(arr.take(pa.array(hits)).to_pylist())
        confirmed: dict[str, list[str]] = defaultdict(list)
        for pair_hits in self._text_hits.values():
            for rel, text, example in pair_hits:
                if text in bench_texts:
                    confirmed[rel].append(example)
        for rel in sorted(confirmed):
            self.out.rows(Check.BENCHMARK_LEAK_TEXT, rel, len(confirmed[rel]), confirmed[rel])


def _pair_keys(batch: pa.RecordBatch) -> np.ndarray:
    """64-bit hash of ``(dataset, anchor, positive)`` per row (``dataset`` where present)."""
    columns = [c for c in ("dataset", "anchor", "positive") if c in batch.schema.names]
    frame = pl.DataFrame(pa.Table.from_batches([batch.select(columns)]))
    return frame.hash_rows(seed=0).to_numpy()
