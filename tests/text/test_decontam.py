"""Evaluation-set readers and the 13-gram / exact-match decontaminator."""

from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.text.decontam import (
    Decontaminator,
    EvalFormat,
    EvalRecord,
    SourceStats,
    detect_format,
    ngram_hashes,
    read_records,
    read_texts,
    tokens,
)

LONG = "The quick brown fox jumps over the lazy dog while the farmer sleeps in the barn."
# 16 words: the quick brown fox jumps over the lazy dog while the farmer sleeps in the barn


def identity(text: str) -> str:
    return text


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


# --- tokens -------------------------------------------------------------------------------


def test_tokens_are_lowercase_words_without_punctuation():
    assert tokens("Don't PANIC!  A man... is dancing.") == [
        "do",
        "n't",
        "panic",
        "a",
        "man",
        "is",
        "dancing",
    ]
    assert tokens("A man is dancing.") == tokens("a man is dancing")
    assert tokens("!!! ... ???") == []


@given(st.text())
def test_tokens_are_idempotent(text):
    once = tokens(text)
    assert tokens(" ".join(once)) == once


def test_ngram_hashes_are_stable_across_processes():
    # Fixed values: a Decontaminator built on one machine is queried on Beam workers, so
    # the hash must not depend on the process (Python's hash() of a str does).
    words = [f"w{i}" for i in range(14)]
    assert ngram_hashes(words) == [1212689485724329720, 2871836890481887755]
    assert ngram_hashes(words[:12]) == []


# --- readers ------------------------------------------------------------------------------


def test_sts_simple_format(tmp_path):
    path = write(tmp_path, "pairs.tsv", '4.5\tA dog runs.\tA "dog" is running.\n\n0.0\tHi\tBye\n')
    assert detect_format(path) is EvalFormat.STS
    assert list(read_records(path)) == [
        EvalRecord(("A dog runs.", 'A "dog" is running.'), 4.5, 1),
        EvalRecord(("Hi", "Bye"), 0.0, 3),
    ]


def test_stsb_format_with_extra_columns(tmp_path):
    path = write(
        tmp_path,
        "sts-dev.csv",
        "main-captions\tMSRvid\t2012test\t0000\t5.000\tA man dances.\tA man is dancing.\n"
        "main-forums\tanswer-answer\t2016\t0008\t3\t"
        'It depends. \tIt "really" depends.\tsrc a\tsrc b\n',
    )
    assert detect_format(path) is EvalFormat.STSB
    records = list(read_records(path))
    assert [r.score for r in records] == [5.0, 3.0]
    assert records[1].texts == ("It depends. ", 'It "really" depends.')


def test_pit_format_by_extension_and_by_votes(tmp_path):
    line = (
        "4\t1st QB\tEJ Manuel the 1st QB to go in this draft\t"
        "But my bro from the 757 EJ Manuel is the 1st QB gone\t(5, 0)\t"
        "EJ/B-person/NNP/B-NP/O\tBut/O/CC/O/O\n"
    )
    data = write(tmp_path, "train.data", line)
    assert detect_format(data) is EvalFormat.PIT
    by_votes = write(tmp_path, "train.tsv", line)
    assert detect_format(by_votes) is EvalFormat.PIT
    (record,) = read_records(data)
    assert record.texts == (
        "EJ Manuel the 1st QB to go in this draft",
        "But my bro from the 757 EJ Manuel is the 1st QB gone",
    )
    assert record.score is None


def test_pit_label_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="holds no sentences"):
        detect_format(write(tmp_path, "test.label", "true\t0.8000\n"))


def test_twitter_url_format(tmp_path):
    path = write(
        tmp_path,
        "Twitter_URL_Corpus_train.txt",
        "Samsung tops Apple in phone sales\tsamsung beats apple again\t(4,6)\thttp://example.com/a\n",
    )
    assert detect_format(path) is EvalFormat.URL
    assert read_texts(path) == ["Samsung tops Apple in phone sales", "samsung beats apple again"]


def test_plain_lines_keep_odd_characters_inside_a_line(tmp_path):
    # only \n ends a line: a \r\n ending is removed, a lone \r or \u2028 stays in the text
    path = write(tmp_path, "sentences.txt", "first line\r\nsecond\rstill second\u2028too\n\n")
    assert detect_format(path) is EvalFormat.LINES
    assert read_texts(path) == ["first line", "second\rstill second\u2028too"]


def test_explicit_format_overrides_detection(tmp_path):
    path = write(tmp_path, "pairs.tsv", "4.5\tA dog runs.\tA dog is running.\n")
    assert read_texts(path, format="lines") == ["4.5\tA dog runs.\tA dog is running."]
    with pytest.raises(ValueError, match="'xml' is not a valid EvalFormat"):
        read_texts(path, format="xml")


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("a\tb\n", None, "cannot tell the format of a first line with 2"),
        ("\n\n", None, "no text in the file"),
        ("5\ta\tb\n4\tonly one\n", None, r"x.tsv:2: sts needs 3 tab-separated columns, found 2"),
        ("5\ta\tb\nhigh\ta\tb\n", None, r"x.tsv:2: score 'high' is not a number"),
        ("a\tb\tc\n", "stsb", r"x.tsv:1: stsb needs 7"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, text, fmt, message):
    path = write(tmp_path, "x.tsv", text)
    with pytest.raises(ValueError, match=message):
        read_texts(path, format=fmt)


# --- Decontaminator -----------------------------------------------------------------------


def test_a_shared_13_gram_collides():
    deco = Decontaminator([("eval", [LONG])], normalise=identity)
    # words 4..16 of LONG ("fox ... barn", 13 words) inside other text
    inside = "lol " + " ".join(LONG.lower().rstrip(".").split()[3:16]) + " #farmlife"
    assert deco.collides_with(inside) == "eval"
    # words 5..16 ("jumps ... barn", 12 words): clean
    twelve = "lol " + " ".join(LONG.lower().rstrip(".").split()[4:16]) + " #farmlife"
    assert deco.collides_with(twelve) is None


def test_short_texts_collide_only_when_equal_after_normalisation():
    deco = Decontaminator([("stsb", ["A man is playing a guitar."])], normalise=identity)
    assert deco.collides_with("a man is playing a guitar") == "stsb"
    assert deco.collides_with("A MAN is playing a guitar!!!") == "stsb"
    assert deco.collides_with("a man is playing a guitar now") is None
    assert deco.collides_with("man is playing a guitar") is None


def test_a_short_training_text_inside_a_long_evaluation_text_is_not_a_collision():
    deco = Decontaminator([("eval", [LONG])], normalise=identity)
    assert deco.collides_with("the quick brown fox jumps over the lazy dog") is None


def test_the_first_source_in_order_wins():
    a = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu"  # 13 words
    b = "one two three four five six seven eight nine ten eleven twelve thirteen"
    deco = Decontaminator(
        [("first", [a, "same short text"]), ("second", [b, "same short text"])], normalise=identity
    )
    assert deco.sources == ("first", "second")
    # the text hits "second" at its start and "first" later: the order of sources decides
    assert deco.collides_with(f"{b} and then {a}") == "first"
    assert deco.collides_with(b) == "second"
    assert deco.collides_with("Same short text.") == "first"


def test_normalise_cleans_evaluation_texts_but_not_the_training_text():
    def strip_urls(text: str) -> str:
        return re.sub(r"https?://\S+", "", text)

    deco = Decontaminator([("url", ["Great match today http://t.co/xyz"])], normalise=strip_urls)
    assert deco.collides_with(strip_urls("great match today https://t.co/other")) == "url"
    # the caller cleans training texts: a raw one keeps its URL words and does not match
    assert deco.collides_with("great match today https://t.co/other") is None


def test_texts_without_words_never_collide_and_stats_count_them():
    deco = Decontaminator(
        [("eval", ["!!!", "", LONG, "short one", "Short one."])], normalise=identity
    )
    assert deco.collides_with("...") is None
    assert deco.collides_with("") is None
    assert deco.stats == {"eval": SourceStats(texts=5, ngrams=4, short=1, empty=2)}  # 16 - 13 + 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="given twice"):
        Decontaminator([("a", ["x"]), ("a", ["y"])], normalise=identity)
    with pytest.raises(ValueError, match="n must be >= 1"):
        Decontaminator([], normalise=identity, n=0)


def test_pickles_for_beam_side_inputs():
    deco = Decontaminator([("eval", [LONG, "short one"])], normalise=identity)
    copy = pickle.loads(pickle.dumps(deco))
    assert copy.collides_with(LONG.upper()) == "eval"
    assert copy.collides_with("short one") == "eval"


def test_from_files_with_the_real_stsb_test_set(realdata):
    path = realdata / "stsbenchmark" / "sts-test.csv"
    assert detect_format(path) is EvalFormat.STSB
    texts = read_texts(path)
    assert len(texts) == 2758  # 1379 pairs, both sides
    deco = Decontaminator.from_files({"stsb-test": path}, normalise=identity)
    assert deco.stats["stsb-test"].texts == 2758
    assert deco.collides_with("a man is playing a harp") == "stsb-test"
    # 13 words of a long forum sentence ("...banyan tree, exhausted by ... every two hours.")
    tweet = "so true: tree, exhausted by my daily ritual of dragooning the men every two hours lol"
    assert deco.collides_with(tweet) == "stsb-test"
    assert deco.collides_with("a man is playing a harp on the beach at sunset") is None
