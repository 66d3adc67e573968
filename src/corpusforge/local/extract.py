"""One archive -> its extract folder, in one process, within bounded memory: the local extract.

The extract stage of ``corpusforge twitter build`` on this machine (``--extract-engine
local``; ``auto`` picks it whenever no ``--runner`` is given). It calls the functions the Beam
composite :class:`corpusforge.transforms.twitter.ExtractedTweets` wraps and imports neither
the transforms nor Beam (the writers it shares, ``sinks/parquet.py`` and ``release/io.py``,
still use Beam's ``FileSystems``): members are listed with
:func:`~corpusforge.sources.twitter.read.list_archive` and read with
:func:`~corpusforge.sources.twitter.read.read_member`, a tweet's records are merged with
:func:`~corpusforge.sources.twitter.parse.merge_records`, a deleted id keeps its
:func:`~corpusforge.sources.twitter.read.first_origin`, and the shards are those
:class:`WriteParquetShards` writes. The files and counts are the Beam pipeline's, byte for
byte (``tests/twitter/test_local_extract.py``).

What it does not do is hold the archive: on the in-process runner the two groupings (records
by tweet id, rows by shard) kept every record in memory, about 2.5 KB per line, so a
monthly archive (2011-2013 layouts) could not be extracted in 24 GB. Here records wait in
hash groups spilled to disk (:class:`~corpusforge.local.spill.SpilledGroups`) and rows
wait for their shard in run files (:class:`~corpusforge.sinks.parquet.ShardedWriter`);
memory stays near ``spill_rows`` records whatever the archive's size.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from corpusforge import progress
from corpusforge.local.spill import EXTRACT_SPILL_ROWS, SpilledGroups
from corpusforge.release.io import COUNTS, FILES, ensure_dir, file_list, join, write_json
from corpusforge.schemas import DEAD_LETTER, DELETE, TWEET
from corpusforge.sinks.parquet import ShardedWriter
from corpusforge.sources.twitter.archive import MemberRef, ReadLimits, archive_name
from corpusforge.sources.twitter.parse import merge_records
from corpusforge.sources.twitter.read import (
    ReadOutput,
    Tally,
    first_origin,
    list_archive,
    read_member,
)

log = logging.getLogger(__name__)

GROUP_BYTES = 128 * 2**20
"""Archive bytes per record group: a group (about 150k lines of bz2 JSON) is read back whole."""


def extract_archive(
    uri: str,
    folder: str,
    dead_folder: str,
    limits: ReadLimits,
    rows_per_shard: int,
    *,
    tweet_key: Callable[[Mapping[str, Any]], Any],
    dead_key: Callable[[Mapping[str, Any]], Any],
    spill_rows: int = EXTRACT_SPILL_ROWS,
    release_root: str | None = None,
) -> None:
    """Extract ``uri`` into ``folder`` (tweets, deletes, ``_files.json``, ``_counts.json``)
    and ``dead_folder`` (dead letters), as the Beam extract pipeline does for one archive.

    Args:
        uri: the archive (a local path).
        folder: its extract folder.
        dead_folder: its dead-letter folder.
        limits: read caps.
        rows_per_shard: target rows per shard.
        tweet_key: sort key of tweet and delete rows.
        dead_key: sort key of dead-letter rows.
        spill_rows: records (and rows) held in memory before they are spilled to disk.
        release_root: the release folder; ``_files.json`` holds paths relative to it.
    """
    ensure_dir(folder)
    spill = tempfile.mkdtemp(prefix="_spill-", dir=folder)
    try:
        files, counts = _extract(
            uri, folder, dead_folder, limits, rows_per_shard, tweet_key, dead_key, spill, spill_rows
        )
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    write_json(join(folder, FILES), file_list(files, release_root))
    write_json(join(folder, COUNTS), dict(sorted(counts.items())))


def _extract(
    uri: str,
    folder: str,
    dead_folder: str,
    limits: ReadLimits,
    rows_per_shard: int,
    tweet_key: Callable[[Mapping[str, Any]], Any],
    dead_key: Callable[[Mapping[str, Any]], Any],
    spill: str,
    spill_rows: int,
) -> tuple[list[dict[str, Any]], Counter[str]]:
    def subfolder(name: str) -> str:
        path = os.path.join(spill, name)
        os.mkdir(path)
        return path

    groups = max(1, math.ceil(os.path.getsize(uri) / GROUP_BYTES))
    records: SpilledGroups[int, dict[str, Any]] = SpilledGroups(
        groups, subfolder("records"), spill_rows
    )
    deletes: SpilledGroups[int, dict[str, Any]] = SpilledGroups(
        groups, subfolder("deletes"), spill_rows
    )
    dead = ShardedWriter(
        DEAD_LETTER, dead_key, rows_per_shard, spill=subfolder("dead"), buffer_rows=spill_rows
    )
    counts: Counter[str] = Counter()

    listed = Tally(counts)
    refs: list[MemberRef] = []
    for item in list_archive(uri, listed):
        if isinstance(item, MemberRef):
            refs.append(item)
        else:
            dead.add(dead_folder, item)
    progress.members_listed(archive_name(uri), len(refs))
    for ref in refs:
        tally = Tally()
        for output, row in read_member(ref, limits, tally):
            if output is ReadOutput.RECORD:
                records.add(row["id"], row)
            elif output is ReadOutput.DELETE:
                deletes.add(row["id"], row)
            else:
                dead.add(dead_folder, row)
        counts.update(tally.counts)
        progress.member_done(ref.archive, ref.member, tally.counts["lines_read"])
    log.info("%s: %d records, %d groups", uri, records.added, groups)

    tweets = ShardedWriter(
        TWEET, tweet_key, rows_per_shard, spill=subfolder("tweets"), buffer_rows=spill_rows
    )
    for _, same_id in records:
        tweets.add(join(folder, "tweets"), merge_records(same_id))
    deleted = ShardedWriter(
        DELETE, tweet_key, rows_per_shard, spill=subfolder("deleted"), buffer_rows=spill_rows
    )
    for _, notices in deletes:
        deleted.add(join(folder, "deletes"), first_origin(notices))
    for dest in (join(folder, "tweets"), join(folder, "deletes"), dead_folder):
        ensure_dir(dest)
    return tweets.close() + deleted.close() + dead.close(), counts
