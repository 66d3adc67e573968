"""Dead-letter rows -> the Parquet shards of a release's ``dead_letter/`` folder.

Every record a build cannot read becomes one row of ``schemas/dead_letter.v1`` with its reason
and origin (archive or file, member, line); the rows are sharded and ordered by a stable key,
so a rerun writes the same bytes on any runner (the Beam sink is
:class:`corpusforge.sinks.parquet.WriteDeadLetters`), and a release always holds at least one
dead-letter file, empty if need be, so a reader finds the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpusforge.release.layout import DEAD_LETTERS
from corpusforge.release.staging import empty_shard
from corpusforge.schemas import DEAD_LETTER


def _origin(row: Mapping[str, Any]) -> tuple[str, str, int, str, str]:
    line = row["origin_line"]
    return (
        row["origin_archive"] or "",
        row["origin_member"] or "",
        line if line is not None else -1,
        row["reason"],
        row["detail"],
    )


def dead_letter_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Origin, reason, detail and excerpt: orders a bitext or ParaNMT release's dead letters
    and places them in shards."""
    return (*_origin(row), row["excerpt"])


def extract_dead_letter_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Origin, reason and detail: orders a Twitter extract's dead letters and places them in
    shards (without the excerpt, as extracts have always been written, so that extracts and
    releases keep their bytes)."""
    return _origin(row)


def empty_dead_letters(root: str) -> dict[str, Any]:
    """An empty ``dead_letter/`` shard under ``root``; its ShardInfo."""
    return empty_shard(root, DEAD_LETTERS, DEAD_LETTER)
