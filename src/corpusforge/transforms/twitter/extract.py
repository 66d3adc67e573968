"""Beam wiring of the Twitter extract stage: archive URIs -> records, deletes, dead letters.

:class:`ExtractedTweets` fans each archive out into its members (a reshuffle, so one big
archive does not serialise on one worker), reads each member, groups the records of a tweet
id and the delete notices of an id, and tags everything with the archive's extract folder.
The reading is :func:`~corpusforge.sources.twitter.read.list_archive` and
:func:`~corpusforge.sources.twitter.read.read_member`, the grouping ends in
:func:`~corpusforge.sources.twitter.parse.merge_records` and
:func:`~corpusforge.sources.twitter.read.first_origin`: the functions the local engine
(:mod:`corpusforge.local.extract`) calls, so both write the same files. The DoFns here
only route what those yield and report their :class:`~corpusforge.sources.twitter.read.Tally`
as ``(key, n)`` count elements and ``Metrics.counter`` calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput

from corpusforge import heap, progress
from corpusforge.sources.twitter.archive import MemberRef, ReadLimits, archive_name
from corpusforge.sources.twitter.parse import merge_records
from corpusforge.sources.twitter.read import (
    ReadOutput,
    Tally,
    first_origin,
    list_archive,
    read_member,
)
from corpusforge.transforms.tags import COUNTS, DEAD, DELETES


def _reported(dest: str, tally: Tally) -> Iterator[TaggedOutput]:
    """``tally``'s metrics as Beam counters; its counts as ``((dest, key), n)`` outputs."""
    for (namespace, name), n in tally.metrics.items():
        Metrics.counter(namespace, name).inc(n)
    for key, n in tally.counts.items():
        yield TaggedOutput(COUNTS, ((dest, key), n))


class ListMembersFn(beam.DoFn):
    """archive URI -> ``(extract_dir, MemberRef)``; dead letters and counts tagged.

    Args:
        extract_dirs: each archive URI's extract folder.
    """

    def __init__(self, extract_dirs: Mapping[str, str]) -> None:
        self._dirs = dict(extract_dirs)

    def setup(self) -> None:
        heap.bound_worker_heap()

    def process(self, uri: str) -> Iterator[Any]:
        dest = self._dirs[uri]
        tally = Tally()
        refs = 0
        for item in list_archive(uri, tally):
            if isinstance(item, MemberRef):
                refs += 1
                yield dest, item
            else:
                yield TaggedOutput(DEAD, (dest, item))
        progress.members_listed(archive_name(uri), refs)
        yield from _reported(dest, tally)


class ReadMemberFn(beam.DoFn):
    """``(extract_dir, MemberRef)`` -> ``((extract_dir, id), record)``; delete notices, dead
    letters and counts tagged.

    Args:
        limits: read caps.
    """

    def __init__(self, limits: ReadLimits) -> None:
        self._limits = limits

    def setup(self) -> None:
        heap.bound_worker_heap()

    def process(self, element: tuple[str, MemberRef]) -> Iterator[Any]:
        dest, ref = element
        tally = Tally()
        for output, row in read_member(ref, self._limits, tally):
            if output is ReadOutput.RECORD:
                yield (dest, row["id"]), row
            elif output is ReadOutput.DELETE:
                yield TaggedOutput(DELETES, ((dest, row["id"]), row))
            else:
                yield TaggedOutput(DEAD, (dest, row))
        yield from _reported(dest, tally)
        progress.member_done(ref.archive, ref.member, tally.counts["lines_read"])


def _merge_group(
    element: tuple[tuple[str, int], Iterable[dict[str, Any]]],
) -> tuple[str, dict[str, Any]]:
    (dest, _), records = element
    return dest, merge_records(records)


def _first_delete(
    element: tuple[tuple[str, int], Iterable[dict[str, Any]]],
) -> tuple[str, dict[str, Any]]:
    (dest, _), notices = element
    return dest, first_origin(notices)


class ExtractedTweets(beam.PTransform):
    """Archive URIs -> ``{"tweets", "deletes", "dead", "counts"}`` keyed by extract folder.

    ``tweets`` and ``deletes`` are ``(extract_dir, row)`` with one row per distinct tweet id
    in each archive; ``dead`` is ``(extract_dir, dead_letter_row)``; ``counts`` is
    ``((extract_dir, key), n)`` summed per key.

    Args:
        extract_dirs: each archive URI's extract folder.
        limits: read caps.
    """

    def __init__(self, extract_dirs: Mapping[str, str], limits: ReadLimits) -> None:
        super().__init__()
        self._dirs = dict(extract_dirs)
        self._limits = limits

    def expand(self, uris: beam.PCollection) -> dict[str, beam.PCollection]:
        listed = uris | "ListMembers" >> beam.ParDo(ListMembersFn(self._dirs)).with_outputs(
            DEAD, COUNTS, main="members"
        )
        read = (
            listed.members
            | "FanOutMembers" >> beam.Reshuffle()
            | "ReadMembers"
            >> beam.ParDo(ReadMemberFn(self._limits)).with_outputs(
                DELETES, DEAD, COUNTS, main="records"
            )
        )
        tweets = (
            read.records
            | "GroupTweetId" >> beam.GroupByKey()
            | "MergeTweet" >> beam.Map(_merge_group)
        )
        deletes = (
            read[DELETES]
            | "GroupDeleteId" >> beam.GroupByKey()
            | "FirstDelete" >> beam.Map(_first_delete)
        )
        dead = (listed[DEAD], read[DEAD]) | "AllDead" >> beam.Flatten()
        counts = (
            (listed[COUNTS], read[COUNTS])
            | "AllCounts" >> beam.Flatten()
            | "SumCounts" >> beam.CombinePerKey(sum)
        )
        return {"tweets": tweets, "deletes": deletes, "dead": dead, "counts": counts}
