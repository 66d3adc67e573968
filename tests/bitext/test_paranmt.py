"""ParaNMT line parsing and file reading."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from corpusforge.sources.opus.records import DeadLetter, Origin
from corpusforge.sources.paranmt import RawParaphrase, parse_paranmt_line, read_paranmt

ORIGIN = Origin("para-nmt-50m.txt", None, 12)


def test_parses_a_good_line() -> None:
    item = parse_paranmt_line("i 'm not sure .\ti do n't know .\t0.79876\n", ORIGIN)
    assert item == RawParaphrase(
        "i 'm not sure .", "i do n't know .", 0.79876, "paranmt", "para-nmt-50m.txt", None, 12
    )
    assert item.key == "paranmt|para-nmt-50m.txt||12"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("only one column", "parse_column_count"),
        ("a\tb", "parse_column_count"),
        ("a\tb\t0.5\textra", "parse_column_count"),
        ("", "parse_column_count"),
        ("a\tb\tnan", "parse_bad_score"),
        ("a\tb\tNaN", "parse_bad_score"),
        ("a\tb\tinf", "parse_bad_score"),
        ("a\tb\thigh", "parse_bad_score"),
        ("a\tb\t", "parse_bad_score"),
        ("  \tb\t0.5", "parse_empty_side"),
        ("a\t\t0.5", "parse_empty_side"),
    ],
)
def test_bad_lines_are_dead_letters_with_reasons(line: str, reason: str) -> None:
    item = parse_paranmt_line(line, ORIGIN)
    assert isinstance(item, DeadLetter)
    assert item.reason == reason
    assert item.stage == "parse"
    assert (item.origin_file, item.origin_line) == ("para-nmt-50m.txt", 12)
    assert item.excerpt == line


def test_bytes_are_decoded_strictly() -> None:
    item = parse_paranmt_line(b"caf\xe9\tb\t0.5\r\n", ORIGIN)
    assert isinstance(item, DeadLetter) and item.reason == "read_decode_error"
    ok = parse_paranmt_line("café\tb\t0.5\r\n".encode(), ORIGIN)
    assert isinstance(ok, RawParaphrase) and ok.reference == "café" and ok.score == 0.5


def test_read_paranmt_goes_on_after_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "para-nmt-5k.txt.gz"
    lines = ["he left .\the went away .\t0.61", "broken line", "", "yes .\tyes indeed .\t0.9"]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    items = list(read_paranmt(str(path)))
    assert [type(i).__name__ for i in items] == [
        "RawParaphrase",
        "DeadLetter",
        "DeadLetter",
        "RawParaphrase",
    ]
    assert [i.origin_line for i in items] == [1, 2, 3, 4]
    assert {i.origin_file for i in items} == {"para-nmt-5k.txt.gz"}


def test_paraphrase_row_follows_the_schema() -> None:
    from corpusforge.schemas import PARAPHRASE, arrow_schema

    item = parse_paranmt_line("a b c\ta b d\t0.5", ORIGIN)
    assert isinstance(item, RawParaphrase)
    row = item.to_paraphrase_row(0.0)
    # the training columns and the overlap; the language-id scores follow, added by the rule
    assert list(row) == arrow_schema(PARAPHRASE).names[:4]
    assert (row["anchor"], row["positive"], row["score"]) == ("a b c", "a b d", 0.5)
