"""Normalised tweets -> eligible nodes -> one weakly similar pair per root and dataset.

Follows "Exploiting Twitter as Source of Large Corpora of Weakly Similar Pairs for Semantic
Sentence Embeddings" (Di Giovanni & Brambilla, 2021):

- Qt: (quoted tweet, quote); Rp: (replied-to tweet, reply);
- CoQt: two quotes of one tweet; CoRp: two replies of one tweet (the root itself need not be
  in the archive);
- at most one pair per root tweet in each dataset, so viral tweets are not over-represented.

Which child (or two children) of a root is used is decided by a seeded hash of the tweet ids,
never by arrival order. Every candidate child is either used in a pair or dropped with a
:class:`DropReason`; the counts close exactly: for Qt and Rp ``candidates == rows + dropped``,
for CoQt and CoRp ``candidates == 2 * rows + dropped``.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from corpusforge.keys import seeded_hash, seeded_hasher
from corpusforge.sources.twitter.parse import merge_records
from corpusforge.text.clean import CleanProfile, clean_text
from corpusforge.text.decontam import Decontaminator

DIRECT = {"qt": "quote", "rp": "reply"}
CO = {"coqt": "quote", "corp": "reply"}
CHILDREN_PER_PAIR = {"qt": 1, "rp": 1, "coqt": 2, "corp": 2}


class DropReason(enum.StrEnum):
    """Why a tweet or a candidate child did not make it into a pair."""

    TWEET_DELETED = "tweet_deleted"
    TWEET_HELD_OUT = "tweet_held_out"
    TWEET_CONTAMINATED = "tweet_contaminated"
    TWEET_LANG_NOT_SELECTED = "tweet_lang_not_selected"
    CLEAN_TOO_SHORT = "clean_too_short"
    PAIR_PARENT_MISSING = "pair_parent_missing"
    PAIR_PARENT_INELIGIBLE = "pair_parent_ineligible"
    PAIR_CHILD_INELIGIBLE = "pair_child_ineligible"
    PAIR_PARENT_HELD_OUT = "pair_parent_held_out"
    PAIR_CHILD_HELD_OUT = "pair_child_held_out"
    PAIR_IDENTICAL_SIDES = "pair_identical_sides"
    PAIR_SINGLE_CHILD = "pair_single_child"
    PAIR_NOT_CHOSEN_FOR_ROOT = "pair_not_chosen_for_root"
    PAIR_DUPLICATE_TEXT = "pair_duplicate_text"
    PAIR_SAMPLED_OUT = "pair_sampled_out"


class Node(NamedTuple):
    """A distinct tweet, ready for pairing (a tuple: it crosses Beam shuffles cheaply).

    Attributes:
        id: tweet id.
        text: cleaned text, or ``None`` when the tweet is not eligible.
        lang: the tweet's ``lang`` field.
        reason: why it is not eligible, or ``None``.
        reply_to: id of the replied-to tweet.
        quote_of: id of the quoted tweet.
    """

    id: int
    text: str | None
    lang: str | None
    reason: DropReason | None
    reply_to: int | None
    quote_of: int | None


def hold_out(node: Node, ids: Collection[int], text_hashes: Collection[int]) -> Node:
    """``node`` marked ``tweet_held_out`` when a benchmark uses its id or its cleaned text."""
    if node.reason is None and (node.id in ids or text_hash(node.text or "") in text_hashes):
        return node._replace(text=None, reason=DropReason.TWEET_HELD_OUT)
    return node


_TEXT_HASH = seeded_hasher(0, "text")


def text_hash(text: str) -> int:
    """A stable 64-bit hash of a cleaned text, for hold-out and duplicate checks."""
    return _TEXT_HASH(text)


def make_node(
    record: Mapping[str, Any],
    *,
    deleted: bool,
    held_out: bool,
    profile: CleanProfile,
    min_chars: int,
    langs: Collection[str],
) -> Node:
    """Clean one merged tweet record and decide whether it may appear in a pair.

    Args:
        record: a row of ``schemas/tweet.v1``.
        deleted: a delete notice in the input names this tweet.
        held_out: the tweet is used by a benchmark and must stay out of training pairs.
        profile: cleaning profile.
        min_chars: minimum cleaned length.
        langs: languages kept (by the tweet's ``lang`` field).
    """
    reason: DropReason | None = None
    text: str | None = None
    lang = record["lang"]
    if deleted:
        reason = DropReason.TWEET_DELETED
    elif held_out:
        reason = DropReason.TWEET_HELD_OUT
    elif lang not in langs:
        reason = DropReason.TWEET_LANG_NOT_SELECTED
    else:
        text = clean_text(record["text"], profile)
        if len(text) < min_chars:
            reason, text = DropReason.CLEAN_TOO_SHORT, None
    return Node(record["id"], text, lang, reason, record["reply_to_id"], record["quote_of_id"])


def tweet_node(
    records: Sequence[Mapping[str, Any]],
    *,
    deleted: bool,
    profile: CleanProfile,
    min_chars: int,
    langs: Collection[str],
    decontaminator: Decontaminator | None = None,
) -> tuple[Node, list[str]]:
    """One tweet's records (merged) -> its node, and the count keys it adds (one each).

    The node is checked against external evaluation sets when a decontaminator is given.
    Count keys: ``tweets_distinct``; ``tweets_eligible`` or ``tweets_dropped.<reason>``;
    ``decontaminated.<source>`` for a collision.
    """
    record = records[0] if len(records) == 1 else merge_records(records)
    node = make_node(
        record, deleted=deleted, held_out=False, profile=profile, min_chars=min_chars, langs=langs
    )
    keys = ["tweets_distinct"]
    if node.reason is None and decontaminator is not None:
        source = decontaminator.collides_with(node.text or "")
        if source is not None:
            node = node._replace(text=None, reason=DropReason.TWEET_CONTAMINATED)
            keys.append(f"decontaminated.{source}")
    keys.append("tweets_eligible" if node.reason is None else f"tweets_dropped.{node.reason}")
    return node, keys


@dataclass
class RootResult:
    """Pairs chosen for one root, and what became of every candidate child."""

    pairs: list[dict[str, Any]]
    candidates: Counter[str]
    dropped: Counter[tuple[str, DropReason]]

    def count_items(self) -> list[tuple[str, int]]:
        """``pairs.<dataset>.candidates`` and ``pairs.<dataset>.dropped.<reason>`` counts."""
        items = [(f"pairs.{d}.candidates", n) for d, n in self.candidates.items()]
        items += [(f"pairs.{d}.dropped.{r}", n) for (d, r), n in self.dropped.items()]
        return items


def pair_lang(a: str | None, b: str | None) -> str:
    """The pair's language: the shared one, or ``"a-b"`` (sorted) when the sides differ."""
    if a == b:
        return a or "und"
    return "-".join(sorted((a or "und", b or "und")))


def pair_row(dataset: str, root_id: int, anchor: Node, positive: Node) -> dict[str, Any]:
    """A row of ``schemas/pair.v1``."""
    return {
        "anchor": anchor.text,
        "positive": positive.text,
        "anchor_id": anchor.id,
        "positive_id": positive.id,
        "root_id": root_id,
        "dataset": dataset,
        "lang": pair_lang(anchor.lang, positive.lang),
    }


def select_pairs(
    root_id: int,
    root: Node | None,
    quotes: Sequence[Node],
    replies: Sequence[Node],
    *,
    seed: int,
    datasets: Collection[str] = ("qt", "rp", "coqt", "corp"),
) -> RootResult:
    """Choose at most one pair per dataset for one root.

    Args:
        root_id: id of the quoted / replied-to tweet.
        root: its node, or ``None`` when the root is not in the input.
        quotes: nodes of the tweets quoting it.
        replies: nodes of the tweets replying to it.
        seed: seed of the hashed choices.
        datasets: which datasets to build.
    """
    result = RootResult([], Counter(), Counter())
    children = {"quote": quotes, "reply": replies}
    for dataset in datasets:
        kids = children[DIRECT.get(dataset) or CO[dataset]]
        if not kids:
            continue
        result.candidates[dataset] += len(kids)
        if dataset in DIRECT:
            _select_direct(dataset, root_id, root, kids, seed, result)
        else:
            _select_co(dataset, root_id, kids, seed, result)
    return result


def _drop(result: RootResult, dataset: str, reason: DropReason, n: int) -> None:
    if n:
        result.dropped[dataset, reason] += n


def _by_hash(nodes: list[Node], seed: int, dataset: str, root_id: int) -> list[Node]:
    return sorted(nodes, key=lambda n: (seeded_hash(seed, dataset, root_id, n.id), n.id))


def _split_eligible(dataset: str, kids: Sequence[Node], result: RootResult) -> list[Node]:
    eligible = [k for k in kids if k.reason is None]
    held = sum(k.reason is DropReason.TWEET_HELD_OUT for k in kids)
    _drop(result, dataset, DropReason.PAIR_CHILD_HELD_OUT, held)
    _drop(result, dataset, DropReason.PAIR_CHILD_INELIGIBLE, len(kids) - len(eligible) - held)
    return eligible


def _select_direct(
    dataset: str,
    root_id: int,
    root: Node | None,
    kids: Sequence[Node],
    seed: int,
    result: RootResult,
) -> None:
    if root is None:
        _drop(result, dataset, DropReason.PAIR_PARENT_MISSING, len(kids))
        return
    if root.reason is not None:
        held = root.reason is DropReason.TWEET_HELD_OUT
        reason = DropReason.PAIR_PARENT_HELD_OUT if held else DropReason.PAIR_PARENT_INELIGIBLE
        _drop(result, dataset, reason, len(kids))
        return
    eligible = _split_eligible(dataset, kids, result)
    distinct = [k for k in eligible if k.text != root.text]
    _drop(result, dataset, DropReason.PAIR_IDENTICAL_SIDES, len(eligible) - len(distinct))
    if not distinct:
        return
    chosen, *rest = _by_hash(distinct, seed, dataset, root_id)
    result.pairs.append(pair_row(dataset, root_id, root, chosen))
    _drop(result, dataset, DropReason.PAIR_NOT_CHOSEN_FOR_ROOT, len(rest))


def _select_co(
    dataset: str, root_id: int, kids: Sequence[Node], seed: int, result: RootResult
) -> None:
    eligible = _split_eligible(dataset, kids, result)
    if not eligible:
        return
    if len(eligible) == 1:
        _drop(result, dataset, DropReason.PAIR_SINGLE_CHILD, 1)
        return
    first, *rest = _by_hash(eligible, seed, dataset, root_id)
    second = next((k for k in rest if k.text != first.text), None)
    if second is None:
        _drop(result, dataset, DropReason.PAIR_IDENTICAL_SIDES, len(eligible))
        return
    result.pairs.append(pair_row(dataset, root_id, first, second))
    _drop(result, dataset, DropReason.PAIR_NOT_CHOSEN_FOR_ROOT, len(eligible) - 2)


HeldOut = tuple[frozenset[int], frozenset[int]]
"""Tweet ids and cleaned-text hashes (:func:`text_hash`) that a benchmark uses."""

Conversation = tuple[int, Node | None, list[Node], list[Node]]
"""(root id, root node or ``None``, quotes sorted by id, replies sorted by id)."""


def pair_conversation(conversation: Conversation, held: HeldOut, *, seed: int) -> RootResult:
    """The pairs of one conversation once the benchmarks' tweets are held out.

    Tweets a benchmark uses (by id or cleaned text) are marked held out first, so a root
    that loses them can still give a pair from its other children.
    """
    root_id, root, quotes, replies = conversation
    ids, texts = held
    if ids:
        root = hold_out(root, ids, texts) if root is not None else None
        quotes = [hold_out(n, ids, texts) for n in quotes]
        replies = [hold_out(n, ids, texts) for n in replies]
    return select_pairs(root_id, root, quotes, replies, seed=seed)


def sample_key(seed: int, row: Mapping[str, Any]) -> tuple[int, int, int]:
    """Order of a pair in ``--pairs-per-dataset`` sampling: the smallest keys are kept."""
    h = seeded_hash(seed, "sample", row["dataset"], row["anchor_id"], row["positive_id"])
    return h, row["anchor_id"], row["positive_id"]


def keep_first_duplicate(
    seed: int, rows: Sequence[Mapping[str, Any]]
) -> tuple[Mapping[str, Any], int]:
    """Of pairs with identical (anchor, positive) texts, the one to keep and how many go.

    The kept pair is the one whose root has the smallest seeded hash, so the choice does not
    depend on arrival order.
    """
    ordered = sorted(rows, key=lambda r: duplicate_rank(seed, r))
    return ordered[0], len(ordered) - 1


def duplicate_rank(seed: int, row: Mapping[str, Any]) -> tuple[int, int]:
    """Order of a pair among pairs with identical texts: the smallest is kept."""
    return seeded_hash(seed, "dup", row["root_id"]), row["root_id"]
