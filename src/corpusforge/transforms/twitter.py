"""Beam wiring of the Twitter pipeline: archives -> normalised tweets -> pairs.

Two composites, each only wiring the pure functions of ``corpusforge.sources.twitter``:

- :class:`ExtractedTweets`: archive URIs -> member references (fanned out with a reshuffle so
  one big archive does not serialise on one worker) -> decoded lines -> tweet records,
  delete notices, dead letters and counts, all tagged with their archive's extract folder.
- :class:`TwitterPairs`: normalised tweets and delete notices -> one pair per root and
  dataset -> exact-duplicate texts kept once; with counts for every drop.

Counts travel as ``(key, n)`` elements (summed later) and as Beam metrics, so the release's
accounting does not depend on a runner's metrics support.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput

from corpusforge.sources.twitter.archive import (
    MemberRef,
    ReadLimits,
    ReadProblem,
    Skipped,
    list_members,
    read_member_lines,
)
from corpusforge.sources.twitter.conversations import (
    CHILDREN_PER_PAIR,
    DropReason,
    Node,
    keep_first_duplicate,
    make_node,
    select_pairs,
)
from corpusforge.sources.twitter.parse import LineKind, merge_records, parse_line
from corpusforge.text.clean import get_profile

DEAD = "dead"
COUNTS = "counts"
DELETES = "deletes"


def dead_letter_row(
    stage: str,
    reason: str,
    archive: str | None,
    member: str | None,
    line: int | None,
    detail: str,
    excerpt: bytes | str = b"",
) -> dict[str, Any]:
    """A row of ``schemas/dead_letter.v1``."""
    if isinstance(excerpt, bytes):
        excerpt = excerpt[:200].decode("utf-8", "replace")
    return {
        "stage": stage,
        "reason": reason,
        "origin_archive": archive,
        "origin_member": member,
        "origin_line": line,
        "detail": detail,
        "excerpt": excerpt[:200],
    }


class _ListMembersFn(beam.DoFn):  # type: ignore[misc]
    """archive URI -> MemberRef; skipped entries and unreadable archives are counted."""

    def __init__(self, extract_dirs: Mapping[str, str]) -> None:
        self._dirs = dict(extract_dirs)

    def process(self, uri: str) -> Iterator[Any]:
        dest = self._dirs[uri]
        counts: Counter[str] = Counter({"archives": 1})
        for item in list_members(uri):
            if isinstance(item, MemberRef):
                counts["members_listed"] += 1
                yield dest, item
            elif isinstance(item, Skipped):
                counts[f"members_skipped.{item.reason}"] += 1
                Metrics.counter("read", str(item.reason)).inc()
            else:
                counts["dead_letter_archives"] += 1
                counts[f"dead_letter.{item.reason}"] += 1
                Metrics.counter("read", str(item.reason)).inc()
                yield TaggedOutput(DEAD, (dest, _problem_row(item)))
        for key, n in counts.items():
            yield TaggedOutput(COUNTS, ((dest, key), n))


def _problem_row(p: ReadProblem) -> dict[str, Any]:
    return dead_letter_row("read", str(p.reason), p.archive, p.member, p.line, p.detail, p.excerpt)


class _ReadMemberFn(beam.DoFn):  # type: ignore[misc]
    """One member -> tweet records (main), delete notices, dead letters and counts."""

    def __init__(self, limits: ReadLimits) -> None:
        self._limits = limits

    def process(self, element: tuple[str, MemberRef]) -> Iterator[Any]:
        dest, ref = element
        counts: Counter[str] = Counter({"members_read": 1})
        for item in read_member_lines(ref, self._limits):
            if isinstance(item, tuple):
                member, line_no, line = item
                counts["lines_read"] += 1
                yield from self._parse(dest, ref.archive, member, line_no, line, counts)
            elif isinstance(item, Skipped):
                counts[f"members_skipped.{item.reason}"] += 1
            else:
                if item.line is None:
                    counts["dead_letter_members"] += 1
                else:  # a line that could not be decoded whole still counts as read
                    counts["lines_read"] += 1
                    counts["dead_letter_lines"] += 1
                counts[f"dead_letter.{item.reason}"] += 1
                Metrics.counter("read", str(item.reason)).inc()
                yield TaggedOutput(DEAD, (dest, _problem_row(item)))
        for key, n in counts.items():
            yield TaggedOutput(COUNTS, ((dest, key), n))
        Metrics.counter("read", "lines_read").inc(counts["lines_read"])

    def _parse(
        self, dest: str, archive: str, member: str, line_no: int, line: bytes, counts: Counter[str]
    ) -> Iterator[Any]:
        parsed = parse_line(line, archive, member, line_no)
        if parsed.kind is LineKind.TWEET:
            counts["tweets"] += 1
            counts["retweets"] += parsed.is_retweet
            counts["records"] += len(parsed.records)
            for record in parsed.records:
                yield (dest, record["id"]), record
            for problem in parsed.embedded_problems:
                counts["embedded_skipped"] += 1
                yield TaggedOutput(DEAD, (dest, dead_letter_row(
                    "parse", "parse_bad_embedded", archive, member, line_no, problem, line)))
        elif parsed.kind is LineKind.DELETE:
            counts["delete_notices"] += 1
            yield TaggedOutput(DELETES, ((dest, parsed.deleted_id), {
                "id": parsed.deleted_id,
                "origin_archive": archive,
                "origin_member": member,
                "origin_line": line_no,
            }))
        elif parsed.kind is LineKind.OTHER:
            counts["other_messages"] += 1
            counts[f"other.{parsed.message}"] += 1
        else:
            counts["dead_letter_lines"] += 1
            counts[f"dead_letter.{parsed.reason}"] += 1
            Metrics.counter("parse", str(parsed.reason)).inc()
            yield TaggedOutput(DEAD, (dest, dead_letter_row(
                "parse", str(parsed.reason), archive, member, line_no, parsed.detail, line)))


def _first_origin(element: tuple[tuple[str, int], Iterable[dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    (dest, _), rows = element
    return dest, min(rows, key=lambda r: (r["origin_archive"], r["origin_member"], r["origin_line"]))


def _merge_group(element: tuple[tuple[str, int], Iterable[dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    (dest, _), records = element
    return dest, merge_records(records)


class ExtractedTweets(beam.PTransform):  # type: ignore[misc]
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
        listed = uris | "ListMembers" >> beam.ParDo(_ListMembersFn(self._dirs)).with_outputs(
            DEAD, COUNTS, main="members"
        )
        read = (
            listed.members
            | "FanOutMembers" >> beam.Reshuffle()
            | "ReadMembers" >> beam.ParDo(_ReadMemberFn(self._limits)).with_outputs(
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
            | "FirstDelete" >> beam.Map(_first_origin)
        )
        dead = (listed[DEAD], read[DEAD]) | "AllDead" >> beam.Flatten()
        counts = (
            (listed[COUNTS], read[COUNTS])
            | "AllCounts" >> beam.Flatten()
            | "SumCounts" >> beam.CombinePerKey(sum)
        )
        return {"tweets": tweets, "deletes": deletes, "dead": dead, "counts": counts}


# ---------------------------------------------------------------------------------------
# Pairs


class _NodeFn(beam.DoFn):  # type: ignore[misc]
    """(id, {tweets, deleted, held}) -> conversation edges of the cleaned node; counts."""

    def __init__(self, clean: str, min_chars: int, langs: tuple[str, ...]) -> None:
        self._clean = clean
        self._min_chars = min_chars
        self._langs = frozenset(langs)

    def setup(self) -> None:
        self._profile = get_profile(self._clean)

    def process(self, element: tuple[int, dict[str, list[Any]]]) -> Iterator[Any]:
        tweet_id, groups = element
        records = groups["tweets"]
        if not records:
            yield TaggedOutput(COUNTS, ("deletes_not_in_input", 1))
            return
        node = make_node(
            merge_records(records),
            deleted=bool(groups["deleted"]),
            held_out=bool(groups.get("held")),
            profile=self._profile,
            min_chars=self._min_chars,
            langs=self._langs,
        )
        yield TaggedOutput(COUNTS, ("tweets_distinct", 1))
        if node.reason is None:
            yield TaggedOutput(COUNTS, ("tweets_eligible", 1))
        else:
            yield TaggedOutput(COUNTS, (f"tweets_dropped.{node.reason}", 1))
            Metrics.counter("clean", str(node.reason)).inc()
        yield tweet_id, ("self", node)
        if node.quote_of is not None:
            yield node.quote_of, ("quote", node)
        if node.reply_to is not None:
            yield node.reply_to, ("reply", node)


class _PairRootFn(beam.DoFn):  # type: ignore[misc]
    """(root id, [(role, node)]) -> (dataset, pair row); counts of candidates and drops."""

    def __init__(self, seed: int) -> None:
        self._seed = seed

    def process(self, element: tuple[int, Iterable[tuple[str, Node]]]) -> Iterator[Any]:
        root_id, members = element
        root: Node | None = None
        quotes: list[Node] = []
        replies: list[Node] = []
        for role, node in members:
            if role == "self":
                root = node
            elif role == "quote":
                quotes.append(node)
            else:
                replies.append(node)
        if not quotes and not replies:
            return
        result = select_pairs(root_id, root, quotes, replies, seed=self._seed)
        for dataset, n in result.candidates.items():
            yield TaggedOutput(COUNTS, (f"pairs.{dataset}.candidates", n))
        for (dataset, reason), n in result.dropped.items():
            yield TaggedOutput(COUNTS, (f"pairs.{dataset}.dropped.{reason}", n))
            Metrics.counter(f"pairs_{dataset}", str(reason)).inc(n)
        for row in result.pairs:
            yield (row["dataset"], row["anchor"], row["positive"]), row


class _DedupTextFn(beam.DoFn):  # type: ignore[misc]
    def __init__(self, seed: int) -> None:
        self._seed = seed

    def process(self, element: tuple[tuple[str, str, str], Iterable[dict[str, Any]]]) -> Iterator[Any]:
        (dataset, _, _), rows = element
        kept, dropped = keep_first_duplicate(self._seed, list(rows))
        if dropped:
            n = dropped * CHILDREN_PER_PAIR[dataset]
            yield TaggedOutput(COUNTS, (f"pairs.{dataset}.dropped.{DropReason.PAIR_DUPLICATE_TEXT}", n))
            Metrics.counter(f"pairs_{dataset}", str(DropReason.PAIR_DUPLICATE_TEXT)).inc(n)
        yield TaggedOutput(COUNTS, (f"pairs.{dataset}.rows", 1))
        yield dict(kept)


class TwitterPairs(beam.PTransform):  # type: ignore[misc]
    """Tweet rows and delete rows -> ``{"pairs": pair rows, "counts": (key, n)}``.

    Tweets are merged across archives by id, deleted ones removed, the rest cleaned and
    length- and language-filtered; each root then gives at most one pair per dataset.

    Args:
        clean: cleaning profile name.
        min_chars: minimum cleaned length.
        langs: languages kept.
        seed: seed of every choice.
    """

    def __init__(self, clean: str, min_chars: int, langs: tuple[str, ...], seed: int) -> None:
        super().__init__()
        self._clean = clean
        self._min_chars = min_chars
        self._langs = langs
        self._seed = seed

    def expand(self, inputs: dict[str, beam.PCollection]) -> dict[str, beam.PCollection]:
        tweets = inputs["tweets"] | "KeyTweetById" >> beam.Map(lambda r: (r["id"], r))
        deleted = inputs["deletes"] | "KeyDeleteById" >> beam.Map(lambda r: (r["id"], True))
        joined = {"tweets": tweets, "deleted": deleted}
        if "held" in inputs:
            joined["held"] = inputs["held"]
        nodes = (
            joined
            | "JoinDeletes" >> beam.CoGroupByKey()
            | "CleanNodes" >> beam.ParDo(
                _NodeFn(self._clean, self._min_chars, self._langs)
            ).with_outputs(COUNTS, main="edges")
        )
        chosen = (
            nodes.edges
            | "GroupByRoot" >> beam.GroupByKey()
            | "PairRoots" >> beam.ParDo(_PairRootFn(self._seed)).with_outputs(COUNTS, main="pairs")
        )
        deduped = (
            chosen.pairs
            | "GroupSameText" >> beam.GroupByKey()
            | "DropDuplicateText" >> beam.ParDo(_DedupTextFn(self._seed)).with_outputs(
                COUNTS, main="pairs"
            )
        )
        counts = (
            (nodes[COUNTS], chosen[COUNTS], deduped[COUNTS])
            | "AllPairCounts" >> beam.Flatten()
            | "SumPairCounts" >> beam.CombinePerKey(sum)
        )
        return {"pairs": deduped.pairs, "counts": counts}
