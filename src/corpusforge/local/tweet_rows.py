"""The extracts' tweet rows -> the conversation rows of the local pair stage, by partition.

:class:`TweetRows` reads the ``schemas/tweet.v1`` extracts twice, in column batches, and
holds no array over all their rows. The first read (:meth:`TweetRows.count`) counts every row,
decides its language (Twitter's field, or fastText's prediction on the cleaned text) and
writes, by a hash of the id, each selected row's id and links to an id bucket, and each id
some row replies to or quotes to the bucket of that id; the delete extracts' ids go to the
buckets too. A bucket then holds everything needed to decide its rows alone: which are in a
conversation (they link, or some row links to them), and, once the number of pair partitions
is known (:meth:`TweetRows.plan`), the partitions each belongs to and whether its tweet is
deleted. Buckets are sized to the memory budget. The second read takes the kept rows with
those decisions, in the extracts' order, and writes each partition's rows to an Arrow file of
its own (with one partition, :meth:`TweetRows.rows` reads them in place); :meth:`TweetRows.rows`
gives a partition's rows as dicts (the time as int milliseconds), each with whether its tweet
is counted there and whether it is deleted. The pair stage itself is
:mod:`corpusforge.local.pairs`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc
import pyarrow.parquet as pq

from corpusforge.local.spill import (
    ArrowFiles,
    PartitionWriter,
    partition_of,
    read_arrow,
    read_tables,
    write_arrow,
)
from corpusforge.text.clean import CleanProfile, clean_text

LINK_COLUMNS = ["id", "lang", "reply_to_id", "quote_of_id"]
BATCH_ROWS = 65_536
BYTES_PER_LINK_ROW = 100
"""Peak memory per extract row of the id bucket being decided (its selected rows' numbers, ids
and links, its parent ids, polars' work on one bucket), as a bound: every row selected and linked
takes about this much; the synthetic archives took about 12 bytes a row (one bucket of 7.2M
rows against buckets of 1M, ``benchmarks/RESULTS.md``)."""
COUNTED = "_counted"
"""With several partitions, the column of a partition file that says whether its tweet's node
counts (``tweets_*``, ``decontaminated.*``) are added in this partition, the one of the
tweet's partitions that counts it (:meth:`TweetRows.plan`); :meth:`TweetRows.rows` gives it
beside each row."""
DELETED = "_deleted"
"""The column of a partition file that says whether a delete notice names the row's tweet."""
MAX_PARTITIONS = 64  # one bit each in a uint64 mask


def _ids(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """An int64 column as NumPy, nulls as ``-1`` (no tweet id is negative)."""
    return np.asarray(pc.fill_null(column, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


class TweetRows:
    """The selected-language conversation rows of the extracts, read in column batches.

    Args:
        files: the tweet extracts.
        langs: the selected languages.
        lid_model: fastText's model (``""``: the installed one), or ``None`` for Twitter's
            language field.
        profile: the cleaning fastText's input gets.
        spill: the folder the buckets and partition files are written to.
        bucket_rows: extract rows per id bucket (the memory budget over
            :data:`BYTES_PER_LINK_ROW`).
    """

    def __init__(
        self,
        files: Sequence[str],
        langs: Sequence[str],
        lid_model: str | None,
        profile: CleanProfile,
        spill: str,
        bucket_rows: int,
    ) -> None:
        self._files = list(files)
        self._langs = pa.array(sorted(langs), pa.string())
        self._lid = None
        if lid_model is not None:
            from corpusforge.text.langid import LanguageIdentifier

            self._lid = LanguageIdentifier.load(lid_model or None)
        self._profile = profile
        self._spill = spill
        rows = sum(pq.ParquetFile(path).metadata.num_rows for path in self._files)
        self._buckets = max(1, -(-rows // max(1, bucket_rows)))
        self._rows = 0  # read by the first pass
        self._partitions = 1  # until plan()
        self.kept_rows = 0
        """Conversation records: selected rows that reply, quote, or are replied to or quoted."""

    def _batches(self, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
        for path in self._files:
            yield from pq.ParquetFile(path).iter_batches(
                batch_size=BATCH_ROWS, columns=columns, use_threads=False
            )

    def count(self, delete_files: Sequence[str], counts: Counter[str]) -> None:
        """Read the extracts (and the delete extracts) once: count every row read (the
        accounting of the record filter) and decide which rows are conversation records."""
        selected = self._split(counts)
        self._split_deleted(delete_files)
        for bucket in range(self._buckets):
            self.kept_rows += self._keep(bucket)
        _add(counts, "records_in_conversations", self.kept_rows)
        _add(counts, "records_outside_conversations", selected - self.kept_rows)

    def _split(self, counts: Counter[str]) -> int:
        """Each selected row's number, id and links (and predicted language) -> its id's
        bucket; each id a selected row (any row, with fastText) replies to or quotes -> that
        id's bucket. Returns the selected rows."""
        links = PartitionWriter(self._spill, "links", 0, self._buckets, "id")
        parents = PartitionWriter(self._spill, "parents", 0, self._buckets, "id")
        columns = LINK_COLUMNS + (["text"] if self._lid is not None else [])
        selected = 0
        try:
            for batch in self._batches(columns):
                langs = batch["lang"]
                if self._lid is not None:
                    texts = batch["text"].to_pylist()
                    langs = pa.array(
                        [self._lid.predict(clean_text(t, self._profile))[0] for t in texts],
                        pa.string(),
                    )
                codes = pc.index_in(langs, self._langs)  # null: not a selected language
                in_lang = codes.is_valid().to_numpy(zero_copy_only=False)
                ids, reply, quote = (_ids(batch[c]) for c in ("id", "reply_to_id", "quote_of_id"))
                linking = in_lang if self._lid is None else slice(None)
                targets = np.concatenate([reply[linking], quote[linking]])
                parents.add(pa.table({"id": np.unique(targets[targets >= 0])}))
                rows = np.arange(self._rows, self._rows + batch.num_rows, dtype=np.int64)
                table = {
                    "row": rows[in_lang],
                    "id": ids[in_lang],
                    "reply_to_id": reply[in_lang],
                    "quote_of_id": quote[in_lang],
                }
                if self._lid is not None:
                    kept_codes = codes.filter(pa.array(in_lang)).to_numpy()
                    table["lang"] = kept_codes.astype(np.min_scalar_type(len(self._langs)))
                links.add(pa.table(table))
                n_selected = int(in_lang.sum())
                _add(counts, "records_in", batch.num_rows)
                _add(counts, "records_lang_not_selected", batch.num_rows - n_selected)
                self._rows += batch.num_rows
                selected += n_selected
        finally:
            links.close()
            parents.close()
        return selected

    def _split_deleted(self, delete_files: Sequence[str]) -> None:
        """The ids delete notices name -> their buckets."""
        deleted = PartitionWriter(self._spill, "deleted", 0, self._buckets, "id")
        try:
            for path in delete_files:
                for batch in pq.ParquetFile(path).iter_batches(
                    batch_size=BATCH_ROWS, columns=["id"], use_threads=False
                ):
                    ids = _ids(batch["id"])
                    deleted.add(pa.table({"id": np.unique(ids[ids >= 0])}))
        finally:
            deleted.close()

    def _keep(self, bucket: int) -> int:
        """The bucket's conversation records (rows that reply or quote, or that some row
        replies to or quotes: a root), written back with whether they are a root; how many."""
        links = read_tables(self._spill, "links", bucket)
        parents = _id_set(read_tables(self._spill, "parents", bucket))
        if not links:
            return 0
        kept = (
            pl.DataFrame(pa.concat_tables(links))
            .with_columns(root=pl.col("id").is_in(parents))
            .filter(pl.col("root") | (pl.col("reply_to_id") >= 0) | (pl.col("quote_of_id") >= 0))
        )
        if kept.is_empty():
            return 0
        write_arrow(self._bucket_file("kept", bucket), kept.to_arrow(), BATCH_ROWS)
        return kept.height

    def plan(self, partitions: int) -> None:
        """Decide the partitions each kept row belongs to and, with more than one, write every
        partition's kept rows to its own Arrow file under the spill folder.

        A record belongs to the partition of each id it links to (it is a quote or a reply
        there) and, if some tweet links to it, to its own id's (it is a root there), so each
        partition later reads every record of a tweet it needs, even where the records of
        one tweet disagree about its links. A tweet is counted (:data:`COUNTED`) in the first
        of its partitions alone: a reply whose root is elsewhere is cleaned there only, not
        once more where its own id falls. The extracts are read once more here, whatever the
        number of partitions; each partition then reads only its own file (its rows in the
        extracts' order, as one read of the extracts would give them).
        """
        self._partitions = partitions
        for bucket in range(self._buckets):
            self._choose(bucket)
        if partitions > 1 and self.kept_rows:
            self._spread()

    def _choose(self, bucket: int) -> None:
        """The bucket's kept rows -> their row number, partitions (a mask of the partitions of
        every record of their id), first partition and whether their tweet is deleted, in
        row order."""
        deleted = _id_set(read_tables(self._spill, "deleted", bucket))
        path = self._bucket_file("kept", bucket)
        if not os.path.exists(path):
            return
        kept = read_arrow(path)
        os.remove(path)
        ids = kept["id"].to_numpy()
        roots = np.where(kept["root"].to_numpy(), ids, -1)
        mask = np.zeros(len(ids), dtype=np.uint64)
        for column in (roots, kept["reply_to_id"].to_numpy(), kept["quote_of_id"].to_numpy()):
            part = partition_of(column, self._partitions).astype(np.uint64)
            mask |= np.where(column >= 0, np.left_shift(np.uint64(1), part), np.uint64(0))
        tweet_mask = pl.col("mask").bitwise_or().over("id")
        chosen = (
            pl.DataFrame(kept)
            .with_columns(mask=pl.Series(mask))
            .select(
                "row",
                tweet_mask,
                *(["lang"] if "lang" in kept.column_names else []),  # fastText's
                first=tweet_mask.bitwise_trailing_zeros().cast(pl.Int8),
                deleted=pl.col("id").is_in(deleted),
            )
        )
        write_arrow(self._bucket_file("chosen", bucket), chosen.to_arrow(), BATCH_ROWS)

    def _chosen(self) -> Iterator[tuple[pa.RecordBatch, pa.Table]]:
        """Each batch of kept rows, in the extracts' order (with the predicted language when
        fastText decided it), beside their choices (:meth:`_choose`); the buckets' choice files
        go once read."""
        paths = [self._bucket_file("chosen", b) for b in range(self._buckets)]
        cursors = [_Cursor(path) for path in paths if os.path.exists(path)]
        if not cursors:  # no conversation record
            return
        start = 0
        try:
            for batch in self._batches():
                end = start + batch.num_rows
                chosen = pa.concat_tables(cursor.below(end) for cursor in cursors)
                start = end
                if not chosen.num_rows:
                    continue
                rows = chosen["row"].to_numpy()
                if len(cursors) > 1:
                    order = np.argsort(rows, kind="stable")
                    chosen, rows = chosen.take(pa.array(order)), rows[order]
                kept = batch.take(pa.array(rows - (end - batch.num_rows)))
                if "lang" in chosen.column_names:
                    langs = self._langs.take(chosen["lang"].combine_chunks())
                    kept = kept.set_column(kept.schema.get_field_index("lang"), "lang", langs)
                yield kept, chosen
            if start != self._rows or not all(cursor.done for cursor in cursors):
                raise RuntimeError(
                    f"{start} rows where the counting pass read {self._rows}:"
                    " the extracts changed during the pair stage"
                )
        finally:
            for cursor in cursors:
                cursor.close()
            for path in paths:
                if os.path.exists(path):
                    os.remove(path)

    def _spread(self) -> None:
        """Each kept row -> the file of every partition in its mask, marked :data:`COUNTED` in
        the first."""
        files: ArrowFiles[int] = ArrowFiles(self._partition_file)
        try:
            for kept, chosen in self._chosen():
                masks = chosen["mask"].to_numpy()
                first = chosen["first"].to_numpy()
                deleted = chosen["deleted"].combine_chunks()
                for p in range(self._partitions):
                    mine = (masks >> np.uint64(p)) & np.uint64(1) == 1
                    if not mine.any():
                        continue
                    take = pa.array(mine)
                    rows = kept.filter(take)
                    rows = rows.append_column(COUNTED, pa.array(first[mine] == p))
                    rows = rows.append_column(DELETED, deleted.filter(take))
                    files.write(p, rows)
        finally:
            files.close()

    def _bucket_file(self, kind: str, bucket: int) -> str:
        return os.path.join(self._spill, f"{kind}-b{bucket:05d}.arrow")

    def _partition_file(self, partition: int) -> str:
        return os.path.join(self._spill, f"rows-{partition:02d}.arrow")

    def rows(self, partition: int) -> Iterator[tuple[dict[str, Any], bool, bool]]:
        """The kept rows of every tweet that is, replies to or quotes a root of ``partition``,
        each with whether its tweet is counted in this partition and whether it is deleted
        (read once: a partition's file, or the choices, go once read)."""
        if self._partitions == 1:
            for kept, chosen in self._chosen():
                deleted = chosen["deleted"].to_pylist()
                yield from zip(_dicts(kept), [True] * len(deleted), deleted, strict=True)
            return
        path = self._partition_file(partition)
        if not os.path.exists(path):
            return
        with pa.OSFile(path) as source:  # read, not mapped: memory is what is held
            reader = pa.ipc.open_file(source)
            for b in range(reader.num_record_batches):
                batch = reader.get_batch(b)
                counted = batch.column(COUNTED).to_pylist()
                deleted = batch.column(DELETED).to_pylist()
                # the flags stay out of the dicts: an eleventh key doubles a row dict's size
                rows = _dicts(batch.drop_columns([COUNTED, DELETED]))
                yield from zip(rows, counted, deleted, strict=True)
        os.remove(path)


class _Cursor:
    """An Arrow file of rows in ``row`` order, taken from the front: the rows below a bound at
    a time, one record batch of the file in memory."""

    def __init__(self, path: str) -> None:
        self._source = pa.OSFile(path)
        self._reader = pa.ipc.open_file(self._source)
        self._next = 0
        self._head: pa.RecordBatch | None = None

    def below(self, bound: int) -> pa.Table:
        batches = []
        while True:
            if self._head is None:
                if self._next == self._reader.num_record_batches:
                    break
                self._head = self._reader.get_batch(self._next)
                self._next += 1
            n = int(np.searchsorted(self._head.column(0).to_numpy(), bound))
            batches.append(self._head.slice(0, n))
            if n < self._head.num_rows:
                self._head = self._head.slice(n)
                break
            self._head = None
        return pa.Table.from_batches(batches, schema=self._reader.schema)

    @property
    def done(self) -> bool:
        return self._head is None and self._next == self._reader.num_record_batches

    def close(self) -> None:
        self._source.close()


def _id_set(tables: Sequence[pa.Table]) -> pl.Series:
    """The ``id`` column of the tables, as one series."""
    if not tables:
        return pl.Series("id", [], pl.Int64)
    return pl.Series("id", pa.concat_tables(tables)["id"])


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
