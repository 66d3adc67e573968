"""Word tokens, n-grams and P-SP's trigram overlap, computed by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpusforge.text.overlap import _TOKEN_RE, trigram_overlap, word_ngrams, word_tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I don't know, Bob.", ["i", "do", "n't", "know", ",", "bob", "."]),
        ("i do n't know , bob .", ["i", "do", "n't", "know", ",", "bob", "."]),  # ParaNMT form
        ("They'll say it’s 5:30pm!", ["they", "'ll", "say", "it", "’s", "5", ":", "30pm", "!"]),
        ("I'm sure we can't", ["i", "'m", "sure", "we", "ca", "n't"]),
        ("Wait... what?!", ["wait", ".", ".", ".", "what", "?", "!"]),
        ("rock 'n' roll 'dog", ["rock", "'", "n", "'", "roll", "'", "dog"]),
        ("Naïve CAFÉ 東京 snake_case", ["naïve", "café", "東京", "snake_case"]),
        ("  \n ", []),
    ],
)
def test_word_tokens(text: str, expected: list[str]) -> None:
    assert word_tokens(text) == expected


def test_word_ngrams() -> None:
    tokens = ["a", "b", "c", "d"]
    assert word_ngrams(tokens, 1) == [("a",), ("b",), ("c",), ("d",)]
    assert word_ngrams(tokens, 3) == [("a", "b", "c"), ("b", "c", "d")]
    assert word_ngrams(tokens, 4) == [("a", "b", "c", "d")]
    assert word_ngrams(tokens, 5) == []
    assert word_ngrams(["x", "x", "x", "x"], 3) == [("x", "x", "x"), ("x", "x", "x")]


def test_word_ngrams_rejects_n_below_one() -> None:
    with pytest.raises(ValueError, match=r"n-gram length must be at least 1, got 0"):
        word_ngrams(["a"], 0)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("The cat sat on the mat.", "the cat sat on the mat .", 1.0),
        ("The cat sat on the mat", "Dogs bark at night", 0.0),
        # 4 trigrams against 5; 3 of the 4 are in the other side
        ("the cat sat on the mat", "the cat sat on the rug today", 0.75),
        # the base is the side with fewer trigrams: 1 of 1
        ("the cat sat", "yesterday the cat sat on the mat", 1.0),
        ("hello world", "hello world", 0.0),  # two tokens: no trigram
        ("hi", "the cat sat on the mat", 0.0),
        ("", "", 0.0),
        # occurrences, not distinct trigrams: abc bca cab abc against 6 trigrams -> 2/4
        # (distinct trigrams would give 1/3)
        ("a b c a b c", "a b c d e f g h", 0.5),
    ],
)
def test_trigram_overlap(a: str, b: str, expected: float) -> None:
    assert trigram_overlap(a, b) == expected
    assert trigram_overlap(b, a) == expected  # symmetric when the counts differ or no repeat


def test_trigram_overlap_tie_takes_the_first_side_as_base() -> None:
    # 2 trigrams each; "x x x" occurs twice in the first, "x x y" is not in it
    assert trigram_overlap("x x x x", "x x x y") == 1.0
    assert trigram_overlap("x x x y", "x x x x") == 0.5


WORDS = st.lists(st.sampled_from(["a", "b", "c", "the", "cat", ".", "n't"]), max_size=12)


@settings(max_examples=250, deadline=None)
@given(a=WORDS, b=WORDS)
def test_trigram_overlap_is_a_share_and_symmetric_without_ties(a: list[str], b: list[str]) -> None:
    text_a, text_b = " ".join(a), " ".join(b)
    overlap = trigram_overlap(text_a, text_b)
    assert 0.0 <= overlap <= 1.0
    trigrams_a, trigrams_b = word_ngrams(a, 3), word_ngrams(b, 3)
    if len(trigrams_a) != len(trigrams_b):
        assert trigram_overlap(text_b, text_a) == overlap
    if trigrams_a:
        assert trigram_overlap(text_a, text_a) == 1.0


@given(
    st.lists(
        st.sampled_from(["do", "n't", "n’t", "don't", "can’t", "i", "'m", "’re", "it's", "."])
        | st.text(alphabet=st.characters(codec="utf-8"), max_size=6),
        max_size=12,
    ).map(" ".join)
)
def test_tokens_without_negation_are_those_of_the_full_rules(text: str) -> None:
    """``word_tokens`` uses a shorter pattern when the text holds no ``n't``: the tokens are
    the full Treebank-style pattern's, whatever the text."""
    assert word_tokens(text) == _TOKEN_RE.findall(text.lower())
