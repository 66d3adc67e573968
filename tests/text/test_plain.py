"""A text's shape asked once (issue 38): each fast path that takes it gives what the slow rule
gives, over texts with quotes, backslashes, unprintables, surrogates, no-break spaces, tabs,
line breaks, CJK and nothing at all."""

from __future__ import annotations

import math
from itertools import repeat
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from corpusforge.keys import _dedup_text, pair_key, pair_keys
from corpusforge.pairing.candidates import LANGUAGE_REASONS, PairRules
from corpusforge.pairing.columns import RawPairs, _language_reasons, bitext_block
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    LanguageFilterConfig,
    check_bitext_length,
    language_reason,
)
from corpusforge.sources.opus.records import RawPair
from corpusforge.text.clean import PROFILES, is_plain, prepare_text, prepare_texts
from corpusforge.text.langid import LanguageIdentifier, _label_code
from corpusforge.text.lengths import word_count, word_counts

_PIECES = [
    "a", "Ab", "ß", "İ", "ﬁ", "我们", "ไทย", "カナ", "'", '"', "\\", " ", "  ", "\t", "\n",
    "\r", "\x0b", "\x85", "\u2028", "\u00a0", "\u3000", "\x00", "\u200b", "\ud800", "\U0001f525",
]  # fmt: skip
# every property runs without Hypothesis' deadline: a first example pays for imports and
# regex compiles, and the machine may be loaded
TEXT = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)
TEXTS = st.lists(TEXT, max_size=12)
TRICKY = ["", " ", "a  b", " a", "a ", "it's", 'say "hi"', "a\\b", "a\u00a0b", "\ud800", "x\ty"]


def _plain_by_definition(text: str) -> bool:
    return text.isprintable() and " ".join(text.split()) == text


@settings(deadline=None)
@given(TEXT)
@example("")
@example(" ")
@example("a\u00a0b")
def test_plain_is_printable_and_its_own_split_and_join(text: str) -> None:
    assert is_plain(text) == _plain_by_definition(text)


@settings(deadline=None)
@given(TEXTS)
@example(TRICKY)
def test_prepared_texts_are_prepare_text_of_each_and_their_shape(texts: list[str]) -> None:
    for profile, lowercase in ((None, False), (None, True), (PROFILES["paper"], False)):
        prepared, plain = prepare_texts(texts, profile, lowercase)
        assert prepared == [prepare_text(t, profile, lowercase) for t in texts]
        assert plain == [_plain_by_definition(t) for t in prepared]


@settings(deadline=None)
@given(TEXTS, TEXTS)
@example(TRICKY, TRICKY[::-1])
def test_pair_keys_are_pair_key_of_each_pair(firsts: list[str], seconds: list[str]) -> None:
    n = min(len(firsts), len(seconds))
    firsts, seconds = firsts[:n], seconds[:n]
    want = [pair_key(a, b) for a, b in zip(firsts, seconds, strict=True)]
    assert pair_keys(firsts, seconds) == want
    shapes = [_plain_by_definition(t) for t in firsts], [_plain_by_definition(t) for t in seconds]
    assert pair_keys(firsts, seconds, *shapes) == want
    assert pair_keys(firsts, seconds, [False] * n, [False] * n) == want  # all asked


def test_a_plain_text_is_only_case_folded() -> None:
    assert _dedup_text("Straße ﬁne") == "strasse fine"
    assert _dedup_text(" A\u00a0 B\t") == "a b"


@settings(deadline=None)
@given(TEXTS)
@example(TRICKY)
def test_word_counts_of_plain_texts_are_word_count_of_each(texts: list[str]) -> None:
    want = [word_count(t) for t in texts]
    assert word_counts(texts) == want
    assert word_counts(texts, [_plain_by_definition(t) for t in texts]) == want
    assert word_counts(texts, [False] * len(texts)) == want


def _predict_many_as_it_was(predict, texts):  # type: ignore[no-untyped-def]
    """The per-text loop ``predict_many`` ran before the block path: the slow rule."""
    answers = []
    for text in texts:
        if text.isprintable():
            line = text
            if not line or line.isspace():
                answers.append(("und", 0.0))
                continue
        else:
            line = " ".join(text.split())
            if not line:
                answers.append(("und", 0.0))
                continue
        predictions = predict(line + "\n", 1, 0.0, "replace")
        if not predictions:
            answers.append(("und", 0.0))
            continue
        probability, label = predictions[0]
        answers.append((_label_code(label), min(probability, 1.0)))
    return answers


def _stub(asked: list[str]):  # type: ignore[no-untyped-def]
    """A binding whose answer depends on the line: none, above 1, NaN, or by its length."""

    def predict(line: str, k: int, threshold: float, errors: str) -> list[tuple[float, str]]:
        asked.append(line)
        if "ß" in line:
            return []
        if "İ" in line:
            return [(1.0000002, "__label__tr")]
        if "'" in line:
            return [(math.nan, "__label__en")]
        return [(len(line) / 100, "__label__deu" if len(line) % 2 else "__label__zho")]

    return predict


@settings(deadline=None)
@given(TEXTS)
@example(TRICKY)
@example(["Hund", "Katze"])  # no blank: the answers mapped in one go
@example(["Hund", "Straße"])  # one without an answer
def test_predict_columns_is_the_per_text_rule(texts: list[str]) -> None:
    asked_then: list[str] = []
    want = _predict_many_as_it_was(_stub(asked_then), texts)
    for printable in (None, [t.isprintable() for t in texts], [False] * len(texts)):
        asked: list[str] = []
        ident = LanguageIdentifier(Path("stub.ftz"), None, _stub(asked))
        languages, probabilities = ident.predict_columns(texts, printable)
        # NaN is not NaN: compare the reprs, which tell each float
        assert repr(list(zip(languages, probabilities, strict=True))) == repr(want)
        assert asked == asked_then  # the same lines, blanks never asked
        assert repr(ident.predict_many(texts)) == repr(want)


PREDICTED = st.sampled_from(["de", "en", "zh", "yue", "wuu", "und"])
LABELLED = st.sampled_from(["de", "deu", "en", "eng", "zh", "zho", "yue"])
PROBABILITY = st.floats(0.0, 1.0) | st.just(math.nan)


@settings(deadline=None)
@given(
    st.lists(st.tuples(PREDICTED, PROBABILITY, LABELLED), max_size=12),
    st.sampled_from([0.0, 0.3, 0.5, 1.0]),
)
def test_language_reasons_are_language_reason_of_each(
    sides: list[tuple[str, float, str]], threshold: float
) -> None:
    config = LanguageFilterConfig(threshold)
    want = [language_reason((code, p), lang, config) for code, p, lang in sides]
    codes, probabilities, langs = (
        (list(c) for c in zip(*sides, strict=True)) if sides else ([], [], [])
    )
    assert _language_reasons(codes, probabilities, langs, config) == want


class _Labelled:
    """Answers each text's labelled language, surely; reads the lines it is given."""

    def __init__(self, langs: dict[str, str]) -> None:
        self.langs = langs

    def predict_columns(
        self, texts: list[str], printable: list[bool] | None = None
    ) -> tuple[list[str], list[float]]:
        for text, known in zip(texts, printable or repeat(False), strict=False):
            assert text.isprintable() or not known  # a text said printable is
        return [self.langs.get(t, "en") for t in texts], [0.9] * len(texts)


@settings(deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, st.booleans()), max_size=12))
@example(
    [("Ich habe  heute Zeit.", "I have\u00a0time today.", False), ("Er sagt: 'nein'", "a\\b", True)]
)
def test_a_block_of_tricky_texts_keeps_the_slow_rules(sides: list[tuple[str, str, bool]]) -> None:
    """German-English pairs, some read English first: the block's texts, length reasons,
    ratios and dedup keys are those of the per-text rules."""
    rules = PairRules(LanguageFilterConfig(), BitextFilterConfig(min_tokens=1))
    raws = [
        RawPair(e, d, "en", "de", "T", "f", None, i + 1)
        if english
        else RawPair(d, e, "de", "en", "T", "f", None, i + 1)
        for i, (d, e, english) in enumerate(sides)
    ]
    anchors = [prepare_text(e, None, False) for _, e, _ in sides]
    positives = [prepare_text(d, None, False) for d, _, _ in sides]
    german = dict.fromkeys(positives, "de")
    block = bitext_block(RawPairs.of(raws), rules, _Labelled(german))  # type: ignore[arg-type]
    assert (block.anchor, block.positive) == (anchors, positives)
    for anchor, positive, reason in zip(anchors, positives, block.reasons, strict=True):
        length = check_bitext_length(anchor, positive, rules.lengths or BitextFilterConfig())
        assert reason is length or (length is None and reason in LANGUAGE_REASONS)
    kept = [i for i, reason in enumerate(block.reasons) if reason is None]
    assert block.kept == kept
    counts = [(word_count(anchors[i]), word_count(positives[i])) for i in kept]
    assert block.length_ratio == [max(c) / min(c) for c in counts]
    assert block.dedup == [pair_key(anchors[i], positives[i]) for i in kept]
