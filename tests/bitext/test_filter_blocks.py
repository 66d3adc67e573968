"""The Beam filters run their rule over blocks of pairs: whatever the block, every pair's
output, reject, count and language-id counter is what the rule gives it alone; a ParaNMT
block gives each paraphrase what it gives alone, and asks fastText no more."""

from __future__ import annotations

from collections import Counter
from typing import Any

import apache_beam as beam
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from corpusforge.pairing.candidates import (
    Candidate,
    Dropped,
    PairRules,
    bitext_candidate,
    bitext_candidates,
    checked_by_language,
    paraphrase_candidate,
    paraphrase_candidates,
)
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    FilterReason,
    LanguageFilterConfig,
    ParaphraseFilterConfig,
)
from corpusforge.sources.opus.records import RawPair
from corpusforge.sources.paranmt.parse import RawParaphrase
from corpusforge.text.langid import LanguageIdentifier
from corpusforge.transforms.bitext.common import BLOCK, FilterFn, Rejected
from corpusforge.transforms.tags import COUNTS, REJECTED

SIDES = [
    ("Ich habe heute keine Zeit für dich.", "I have no time for you today.", "de", "en"),
    ("I have no time for you today.", "Je n'ai pas le temps aujourd'hui.", "en", "fr"),
    ("Hallo", "Hello there my friend", "de", "en"),  # too short
    ("Ja, ich komme morgen früh.", "Yes, I will come tomorrow and stay all day.", "de", "en"),
    ("This is an English sentence here.", "This is also an English sentence.", "de", "en"),
    ("Ich gehe jetzt nach Hause.", "Ich gehe jetzt nach Hause.", "de", "en"),  # positive German
    ("Meine Schwester wohnt in einer großen Stadt.", "My sister lives in a big city.", "de", "en"),
    ("Ich habe heute keine Zeit für dich.", "I have no time for you today.", "de", "en"),
    ("Der Zug kommt heute wieder zu spät an.", "The train is late again today.", "de", "en"),
    ("Wir gehen morgen zusammen ins Kino.", "We are going to the cinema tomorrow.", "de", "en"),
]
RULES = PairRules(LanguageFilterConfig(), BitextFilterConfig())
KEEP_REJECTED = False


def _pairs() -> list[RawPair]:
    return [
        RawPair(src, trg, sl, tl, "Test", "test.de-en.de", None, i + 1)
        for i, (src, trg, sl, tl) in enumerate(SIDES)
    ]


def _key(candidate: Candidate) -> tuple[str, str]:
    return candidate.group, candidate.dedup


def _expected() -> tuple[list[Any], list[Rejected], list[Any], int]:
    """What the rule gives each pair alone: keyed candidates, rejects, counts, pairs that
    reached language id."""
    alone = [bitext_candidate(pair, RULES, LanguageIdentifier.load()) for pair in _pairs()]
    kept = [(_key(r), r) for r in alone if isinstance(r, Candidate)]
    rejected = [
        Rejected(str(r.reason), r.dataset, r.group, r.key) for r in alone if isinstance(r, Dropped)
    ]
    counts = Counter(("cand", r.dataset, r.group) for r in alone)
    return kept, rejected, sorted(counts.items()), checked_by_language(alone)


@pytest.mark.parametrize("block", [1, 3, BLOCK])
def test_the_filter_gives_what_each_pair_gives_alone_whatever_its_block(block: int) -> None:
    kept, rejected, counts, checked = _expected()
    assert kept and len(rejected) >= 3 and checked < len(SIDES)  # the cheap checks drop some
    fn = FilterFn(bitext_candidates, RULES, None, _key, KEEP_REJECTED, block)
    p = TestPipeline(runner="FnApiRunner")
    out = (
        p | beam.Create(_pairs()) | beam.ParDo(fn).with_outputs(REJECTED, COUNTS, main="candidates")
    )
    assert_that(out.candidates, equal_to(kept), label="candidates")
    assert_that(out[REJECTED], equal_to(rejected), label="rejected")
    summed = out[COUNTS] | beam.CombinePerKey(sum)
    assert_that(summed, equal_to(counts), label="counts")
    result = p.run()
    result.wait_until_finish()
    query = result.metrics().query(MetricsFilter().with_name("pairs_checked"))
    assert sum(c.committed for c in query["counters"]) == checked


REF = "i do n't think we should go to the party tonight ."
PARA = "i believe it 's better if we stay home this evening ."
PARAPHRASES = [
    (REF, PARA, 0.8),
    ("hi .", "hello .", 0.8),  # too short
    (REF, PARA, 0.1),  # score too low
    (REF, REF.replace("tonight", "today"), 0.8),  # overlap too high
    ("je ne pense pas que nous devrions aller à la fête ce soir .", PARA, 0.8),  # anchor
    (REF, "ich glaube , wir sollten heute abend lieber zu hause bleiben .", 0.8),  # positive
    (PARA, REF, 0.6),
]


def _paraphrases() -> list[RawParaphrase]:
    return [
        RawParaphrase(ref, para, score, "paranmt", "p.txt", None, i + 1)
        for i, (ref, para, score) in enumerate(PARAPHRASES)
    ]


PARAPHRASE_RULES = [
    PairRules(LanguageFilterConfig(), paraphrase=ParaphraseFilterConfig()),
    PairRules(LanguageFilterConfig(0.9), paraphrase=ParaphraseFilterConfig(), lowercase=True),
]


@pytest.mark.parametrize("rules", PARAPHRASE_RULES)
def test_a_paraphrase_block_gives_each_what_it_gives_alone(rules: PairRules) -> None:
    lid = LanguageIdentifier.load()
    raws = _paraphrases()
    together = paraphrase_candidates(raws, rules, lid)
    assert together == [paraphrase_candidate(raw, rules, lid) for raw in raws]
    reasons = [r.reason if isinstance(r, Dropped) else None for r in together]
    assert reasons[:6] == [
        None,
        FilterReason.PARAPHRASE_TOO_SHORT,
        FilterReason.PARAPHRASE_SCORE_TOO_LOW,
        FilterReason.PARAPHRASE_OVERLAP_TOO_HIGH,
        FilterReason.LANG_MISMATCH,
        FilterReason.LANG_MISMATCH,
    ]
    assert checked_by_language(together) == 4  # the first, the last, the two in French and German


class EnglishAnchorsOnly:
    """Answers English for the texts it is told, German for the others; counts the texts
    asked about."""

    def __init__(self, english: set[str]) -> None:
        self.english = english
        self.asked: list[str] = []

    def predict_many(self, texts: list[str]) -> list[tuple[str, float]]:
        self.asked += texts
        return [("en", 0.9) if t in self.english else ("de", 0.9) for t in texts]


def test_paraphrase_language_id_stops_at_the_first_side_that_fails() -> None:
    raws = [_paraphrases()[0], _paraphrases()[6]]
    lid = EnglishAnchorsOnly({REF})
    together = paraphrase_candidates(raws, PARAPHRASE_RULES[0], lid)  # type: ignore[arg-type]
    assert [r.reason for r in together if isinstance(r, Dropped)] == [
        FilterReason.LANG_MISMATCH,  # REF, then PARA: the positive fails
        FilterReason.LANG_MISMATCH,  # PARA: the anchor fails, its positive is never asked
    ]
    assert lid.asked == [REF, PARA, PARA]
