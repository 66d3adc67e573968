"""Word counts in every script: real short sentences (Tatoeba style) in each."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.pairing.filters import FilterReason, check_bitext_length
from corpusforge.text.lengths import (
    _RANGES,
    LETTERS_PER_WORD,
    _token_words,
    script_of,
    word_count,
    word_counts,
)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Let's try something.", 3),
        ("Ich weiß es nicht.", 4),
        ("Я не знаю.", 3),  # Cyrillic has spaces
        ("나는 학생입니다.", 2),  # Hangul has spaces
        # Chinese (Mandarin, Cantonese, Wu): 1.5 Han letters a word
        ("我们试试看！", 4),
        ("我不知道。", 3),
        ("你好。", 2),
        ("你食咗飯未呀？", 4),
        ("阿拉是上海人。", 4),
        # Japanese: kanji 1.5, kana 2 a word
        ("私は学生です。", 4),
        ("トムはどこですか。", 4),
        # Thai, Lao, Khmer, Burmese: 2.5 letters a word, combining marks not counted (an
        # estimate: these are 3, 3, 3, 4 and 3 words)
        ("ฉันไม่เข้าใจ", 4),
        ("คุณชื่ออะไร", 4),
        ("ຂ້ອຍບໍ່ເຂົ້າໃຈ", 4),
        ("ខ្ញុំមិនយល់ទេ", 3),
        ("ကျွန်တော်နားမလည်ဘူး", 4),
        # a token mixing scripts counts one word more for its other letters
        ("iPhone很好用", 3),
    ],
)
def test_word_count_in_every_script(text: str, words: int) -> None:
    assert word_count(text) == words


def test_scripts_and_marks() -> None:
    assert [script_of(c) for c in "我かカกລကក"] == ["han", "kana", "kana"] + ["southeast_asian"] * 4
    assert script_of("\u0e31") is None  # Thai vowel sign: a combining mark, not a letter
    assert script_of("。") is None and script_of("a") is None and script_of("1") is None
    assert LETTERS_PER_WORD == {"han": 1.5, "kana": 2.0, "southeast_asian": 2.5}


@pytest.mark.parametrize(
    ("english", "other"),
    [
        ("I don't know.", "我不知道。"),
        ("I am a student.", "私は学生です。"),
        ("I don't understand.", "ฉันไม่เข้าใจ"),
        ("I don't understand.", "ຂ້ອຍບໍ່ເຂົ້າໃຈ"),
        ("I don't understand.", "ខ្ញុំមិនយល់ទេ"),
        ("I don't understand.", "ကျွန်တော်နားမလည်ဘူး"),
    ],
)
def test_real_pairs_without_spaces_pass_the_length_filters(english: str, other: str) -> None:
    assert check_bitext_length(english, other) is None
    assert check_bitext_length("Hello.", "你好。") is FilterReason.BITEXT_TOO_SHORT


@given(st.text())
def test_spaced_text_is_whitespace_tokens(text: str) -> None:
    if all(script_of(c) is None for c in text):
        assert word_count(text) == len(text.split())


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_the_fast_paths_count_what_the_letter_rule_counts(text: str) -> None:
    """``word_count`` skips the letter count for text without a space-less script; the
    result is the per-token rule's, whatever the text (Latin with accents, CJK, Thai, …)."""
    assert word_count(text) == sum(_token_words(token) for token in text.split())


def test_a_latin_token_beside_a_han_token_counts_one_word() -> None:
    assert word_count("Müller 我们试试看") == 1 + 4


# each space-less range's first and last code point and those just outside it, Latin-1,
# punctuation beyond U+0E00 („ “ – …), spaces
_EDGES = sorted({chr(c) for a, b, _ in _RANGES for c in (a - 1, a, b, b + 1)})


@given(st.lists(st.text(st.sampled_from([*_EDGES, *"aé ß„“–…\u3000\t"]), max_size=12)))
def test_word_counts_are_word_count_of_each_at_the_scripts_edges(texts: list[str]) -> None:
    assert word_counts(texts) == [word_count(text) for text in texts]


def test_word_counts_count_letters_of_every_range() -> None:
    texts = [chr(a) * 5 + " x" for a, _, _ in _RANGES if chr(a).isalpha()] + ["„Ja“ – ok", "abc"]
    assert word_counts(texts) == [word_count(text) for text in texts]
    assert word_counts(["\U00020000\U00020001\U00020002 x"]) == [3]  # 2 Han words, then x
