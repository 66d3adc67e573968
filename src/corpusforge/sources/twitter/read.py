"""Archive -> member references; member -> tweet records, delete notices and dead letters.

The extract stage's work on one archive and on one member, with what it counts, as plain
generators that both engines call: the Beam DoFns of
:mod:`corpusforge.transforms.twitter.extract` tag what these yield with the archive's
extract folder and turn :attr:`Tally.metrics` into ``Metrics.counter`` calls; the local engine
(:mod:`corpusforge.local.extract`) routes the same items straight to its spill files.
Neither decides anything of its own, so both write the same files and the same counts.

- :func:`list_archive`: an archive -> its :class:`~.archive.MemberRef`\\ s, and a dead-letter
  row for an archive that cannot be listed;
- :func:`read_member`: a member -> ``(ReadOutput, row)`` items: tweet records
  (``schemas/tweet.v1``, several per line: :func:`~.parse.parse_line`), delete notices
  (``schemas/delete.v1``) and dead letters (``schemas/dead_letter.v1``) with their origin;
- :func:`first_origin`: the delete notice kept when an id is deleted more than once
  (:func:`~.parse.merge_records` is its counterpart for a tweet's records).

Counts go to a :class:`Tally` the caller passes: ``counts`` are the keys of the extract's
``_counts.json`` (``lines_read``, ``tweets``, ``dead_letter.<reason>``, ...), ``metrics``
the ``(namespace, name)`` Beam counters of the drops. Lines are streamed: a member is never
held whole.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from corpusforge.sources.twitter.archive import (
    MemberOpened,
    MemberRef,
    ReadLimits,
    ReadProblem,
    Skipped,
    list_members,
    read_member_lines,
)
from corpusforge.sources.twitter.parse import LineKind, parse_line

Row = dict[str, Any]

EXCERPT_CHARS = 200
"""Characters of the offending bytes kept in a dead-letter row."""


class ReadOutput(enum.Enum):
    """Which output an item of :func:`read_member` belongs to."""

    RECORD = "record"
    DELETE = "delete"
    DEAD = "dead"


@dataclass(slots=True)
class Tally:
    """What :func:`list_archive` and :func:`read_member` counted.

    Attributes:
        counts: the extract's counts by key (``_counts.json``, then the manifest); a key
            may be present with 0 (``retweets``), as its own record of what was looked at.
        metrics: ``(namespace, name) -> n``, the Beam ``Metrics.counter`` calls next to the
            drops (``("read", "read_member_corrupt")``, ``("parse", "parse_invalid_json")``)
            and ``("read", "lines_read")``.
    """

    counts: Counter[str] = field(default_factory=Counter)
    metrics: Counter[tuple[str, str]] = field(default_factory=Counter)


def dead_letter_row(
    stage: str,
    reason: str,
    archive: str | None,
    member: str | None,
    line: int | None,
    detail: str,
    excerpt: bytes | str = b"",
) -> Row:
    """A row of ``schemas/dead_letter.v1``.

    Args:
        stage: ``read`` or ``parse``.
        reason: the reason code.
        archive: origin archive name.
        member: origin member name, if known.
        line: origin line number, if any.
        detail: a human-readable explanation.
        excerpt: the offending bytes or text; its first 200 characters are kept.
    """
    if isinstance(excerpt, bytes):
        excerpt = excerpt[:EXCERPT_CHARS].decode("utf-8", "replace")
    return {
        "stage": stage,
        "reason": reason,
        "origin_archive": archive,
        "origin_member": member,
        "origin_line": line,
        "detail": detail,
        "excerpt": excerpt[:EXCERPT_CHARS],
    }


def problem_row(problem: ReadProblem) -> Row:
    """The dead-letter row of a read problem (stage ``read``)."""
    p = problem
    return dead_letter_row("read", str(p.reason), p.archive, p.member, p.line, p.detail, p.excerpt)


def list_archive(uri: str, tally: Tally) -> Iterator[MemberRef | Row]:
    """The members to read from archive ``uri``; entries that are not members are counted.

    Args:
        uri: the archive's path or URI.
        tally: receives ``archives``, ``members_listed`` (not for a ``.tar.gz``, whose
            members are counted as they are read), ``members_skipped.<reason>``,
            ``dead_letter_archives`` and ``dead_letter.<reason>``.

    Yields:
        a :class:`~.archive.MemberRef` per member to read, and a dead-letter row (a dict)
        for an archive that cannot be listed.
    """
    counts, metrics = tally.counts, tally.metrics
    counts["archives"] += 1
    for item in list_members(uri):
        if isinstance(item, MemberRef):
            if item.container != "targz":
                counts["members_listed"] += 1
            yield item
        elif isinstance(item, Skipped):
            counts[f"members_skipped.{item.reason}"] += 1
            metrics[("read", str(item.reason))] += 1
        else:
            counts["dead_letter_archives"] += 1
            counts[f"dead_letter.{item.reason}"] += 1
            metrics[("read", str(item.reason))] += 1
            yield problem_row(item)


def read_member(
    ref: MemberRef, limits: ReadLimits, tally: Tally
) -> Iterator[tuple[ReadOutput, Row]]:
    """Decode and parse one member, line by line.

    Args:
        ref: the member, from :func:`list_archive`.
        limits: read caps and the decoder setting.
        tally: receives ``members_read`` (and for a ``.tar.gz`` ``members_listed``),
            ``lines_read``, ``tweets``, ``retweets``, ``records``, ``api_errors``,
            ``embedded_skipped``, ``delete_notices``, ``other_messages``,
            ``other.<message>``, ``members_skipped.<reason>``, ``dead_letter_members``,
            ``dead_letter_lines`` and ``dead_letter.<reason>``.

    Yields:
        ``(ReadOutput.RECORD, tweet record)`` for every record of a tweet line (the tweet or
        the retweeted one, then embedded statuses; one id may come back many times, see
        :func:`~.parse.merge_records`), ``(ReadOutput.DELETE, delete row)`` for a delete
        notice and ``(ReadOutput.DEAD, dead-letter row)`` for what could not be decoded or
        parsed (a bad line is dead-lettered and the member goes on).
    """
    counts, metrics = tally.counts, tally.metrics
    if ref.container != "targz":
        counts["members_read"] += 1
    lines = 0
    archive = ref.archive
    for item in read_member_lines(ref, limits):
        if isinstance(item, tuple):
            member, line_no, line = item
            lines += 1
            parsed = parse_line(line, archive, member, line_no)
            kind = parsed.kind
            if kind is LineKind.TWEET:
                counts["tweets"] += 1
                counts["retweets"] += parsed.is_retweet
                counts["records"] += len(parsed.records)
                if parsed.api_errors:
                    counts["api_errors"] += parsed.api_errors
                for record in parsed.records:
                    yield ReadOutput.RECORD, record
                for problem in parsed.embedded_problems:
                    counts["embedded_skipped"] += 1
                    counts["dead_letter.parse_bad_embedded"] += 1
                    yield (
                        ReadOutput.DEAD,
                        dead_letter_row(
                            "parse", "parse_bad_embedded", archive, member, line_no, problem, line
                        ),
                    )
            elif kind is LineKind.DELETE:
                counts["delete_notices"] += 1
                yield (
                    ReadOutput.DELETE,
                    {
                        "id": parsed.deleted_id,
                        "origin_archive": archive,
                        "origin_member": member,
                        "origin_line": line_no,
                    },
                )
            elif kind is LineKind.OTHER:
                counts["other_messages"] += 1
                counts[f"other.{parsed.message}"] += 1
            else:
                reason = str(parsed.reason)
                counts["dead_letter_lines"] += 1
                counts[f"dead_letter.{reason}"] += 1
                metrics[("parse", reason)] += 1
                yield (
                    ReadOutput.DEAD,
                    dead_letter_row("parse", reason, archive, member, line_no, parsed.detail, line),
                )
        elif isinstance(item, Skipped):
            counts[f"members_skipped.{item.reason}"] += 1
        elif isinstance(item, MemberOpened):
            counts["members_listed"] += 1
            counts["members_read"] += 1
        else:
            if item.line is None:
                counts["dead_letter_members"] += 1
            else:  # a line that could not be decoded whole still counts as read
                lines += 1
                counts["dead_letter_lines"] += 1
            counts[f"dead_letter.{item.reason}"] += 1
            metrics[("read", str(item.reason))] += 1
            yield ReadOutput.DEAD, problem_row(item)
    if lines:
        counts["lines_read"] += lines
    metrics[("read", "lines_read")] += lines


def first_origin(notices: Iterable[Row]) -> Row:
    """Of the delete notices of one id, the one with the smallest origin (archive, member,
    line): the row kept, whatever the order they were read in."""
    return min(notices, key=_origin)


def _origin(row: Row) -> tuple[str, str, int]:
    return row["origin_archive"], row["origin_member"], row["origin_line"]
