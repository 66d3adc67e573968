"""The extracts' tweet rows -> the conversation rows of the local pair stage, by partition.

:class:`TweetRows` reads the ``schemas/tweet.v1`` extracts in column batches: the ids some
selected tweet replies to or quotes, then a counting pass that decides, once, which rows are
in a selected language (Twitter's field, or fastText's prediction on the cleaned text) and in
a conversation, and counts every row read. With more than one partition of the root-id key
space, one more read writes each partition's rows to an Arrow file of its own
(:meth:`TweetRows.plan`); :meth:`TweetRows.rows` then gives a partition's rows as dicts
(the time as int milliseconds), each with whether its tweet is counted there.
:func:`deleted_ids` reads the delete extracts. The pair stage itself is
:mod:`corpusforge.local.pairs`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc
import pyarrow.parquet as pq

from corpusforge.local.spill import partition_of
from corpusforge.sources.twitter import idsets
from corpusforge.text.clean import CleanProfile, clean_text

LINK_COLUMNS = ["id", "lang", "reply_to_id", "quote_of_id"]
BATCH_ROWS = 65_536
COUNTED = "_counted"
"""With several partitions, the column of a partition file that says whether its tweet's node
counts (``tweets_*``, ``decontaminated.*``) are added in this partition, the one of the
tweet's partitions that counts it (:meth:`TweetRows.plan`); :meth:`TweetRows.rows` gives it
beside each row."""
MAX_PARTITIONS = 64  # one bit each in a uint64 mask


def _ids(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """An int64 column as NumPy, nulls as ``-1`` (no tweet id is negative)."""
    return np.asarray(pc.fill_null(column, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


@dataclass(frozen=True)
class _Decision:
    """What the counting pass decided for one batch of rows: which rows are kept (packed
    bits) and, with fastText, the language predicted for each kept row (an index into the
    selected languages)."""

    rows: int
    keep: np.ndarray
    langs: np.ndarray | None


class TweetRows:
    """The selected-language conversation rows of the extracts, read in column batches.

    The language (Twitter's field, or fastText's prediction on the cleaned text) and the
    conversation test (replies, quotes, or is replied to or quoted) are decided once, in a
    counting pass, and kept (one bit a row, one byte a kept row's predicted language); later
    passes read only the rows of one partition and decide nothing again.
    """

    def __init__(
        self,
        files: Sequence[str],
        langs: Sequence[str],
        lid_model: str | None,
        profile: CleanProfile,
    ) -> None:
        self._files = list(files)
        self._langs = pa.array(sorted(langs), pa.string())
        self._lid = None
        if lid_model is not None:
            from corpusforge.text.langid import LanguageIdentifier

            self._lid = LanguageIdentifier.load(lid_model or None)
        self._profile = profile
        self.parents = self._parent_ids()
        self._decisions: list[_Decision] = []
        self._partitions = 1  # until plan(): every kept row in one partition, read in place
        self._spill = ""

    def _batches(self, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
        for path in self._files:
            yield from pq.ParquetFile(path).iter_batches(
                batch_size=BATCH_ROWS, columns=columns, use_threads=False
            )

    def _parent_ids(self) -> np.ndarray:
        """Ids some selected tweet replies to or quotes (every tweet's, with fastText)."""
        parts = []
        for batch in self._batches(LINK_COLUMNS):
            if self._lid is None:
                batch = batch.filter(pc.fill_null(pc.is_in(batch["lang"], self._langs), False))
            for column in ("reply_to_id", "quote_of_id"):
                values = _ids(batch[column])
                parts.append(values[values >= 0])
        return idsets.union(parts)

    def _decide(self, batch: pa.RecordBatch, counts: Counter[str]) -> _Decision:
        """Which of the batch's rows are in a selected language and in a conversation."""
        langs = batch["lang"]
        if self._lid is not None:
            texts = batch["text"].to_pylist()
            langs = pa.array(
                [self._lid.predict(clean_text(t, self._profile))[0] for t in texts], pa.string()
            )
        in_lang = pc.fill_null(pc.is_in(langs, self._langs), False).to_numpy(zero_copy_only=False)
        linked = (_ids(batch["reply_to_id"]) >= 0) | (_ids(batch["quote_of_id"]) >= 0)
        keep = in_lang & (linked | idsets.member_of(_ids(batch["id"]), self.parents))
        _add(counts, "records_in", batch.num_rows)
        _add(counts, "records_lang_not_selected", int(batch.num_rows - in_lang.sum()))
        _add(counts, "records_in_conversations", int(keep.sum()))
        _add(counts, "records_outside_conversations", int(in_lang.sum() - keep.sum()))
        codes = None
        if self._lid is not None:
            kept_langs = pc.index_in(langs.filter(pa.array(keep)), self._langs)
            codes = kept_langs.to_numpy().astype(np.min_scalar_type(len(self._langs)))
        return _Decision(batch.num_rows, np.packbits(keep), codes)

    def count_and_ids(self, counts: Counter[str]) -> np.ndarray:
        """Count every row read (the accounting of the record filter); the kept ids, sorted.

        Keeps each kept row's id and links (24 bytes a row) for :meth:`plan`.
        """
        columns = LINK_COLUMNS + (["text"] if self._lid is not None else [])
        links: list[list[np.ndarray]] = [[], [], []]
        for batch in self._batches(columns):
            decision = self._decide(batch, counts)
            self._decisions.append(decision)
            kept = self._kept(batch, decision)
            for i, column in enumerate(("id", "reply_to_id", "quote_of_id")):
                links[i].append(_ids(kept[column]))
        self._links = [np.concatenate(parts) if parts else np.empty(0, np.int64) for parts in links]
        return np.unique(self._links[0])

    def _kept(self, batch: pa.RecordBatch, decision: _Decision) -> pa.RecordBatch:
        """The batch's kept rows, with the predicted language when fastText decided it."""
        if batch.num_rows != decision.rows:
            raise RuntimeError(
                f"a batch of {batch.num_rows} rows where the counting pass read {decision.rows}:"
                " the extracts changed during the pair stage"
            )
        kept = batch.filter(pa.array(np.unpackbits(decision.keep, count=decision.rows) == 1))
        if decision.langs is None:
            return kept
        langs = self._langs.take(pa.array(decision.langs))
        return kept.set_column(kept.schema.get_field_index("lang"), "lang", langs)

    @property
    def kept_rows(self) -> int:
        return len(self._links[0])

    def plan(self, partitions: int, spill: str) -> None:
        """Decide the partitions each kept row belongs to and, with more than one, write every
        partition's kept rows to its own Arrow file under ``spill``.

        A record belongs to the partition of each id it links to (it is a quote or a reply
        there) and, if some tweet links to it, to its own id's (it is a root there), so each
        partition later reads every record of a tweet it needs, even where the records of
        one tweet disagree about its links. A tweet is counted (:data:`COUNTED`) in the first
        of its partitions alone: a reply whose root is elsewhere is cleaned there only, not
        once more where its own id falls. The extracts are read once more here, whatever the
        number of partitions; each partition then reads only its own file (its rows in the
        extracts' order, as one read of the extracts would give them).
        """
        ids, reply, quote = self._links
        del self._links
        self._partitions = partitions
        self._spill = spill
        if partitions == 1 or len(ids) == 0:
            return
        roots = np.where(idsets.member_of(ids, self.parents), ids, -1)
        mask = np.zeros(len(ids), dtype=np.uint64)
        for column in (roots, reply, quote):
            bits = np.left_shift(np.uint64(1), partition_of(column, partitions).astype(np.uint64))
            mask |= np.where(column >= 0, bits, np.uint64(0))
        order = np.argsort(ids, kind="stable")
        ids, mask = ids[order], mask[order]
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        self._spread(ids[starts], np.bitwise_or.reduceat(mask, starts))

    def _spread(self, ids: np.ndarray, masks: np.ndarray) -> None:
        """Each kept row -> the file of every partition in its id's mask, marked
        :data:`COUNTED` in the first."""
        first = _lowest_bit(masks)
        writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
        try:
            for batch, decision in zip(self._batches(), self._decisions, strict=True):
                kept = self._kept(batch, decision)
                i, found = idsets.find(_ids(kept["id"]), ids)
                row_masks = np.where(found, masks[i], np.uint64(0))
                row_first = np.where(found, first[i], -1)
                for p in range(self._partitions):
                    mine = (row_masks >> np.uint64(p)) & np.uint64(1) == 1
                    if not mine.any():
                        continue
                    rows = kept.filter(pa.array(mine))
                    rows = rows.append_column(COUNTED, pa.array(row_first[mine] == p))
                    if p not in writers:
                        writers[p] = pa.ipc.new_file(self._partition_file(p), rows.schema)
                    writers[p].write_batch(rows)
        finally:
            for writer in writers.values():
                writer.close()
        self._decisions = []

    def _partition_file(self, partition: int) -> str:
        return os.path.join(self._spill, f"rows-{partition:02d}.arrow")

    def rows(self, partition: int) -> Iterator[tuple[dict[str, Any], bool]]:
        """The kept rows of every tweet that is, replies to or quotes a root of ``partition``,
        each with whether its tweet is counted in this partition (with more than one
        partition, read once: the partition's file goes once read)."""
        if self._partitions == 1:
            for batch, decision in zip(self._batches(), self._decisions, strict=True):
                for row in _dicts(self._kept(batch, decision)):
                    yield row, True
            return
        path = self._partition_file(partition)
        if not os.path.exists(path):
            return
        with pa.OSFile(path) as source:  # read, not mapped: memory is what is held
            reader = pa.ipc.open_file(source)
            for b in range(reader.num_record_batches):
                batch = reader.get_batch(b)
                counted = batch.column(COUNTED).to_pylist()
                # the flag stays out of the dicts: an eleventh key doubles a row dict's size
                rows = _dicts(batch.drop_columns([COUNTED]))
                yield from zip(rows, counted, strict=True)
        os.remove(path)


def _lowest_bit(masks: np.ndarray) -> np.ndarray:
    """The position of each (non-zero) uint64 mask's lowest set bit."""
    low = masks & (~masks + np.uint64(1))  # that bit alone: a power of two, exact as a float
    return np.log2(low.astype(np.float64)).astype(np.int64)


def _dicts(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    """The batch's rows as dicts, ``created_at`` as int milliseconds: the pair stage never
    reads the time, and a timezone-aware ``datetime`` a row cost more than all the row's other
    values together (116k rows: 0.65 s against 0.25 s)."""
    at = batch.schema.get_field_index("created_at")
    if at >= 0:
        batch = batch.set_column(at, "created_at", batch.column(at).cast(pa.int64()))
    return batch.to_pylist()


def _add(counts: Counter[str], key: str, n: int) -> None:
    """Add ``n`` to ``key``; a zero creates no key (as no element would in Beam)."""
    if n:
        counts[key] += n


def deleted_ids(delete_files: Sequence[str], kept: np.ndarray) -> np.ndarray:
    parts = []
    for path in delete_files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=["id"]):
            ids = _ids(batch["id"])
            parts.append(ids[idsets.member_of(ids, kept)])
    return idsets.union(parts)
