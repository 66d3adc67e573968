"""The bitext rule by column: a block gives each pair what a block of that pair alone gives,
the local engine's table equals the one made from the candidates, word counts by column."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from corpusforge.local import bitext_filter
from corpusforge.pairing.candidates import Candidate, Dropped, PairRules, bitext_candidate
from corpusforge.pairing.columns import RAW_FIELDS, RawPairs, bitext_block
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    FilterReason,
    LanguageFilterConfig,
    bitext_length_reasons,
)
from corpusforge.schemas import BITEXT
from corpusforge.sources.opus.records import RawPair
from corpusforge.text.langid import LanguageIdentifier
from corpusforge.text.lengths import word_count, word_counts

SIDES = [
    ("Ich habe heute keine Zeit für dich.", "I have no time for you today.", "de", "en"),
    ("I have no time for you today.", "Je n'ai pas le temps aujourd'hui.", "en", "fr"),
    ("Hallo", "Hello there my friend", "de", "en"),  # too short
    ("Das ist " + "sehr " * 120, "This is " + "very " * 120, "de", "en"),  # too long
    (
        "Ja, ich komme morgen früh.",
        "Yes, I will come tomorrow and stay all day long.",
        "de",
        "en",
    ),
    ("This is an English sentence here.", "This is also an English sentence.", "de", "en"),
    ("Ich gehe jetzt nach Hause.", "Ich gehe jetzt nach Hause.", "de", "en"),  # positive German
    (
        "私は学生です。毎日学校へ行きます。",
        "I am a student and go to school.",
        "ja",
        "en",
    ),
    ("„Komm  schnell\u2028her!“, rief sie laut.", '"Come here quickly!", she called.', "de", "en"),
    ("Ich habe heute keine Zeit für dich.", "I have no time for you today.", "de", "en"),
]


def _pairs() -> list[RawPair]:
    return [
        RawPair(src, trg, sl, tl, "Test", "test.de-en.de", None if i % 2 else "m", i + 1, i % 3)
        for i, (src, trg, sl, tl) in enumerate(SIDES)
    ]


RULES = [
    PairRules(LanguageFilterConfig(), BitextFilterConfig()),
    PairRules(LanguageFilterConfig(0.5), BitextFilterConfig(max_word_chars=8), lowercase=True),
]


@pytest.mark.parametrize("rules", RULES)
def test_a_block_gives_each_pair_what_it_gives_alone(rules: PairRules) -> None:
    lid = LanguageIdentifier.load()
    pairs = _pairs()
    together = bitext_block(RawPairs.of(pairs), rules, lid).results()
    alone = [bitext_candidate(pair, rules, lid) for pair in pairs]
    assert together == alone
    reasons = {r.reason for r in together if isinstance(r, Dropped)}
    assert FilterReason.BITEXT_TOO_SHORT in reasons
    assert FilterReason.LANG_MISMATCH in reasons
    kept = [r for r in together if isinstance(r, Candidate)]
    assert kept
    if rules is RULES[0]:
        assert {c.group for c in kept} == {"en-de", "en-fr", "en-ja"}


def test_the_engine_table_is_the_candidates_table() -> None:
    rules = RULES[0]
    job = bitext_filter.PairJob("bitext", rules, None, 7, 5, BITEXT, 100)
    bitext_filter._start_worker(job)
    try:
        table, counts, _ = bitext_filter._filter_batch([RAW_FIELDS(p) for p in _pairs()])
    finally:
        bitext_filter._worker.clear()
    results = [bitext_candidate(p, rules, LanguageIdentifier.load()) for p in _pairs()]
    kept = [r for r in results if isinstance(r, Candidate)]
    assert table.equals(bitext_filter._table(job, bitext_filter._columns(job, kept)))
    expected: Counter[tuple[str, ...]] = Counter()
    for r in results:
        expected[("cand", r.dataset, r.group)] += 1
        if isinstance(r, Dropped):
            expected[("drop", r.dataset, r.group, str(r.reason))] += 1
    assert counts == expected


class CountingIdentifier:
    """Answers German for every text, counting the texts asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def predict(self, text: str) -> tuple[str, float]:
        self.asked.append(text)
        return ("de", 0.9)

    def predict_many(self, texts: list[str]) -> list[tuple[str, float]]:
        return [self.predict(text) for text in texts]

    def predict_columns(
        self, texts: list[str], printable: list[bool] | None = None
    ) -> tuple[list[str], list[float]]:
        answers = self.predict_many(texts)
        return [lang for lang, _ in answers], [prob for _, prob in answers]


def test_language_id_stops_at_the_first_side_that_fails() -> None:
    lid = CountingIdentifier()
    pair = RawPair("Ich habe heute Zeit.", "I have time today.", "de", "en", "T", "f", None, 1)
    (result,) = bitext_block(RawPairs.of([pair]), RULES[0], lid).results()  # type: ignore[arg-type]
    assert isinstance(result, Dropped) and result.reason is FilterReason.LANG_MISMATCH
    assert lid.asked == ["I have time today."]  # the anchor only: its positive is never asked


TEXT = st.text(alphabet=st.sampled_from(list("ab c\t\n\u3000我们試かなカナไทย„“’1 ")), max_size=30)


@given(st.lists(TEXT, max_size=20))
def test_word_counts_are_word_count_of_each(texts: list[str]) -> None:
    assert word_counts(texts) == [word_count(t) for t in texts]


def _length_reason(a: int, p: int, config: BitextFilterConfig) -> FilterReason | None:
    """The length rule as documented, a pair at a time (what it was before columns)."""
    if min(a, p) < config.min_tokens or any(
        limit is not None and n < limit
        for n, limit in ((a, config.min_anchor_tokens), (p, config.min_positive_tokens))
    ):
        return FilterReason.BITEXT_TOO_SHORT
    if max(a, p) > config.max_tokens or any(
        limit is not None and n > limit
        for n, limit in ((a, config.max_anchor_tokens), (p, config.max_positive_tokens))
    ):
        return FilterReason.BITEXT_TOO_LONG
    ratio = config.max_length_ratio
    if ratio is not None and max(a, p) >= ratio * min(a, p):
        return FilterReason.BITEXT_LENGTH_RATIO
    return None


LIMIT = st.none() | st.integers(1, 12)


@given(
    st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14)), max_size=30),
    st.none() | st.sampled_from([1.5, 2, 3.0, 2.999]),
    LIMIT,
    LIMIT,
    LIMIT,
    LIMIT,
)
@example([(2, 4), (3, 9), (4, 7), (1, 5), (11, 5)], 2, None, None, None, None)
@example([(3, 9), (5, 4), (4, 5), (6, 3)], 3.0, 4, 8, None, 4)
def test_length_reasons_by_column_are_the_rule(
    counts: list[tuple[int, int]],
    ratio: float | None,
    min_anchor: int | None,
    max_anchor: int | None,
    min_positive: int | None,
    max_positive: int | None,
) -> None:
    if min_anchor and max_anchor and max_anchor < min_anchor:
        min_anchor, max_anchor = max_anchor, min_anchor
    if min_positive and max_positive and max_positive < min_positive:
        min_positive, max_positive = max_positive, min_positive
    config = BitextFilterConfig(
        2,
        10,
        ratio,
        min_anchor_tokens=min_anchor,
        max_anchor_tokens=max_anchor,
        min_positive_tokens=min_positive,
        max_positive_tokens=max_positive,
    )
    anchors, positives = [a for a, _ in counts], [p for _, p in counts]
    expected = [_length_reason(a, p, config) for a, p in counts]
    assert bitext_length_reasons(anchors, positives, config) == expected
