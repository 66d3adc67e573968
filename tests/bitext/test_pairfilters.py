"""Pure pair filters: reason codes, paper defaults, validated configuration."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.pairing.filters import (
    BitextFilterConfig,
    FilterReason,
    LanguageFilterConfig,
    ParaphraseFilterConfig,
    check_bitext_length,
    check_language,
    check_pair_languages,
    check_paraphrase,
    check_paraphrase_length,
    check_paraphrase_score,
    check_trigram_overlap,
    pair_key,
    token_count,
)
from corpusforge.text.langid import LanguageIdentifier

WORDS = "one two three four five six seven eight nine ten"


def _words(n: int) -> str:
    return " ".join(["w"] * n)


def test_reason_codes_are_prefixed_snake_case() -> None:
    stages = {"bitext", "paraphrase", "lang", "dedup", "cap"}
    for reason in FilterReason:
        assert reason.value.split("_", 1)[0] in stages
        assert reason.value == reason.value.lower()


def test_token_count_is_whitespace_tokens() -> None:
    assert token_count("  a\tb\nc  ") == 3
    assert token_count("") == 0


@pytest.mark.parametrize(
    ("src", "trg", "reason"),
    [
        ("Hallo Welt !", "Hello world !", None),
        ("Hallo Welt", "Hello world !", FilterReason.BITEXT_TOO_SHORT),
        ("Hallo Welt !", "Hi", FilterReason.BITEXT_TOO_SHORT),
        (_words(100), _words(40), None),
        (_words(3), _words(101), FilterReason.BITEXT_TOO_LONG),
        ("", _words(200), FilterReason.BITEXT_TOO_SHORT),
    ],
)
def test_bitext_length(src: str, trg: str, reason: FilterReason | None) -> None:
    assert check_bitext_length(src, trg) is reason


def test_bitext_length_custom_limits() -> None:
    config = BitextFilterConfig(min_tokens=1, max_tokens=2)
    assert check_bitext_length("a", "b c", config) is None
    assert check_bitext_length("a", "b c d", config) is FilterReason.BITEXT_TOO_LONG


def test_length_ratio_stops_a_pair_shifted_by_one_line() -> None:
    # the example of a pair from a Multi30k file missing German line 51
    english = "Two little black boys are playing in the grass in front of a big house."
    shifted = "Ampeln schalten auf Grün."
    assert check_bitext_length(english, shifted) is FilterReason.BITEXT_LENGTH_RATIO
    assert check_bitext_length(_words(3), _words(8)) is None  # 8/3 < 3 is kept
    assert check_bitext_length(_words(3), _words(9)) is FilterReason.BITEXT_LENGTH_RATIO
    no_limit = BitextFilterConfig(max_length_ratio=None)
    assert check_bitext_length(english, shifted, no_limit) is None
    # too short or too long is reported first
    assert check_bitext_length("Ja.", _words(20)) is FilterReason.BITEXT_TOO_SHORT


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        (_words(5), _words(5), None),
        (_words(4), _words(5), FilterReason.PARAPHRASE_TOO_SHORT),  # mean 4.5
        (_words(3), _words(7), None),  # mean 5
        (_words(40), _words(40), None),
        (_words(40), _words(41), FilterReason.PARAPHRASE_TOO_LONG),  # mean 40.5
    ],
)
def test_paraphrase_mean_length(a: str, b: str, reason: FilterReason | None) -> None:
    assert check_paraphrase_length(a, b) is reason


@pytest.mark.parametrize(
    ("score", "reason"),
    [
        (0.4, None),
        (1.0, None),
        (0.39999, FilterReason.PARAPHRASE_SCORE_TOO_LOW),
        (1.00001, FilterReason.PARAPHRASE_SCORE_TOO_HIGH),
        (math.nan, FilterReason.PARAPHRASE_SCORE_TOO_LOW),
    ],
)
def test_paraphrase_score(score: float, reason: FilterReason | None) -> None:
    assert check_paraphrase_score(score) is reason


def test_trigram_overlap_limit() -> None:
    assert check_trigram_overlap(0.7) is None
    assert check_trigram_overlap(0.71) is FilterReason.PARAPHRASE_OVERLAP_TOO_HIGH


def test_check_paraphrase_runs_length_score_then_overlap() -> None:
    ref = "the cat sat on the mat all day long"
    assert check_paraphrase(ref, "a cat was sitting on a rug for the whole day", 0.8) is None
    assert check_paraphrase(ref, ref, 0.9) is FilterReason.PARAPHRASE_OVERLAP_TOO_HIGH
    assert check_paraphrase(ref, ref, 0.1) is FilterReason.PARAPHRASE_SCORE_TOO_LOW
    assert check_paraphrase("too short", "yes", 0.9) is FilterReason.PARAPHRASE_TOO_SHORT
    # a precomputed overlap is used as given
    assert check_paraphrase(ref, ref, 0.9, overlap=0.0) is None


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: BitextFilterConfig(min_tokens=0), "--min-tokens.*0"),
        (lambda: BitextFilterConfig(min_tokens=5, max_tokens=4), "--max-tokens.*4"),
        (lambda: BitextFilterConfig(min_tokens=2.5), "--min-tokens.*2.5"),  # type: ignore[arg-type]
        (lambda: BitextFilterConfig(max_length_ratio=1.0), "--max-length-ratio.*1.0"),
        (lambda: BitextFilterConfig(max_length_ratio=math.nan), "--max-length-ratio.*nan"),
        (lambda: ParaphraseFilterConfig(min_score=0.9, max_score=0.5), "--max-score.*0.5"),
        (lambda: ParaphraseFilterConfig(max_trigram_overlap=1.5), "--max-overlap.*1.5"),
        (lambda: ParaphraseFilterConfig(min_mean_tokens=-1), "--min-mean-tokens.*-1"),
        (lambda: ParaphraseFilterConfig(max_mean_tokens=math.inf), "--max-mean-tokens.*inf"),
        (lambda: ParaphraseFilterConfig(min_score=math.nan), "--min-score.*nan"),
        (lambda: LanguageFilterConfig(min_confidence=2.0), "--min-lid-confidence.*2.0"),
    ],
)
def test_configs_reject_bad_values_by_name(make: object, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        make()  # type: ignore[operator]


def test_defaults_are_the_papers() -> None:
    assert (BitextFilterConfig().min_tokens, BitextFilterConfig().max_tokens) == (3, 100)
    assert BitextFilterConfig().max_length_ratio == 3.0  # OpusFilter's LengthRatioFilter
    p = ParaphraseFilterConfig()
    assert (p.min_mean_tokens, p.max_mean_tokens, p.min_score, p.max_score) == (5, 40, 0.4, 1.0)
    assert p.max_trigram_overlap == 0.7


class FakeIdentifier:
    def __init__(self, answer: tuple[str, float]) -> None:
        self.answer = answer

    def predict(self, text: str) -> tuple[str, float]:
        return self.answer


def test_check_language_reasons() -> None:
    assert check_language("x", "deu", FakeIdentifier(("de", 0.9))) is None
    assert check_language("x", "en", FakeIdentifier(("de", 0.9))) is FilterReason.LANG_MISMATCH
    strict = LanguageFilterConfig(min_confidence=0.95)
    assert (
        check_language("x", "de", FakeIdentifier(("de", 0.9)), strict)
        is FilterReason.LANG_LOW_CONFIDENCE
    )


def test_check_pair_languages_on_real_tatoeba(realdata: Path) -> None:
    folder = realdata / "tatoeba-laser-v1"
    tur = (folder / "tatoeba.tur-eng.tur").read_text(encoding="utf-8").split("\n")[0]
    eng = (folder / "tatoeba.tur-eng.eng").read_text(encoding="utf-8").split("\n")[0]
    ident = LanguageIdentifier.load()
    assert check_pair_languages(tur, "tur", eng, "eng", ident) is None
    assert check_pair_languages(eng, "tur", tur, "eng", ident) is FilterReason.LANG_MISMATCH


def test_pair_key_ignores_case_and_spacing_not_order() -> None:
    assert pair_key("Hello  World", "Hallo Welt") == pair_key("hello world", " HALLO welt ")
    assert pair_key("a", "b") != pair_key("b", "a")
    assert pair_key("a", "b", symmetric=True) == pair_key("b", "a", symmetric=True)
    assert pair_key("a b", "c") != pair_key("a", "b c")
    assert len(pair_key("a", "b")) == 32


@given(st.text(), st.text())
def test_pair_key_is_stable_under_renormalisation(a: str, b: str) -> None:
    def renormalised(text: str) -> str:
        return "\t " + " ".join(text.split()).casefold().replace(" ", "\n ") + " "

    assert pair_key(a, b) == pair_key(renormalised(a), renormalised(b))
