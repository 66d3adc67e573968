"""Noise measures of bitext sides (OpusFilter's definitions) and writing scripts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.text.noise import (
    has_html_tag,
    longest_word,
    nonzero_digits,
    numeral_similarity,
    terminal_punctuation_penalty,
    terminal_punctuation_score,
)
from corpusforge.text.scripts import expected_scripts, letter_script, script_ratio


def test_longest_word_counts_code_points_of_whitespace_tokens() -> None:
    assert longest_word("a bb\tccc\n") == 3
    assert longest_word("Grüße") == 5
    assert longest_word("   ") == 0


@pytest.mark.parametrize(
    ("src", "trg", "penalty"),
    [
        ("Yes.", "Oui.", 0),
        ("Yes", "Oui", 0),
        ("Yes.", "Oui", 1),
        ("Yes!", "Oui ?", 0),  # any mark matches any mark
        ("Why? Because.", "Parce que.", 2),  # one more, and one beyond the first
        ("Wait…", "Attends...", 4),  # one ellipsis character; three periods
    ],
)
def test_terminal_punctuation_penalty(src: str, trg: str, penalty: int) -> None:
    assert terminal_punctuation_penalty(src, trg) == penalty
    assert terminal_punctuation_score(src, trg) == pytest.approx(-math.log(penalty + 1))


def test_html_tags_are_tags_not_angle_brackets() -> None:
    assert has_html_tag("<p>Hi</p>") and has_html_tag("a<BR>b") and has_html_tag("<!DOCTYPE html>")
    assert not has_html_tag("a < b") and not has_html_tag("<3 you") and not has_html_tag("<<>>")


def test_nonzero_digits_of_any_script() -> None:
    assert nonzero_digits("10.05 and ٣") == [1, 5, 3]
    assert numeral_similarity("no digits", "keine") == 1.0
    assert numeral_similarity("room 12", "Zimmer") == 0.0


@given(st.text(), st.text())
def test_measures_stay_in_their_ranges(a: str, b: str) -> None:
    assert 0.0 <= numeral_similarity(a, b) <= 1.0
    assert numeral_similarity(a, a) == 1.0
    assert terminal_punctuation_penalty(a, b) == terminal_punctuation_penalty(b, a) >= 0
    assert terminal_punctuation_score(a, b) <= 0.0
    assert 0.0 <= script_ratio(a, frozenset({"latin"})) <= 1.0


def test_letter_scripts_from_unicode_names() -> None:
    scripts = {c: letter_script(c) for c in "aЖλ中あアー한ק々ａｱ"}
    assert scripts == {
        "a": "latin",
        "Ж": "cyrillic",
        "λ": "greek",
        "中": "han",
        "あ": "hiragana",
        "ア": "katakana",
        "ー": "katakana",
        "한": "hangul",
        "ק": "hebrew",
        "々": "han",
        "ａ": "latin",  # full-width forms keep their script
        "ｱ": "katakana",
    }
    assert letter_script("1") is None and letter_script("!") is None


def test_expected_scripts_of_language_labels() -> None:
    assert expected_scripts("deu") == expected_scripts("en") == frozenset({"latin"})
    assert expected_scripts("sr") == frozenset({"latin", "cyrillic"})
    assert expected_scripts("sr_Cyrl") == frozenset({"cyrillic"})
    assert expected_scripts("zh-Hant") == frozenset({"han"})
    assert expected_scripts("ja") == frozenset({"han", "hiragana", "katakana"})
    assert expected_scripts("tlh") is None and expected_scripts("not a code") is None


@given(st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd", "Zs", "Po"))))
def test_a_side_in_its_own_script_scores_one(text: str) -> None:
    latin_only = "".join(c for c in text if not c.isalpha() or letter_script(c) == "latin")
    assert script_ratio(latin_only, frozenset({"latin"})) == 1.0
