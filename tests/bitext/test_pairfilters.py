"""Pure pair filters: reason codes, paper defaults, validated configuration."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.config.flags import FlagError
from corpusforge.keys import pair_key
from corpusforge.pairing.filters import (
    NOISE_FILTERS,
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
    token_count,
)
from corpusforge.pairing.noise import NOISE_REASONS, check_bitext_noise, noise_value
from corpusforge.text.langid import LanguageIdentifier

WORDS = "one two three four five six seven eight nine ten"


def _words(n: int) -> str:
    return " ".join(["w"] * n)


def test_reason_codes_are_prefixed_snake_case() -> None:
    stages = {"bitext", "paraphrase", "lang", "decontam", "dedup", "cap"}
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


@given(st.text(), st.text(), st.booleans())
def test_pair_key_is_its_definition(a: str, b: str, symmetric: bool) -> None:
    # BLAKE2b-128 (person cf-pair-key) of each side, case-folded and whitespace-collapsed,
    # then a NUL: the key of every release's deduplication, whatever path computes it
    sides = [" ".join(text.split()).casefold() for text in (a, b)]
    digest = hashlib.blake2b(digest_size=16, person=b"cf-pair-key")
    for side in sorted(sides) if symmetric else sides:
        digest.update(side.encode("utf-8", "surrogatepass") + b"\x00")
    assert pair_key(a, b, symmetric=symmetric) == digest.hexdigest()


# --------------------------------------------------------------------------- noise filters


@given(st.text(), st.text(), st.sampled_from(["en", "de", "zh", "th", "xx"]))
def test_no_noise_filter_set_passes_every_pair(a: str, b: str, lang: str) -> None:
    # what lets the candidate rule skip the noise checks when PairRules.noise is false
    config = BitextFilterConfig()
    assert not config.noise_filters_on
    assert check_bitext_noise(a, b, "en", lang, config) is None


def test_per_side_word_limits_tighten_the_shared_ones() -> None:
    config = BitextFilterConfig(min_anchor_tokens=5, max_positive_tokens=6)
    assert check_bitext_length(_words(5), _words(6), config) is None
    assert check_bitext_length(_words(4), _words(6), config) is FilterReason.BITEXT_TOO_SHORT
    assert check_bitext_length(_words(6), _words(7), config) is FilterReason.BITEXT_TOO_LONG
    # the shared limits still hold for the side without its own
    assert check_bitext_length(_words(5), "Ja !", config) is FilterReason.BITEXT_TOO_SHORT
    wide = BitextFilterConfig(max_tokens=200, max_anchor_tokens=150, max_length_ratio=None)
    assert check_bitext_length(_words(150), _words(100), wide) is None
    assert check_bitext_length(_words(151), _words(100), wide) is FilterReason.BITEXT_TOO_LONG


@pytest.mark.parametrize(
    ("anchor", "positive", "config", "reason"),
    [
        ("Hello there.", "Hallo du.", BitextFilterConfig(min_anchor_chars=12), None),
        ("Hello you.", "Hallo du.", BitextFilterConfig(min_anchor_chars=12), "chars_too_short"),
        ("Hi, you.", "Hallo du.", BitextFilterConfig(min_positive_chars=10), "chars_too_short"),
        ("Hello there.", "Hallo du.", BitextFilterConfig(max_positive_chars=9), None),
        ("Hello there.", "Hallo ihr.", BitextFilterConfig(max_positive_chars=9), "chars_too_long"),
        ("Hello there.", "Hallo du.", BitextFilterConfig(max_anchor_chars=11), "chars_too_long"),
        # code points, not bytes: ü is one character
        ("Hello there.", "Grüß dich.", BitextFilterConfig(max_positive_chars=10), None),
    ],
)
def test_per_side_character_limits(
    anchor: str, positive: str, config: BitextFilterConfig, reason: str | None
) -> None:
    expected = None if reason is None else FilterReason(f"bitext_{reason}")
    assert check_bitext_noise(anchor, positive, "en", "de", config) is expected


def test_longest_word() -> None:
    config = BitextFilterConfig(max_word_chars=12)
    assert check_bitext_noise("A long sentence.", "Ein Bundesstaat.", "en", "de", config) is None
    url = "Go to http://example.com/a/b"
    assert check_bitext_noise(url, "Geh hin.", "en", "de", config) is (
        FilterReason.BITEXT_WORD_TOO_LONG
    )
    compound = "Arbeitnehmerorganisationen"  # 26 letters: a real German word, kept at 39
    assert check_bitext_noise("Unions.", compound, "en", "de", config) is (
        FilterReason.BITEXT_WORD_TOO_LONG
    )
    assert check_bitext_noise("Unions.", compound, "en", "de", BitextFilterConfig(39)) is None


@pytest.mark.parametrize(
    ("anchor", "reason"),
    [
        ("Click <b>here</b> now.", FilterReason.BITEXT_HTML_TAGS),
        ("Line one<br/>line two", FilterReason.BITEXT_HTML_TAGS),
        ('See <a href="x.html">this</a>.', FilterReason.BITEXT_HTML_TAGS),
        ("Hidden <!-- comment --> text.", FilterReason.BITEXT_HTML_TAGS),
        ("So 3 < 4 and 5 > 2.", None),  # comparisons are text
        ("Use the <b tag", None),  # an unclosed tag is text (OpusFilter 3.3.1)
        ("Write &lt;b&gt; for bold.", None),  # escaped, not a tag
    ],
)
def test_html_tags(anchor: str, reason: FilterReason | None) -> None:
    config = BitextFilterConfig(drop_html=True)
    assert check_bitext_noise(anchor, "Klick hier.", "en", "de", config) is reason
    assert check_bitext_noise("Click here.", anchor, "en", "de", config) is reason
    assert check_bitext_noise(anchor, "Klick hier.", "en", "de") is None  # off by default


@pytest.mark.parametrize(
    ("positive", "lang", "reason"),
    [
        ("Привет, мир!", "ru", None),
        ("Привет, world!", "ru", FilterReason.BITEXT_SCRIPT_RATIO),  # 6 of 11 letters
        ("Al cabo de poco tiempo, Laila se quedó embarazada.", "ara", "script"),
        ("بعد فترة قصيرة جدا، كانت ليلى حاملا.", "ara", None),
        ("Zdravo svete, Здраво свете", "sr", None),  # Serbian: either alphabet
        ("Здраво свете", "sr_Latn", "script"),  # unless the label names one
        ("私は学生です。", "ja", None),  # Han and kana
        ("12345 !!!", "ru", None),  # no letters: nothing to judge
        ("Hello world", "xx", None),  # a language of unknown script is not judged
    ],
)
def test_script_ratio(positive: str, lang: str, reason: FilterReason | str | None) -> None:
    expected = FilterReason.BITEXT_SCRIPT_RATIO if reason else None
    config = BitextFilterConfig(min_script_ratio=0.9)
    assert check_bitext_noise("Hello world.", positive, "en", lang, config) is expected


@pytest.mark.parametrize(
    ("anchor", "positive", "reason"),
    [
        ("Members of Parliament .", "Mesdames et Messieurs !", None),  # one mark each: 0
        ("No mark here", "Pas de point", None),
        ("Where are you?", "Où es-tu", None),  # penalty 1: -0.69
        ("Wait... what?", "Attends, quoi ?", FilterReason.BITEXT_TERMINAL_PUNCTUATION),
        ("One. Two. Three.", "Un", FilterReason.BITEXT_TERMINAL_PUNCTUATION),
    ],
)
def test_terminal_punctuation(anchor: str, positive: str, reason: FilterReason | None) -> None:
    config = BitextFilterConfig(min_punctuation_score=-1.0)  # penalty at most 1
    assert check_bitext_noise(anchor, positive, "en", "fr", config) is reason


@pytest.mark.parametrize(
    ("anchor", "positive", "reason"),
    [
        ("In 1992 .", "En 1992.", None),
        ("It costs 1.50 euros.", "Es kostet 1,5 Euro.", None),  # zeros are left out
        ("In 1992 .", "Im Jahr 1993.", None),  # 3 of 4 digits agree: 0.75
        ("Page 4 . Security first .", "Die Arbeit geht weiter .", "numerals"),
        ("Sweden is first .", "3. Die Umwelt wird prioritiert .", "numerals"),
        ("In 1992 .", "En ١٩٩٢.", None),  # Arabic-Indic digits by value
        ("No digits .", "Keine Ziffern .", None),
    ],
)
def test_nonzero_numerals(anchor: str, positive: str, reason: str | None) -> None:
    expected = FilterReason.BITEXT_NUMERALS_MISMATCH if reason else None
    config = BitextFilterConfig(min_numeral_similarity=0.5)
    assert check_bitext_noise(anchor, positive, "en", "de", config) is expected


def test_noise_checks_run_in_their_documented_order() -> None:
    every = BitextFilterConfig(
        max_anchor_chars=40,
        max_word_chars=10,
        drop_html=True,
        min_script_ratio=1.0,
        min_punctuation_score=0.0,
        min_numeral_similarity=1.0,
    )
    # each anchor fails every check from its reason on, and passes those before it
    for anchor, reason in [
        ("<b>Hi</b> Привет Wonderfulness 1? 2? and then", "chars_too_long"),
        ("<b>Hi</b> Привет Wonderfulness 1? 2?", "word_too_long"),
        ("<b>Hi</b> Привет 1? 2?", "html_tags"),
        ("Hi Привет 1? 2?", "script_ratio"),
        ("Hi 1? 2?", "terminal_punctuation"),
        ("Hi 1 .", "numerals_mismatch"),
    ]:
        got = check_bitext_noise(anchor, "Hallo Welt 3 .", "en", "de", every)
        assert got is FilterReason(f"bitext_{reason}"), anchor
    assert check_bitext_noise("Hi 3 .", "Hallo Welt 3 .", "en", "de", every) is None


@given(st.text(), st.text(), st.sampled_from(["en", "de", "ru", "ja", "ar", "xx", "sr_Latn"]))
def test_noise_filters_off_by_default_drop_nothing(anchor: str, positive: str, lang: str) -> None:
    assert check_bitext_noise(anchor, positive, "en", lang) is None


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: BitextFilterConfig(min_anchor_tokens=-1), "--min-anchor-tokens.*-1"),
        (
            lambda: BitextFilterConfig(min_positive_chars=10, max_positive_chars=9),
            "--max-positive-chars must be >= that side's lowest limit \\(10\\), got 9",
        ),
        (lambda: BitextFilterConfig(max_word_chars=2.5), "--max-word-chars.*2.5"),  # type: ignore[arg-type]
        (lambda: BitextFilterConfig(drop_html=1), "--drop-html.*1"),  # type: ignore[arg-type]
        (lambda: BitextFilterConfig(min_script_ratio=1.5), "--min-script-ratio.*1.5"),
        (lambda: BitextFilterConfig(min_punctuation_score=0.5), "--min-punctuation-score.*0.5"),
        (
            lambda: BitextFilterConfig(min_numeral_similarity=math.nan),
            "--min-numeral-similarity.*nan",
        ),
    ],
)
def test_noise_settings_reject_bad_values_by_name(make: object, needle: str) -> None:
    with pytest.raises(FlagError, match=needle):
        make()  # type: ignore[operator]


def test_manifest_records_noise_filters_only_when_one_is_on() -> None:
    # the record of a release built before the noise filters, byte for byte
    assert BitextFilterConfig().to_json() == {
        "min_tokens": 3,
        "max_tokens": 100,
        "max_length_ratio": 3.0,
    }
    record = BitextFilterConfig(drop_html=True).to_json()
    assert set(record) == {"min_tokens", "max_tokens", "max_length_ratio", *NOISE_FILTERS}
    assert record["drop_html"] is True and record["max_word_chars"] is None


@pytest.mark.parametrize(
    ("anchor", "positive", "config", "value", "side"),
    [
        ("Hi .", "Hallo du .", BitextFilterConfig(min_positive_chars=12), 10.0, "positive"),
        ("A verylongword .", "Ein Wort .", BitextFilterConfig(max_word_chars=8), 12.0, "anchor"),
        ("Hi .", "<i>Hallo</i> .", BitextFilterConfig(drop_html=True), None, "positive"),
        ("Hi there .", "Да, no .", BitextFilterConfig(min_script_ratio=0.9), 0.5, "positive"),
        ("Yes . Yes .", "Ja", BitextFilterConfig(min_punctuation_score=-1), -math.log(4), None),
        ("In 1992 .", "No year .", BitextFilterConfig(min_numeral_similarity=0.5), 0.0, None),
    ],
)
def test_noise_value_names_what_failed(
    anchor: str,
    positive: str,
    config: BitextFilterConfig,
    value: float | None,
    side: str | None,
) -> None:
    reason = check_bitext_noise(anchor, positive, "en", "de", config)
    assert reason in NOISE_REASONS
    assert reason is not None
    got_value, got_side = noise_value(reason, anchor, positive, "en", "de", config)
    assert got_value == (None if value is None else pytest.approx(value))
    assert got_side == side
