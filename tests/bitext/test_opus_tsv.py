"""TSV bitext in its four layouts, from tiny generated files."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from corpusforge.sources.opus.records import DeadLetter, Origin, RawPair, Skipped
from corpusforge.sources.opus.tsv import TsvLayout, detect_tsv_layout, parse_tsv_line, read_tsv


def _tsv(path: Path, lines: list[str]) -> str:
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return str(path)


@pytest.mark.parametrize(
    ("line", "layout"),
    [
        ("eng\tdeu\tHello\tHallo", TsvLayout.TATOEBA),
        ("1.0432\tHello\tHallo", TsvLayout.WIKIMATRIX),
        ("Hello\tHallo", TsvLayout.PAIR),
        ("a\tb\tc", None),
        ("just text", None),
    ],
)
def test_detect_tsv_layout(line: str, layout: TsvLayout | None) -> None:
    assert detect_tsv_layout(line) is layout


def test_plain_pairs_take_languages_from_the_name(tmp_path: Path) -> None:
    uri = _tsv(tmp_path / "Books.de-en.tsv", ["Hallo Welt\tHello world", "nur eine Spalte", "a\t"])
    items = list(read_tsv(uri))
    assert isinstance(items[0], RawPair)
    assert (items[0].src_lang, items[0].trg_lang, items[0].dataset) == ("de", "en", "Books")
    assert isinstance(items[1], DeadLetter) and items[1].reason == "parse_column_count"
    assert items[1].origin_line == 2
    assert isinstance(items[2], Skipped)


def test_tatoeba_layout_reads_languages_per_line(tmp_path: Path) -> None:
    uri = _tsv(
        tmp_path / "test.txt",
        [
            "deu\teng\tIch bin hier.\tI am here.",
            "tur\teng\tMerhaba.",
            "xx1\teng\ta\tb",
            "spa\teng\tHola.\tHello.",
        ],
    )
    items = list(read_tsv(uri, dataset="tatoeba-challenge"))
    assert isinstance(items[0], RawPair) and items[0].lang_pair == "de-en"
    assert isinstance(items[1], DeadLetter) and items[1].reason == "parse_column_count"
    assert isinstance(items[2], DeadLetter) and items[2].reason == "parse_missing_lang"
    assert isinstance(items[3], RawPair) and items[3].lang_pair == "es-en"


def test_wikimatrix_scores_and_bad_scores(tmp_path: Path) -> None:
    uri = _tsv(
        tmp_path / "WikiMatrix.de-en.tsv.gz",
        ["1.0806\tDas Haus.\tThe house.", "nan\tx\ty", "high\tx\ty", "1.05\tDer Hund.\tThe dog."],
    )
    items = list(read_tsv(uri))
    assert isinstance(items[0], RawPair)
    assert (items[0].score, items[0].dataset, items[0].src) == (1.0806, "WikiMatrix", "Das Haus.")
    assert [i.reason for i in items[1:3] if isinstance(i, DeadLetter)] == ["parse_bad_score"] * 2
    assert isinstance(items[3], RawPair) and items[3].origin_line == 4


def test_english_first_splits_translations_into_parts(tmp_path: Path) -> None:
    uri = _tsv(
        tmp_path / "TED2020-en-de-train.tsv.gz",
        ["Thank you.\tDanke.\tVielen Dank.", "Alone"],
    )
    items = list(read_tsv(uri, layout="english_first"))
    pairs = [i for i in items if isinstance(i, RawPair)]
    assert [(p.src, p.trg, p.origin_part) for p in pairs] == [
        ("Thank you.", "Danke.", 0),
        ("Thank you.", "Vielen Dank.", 1),
    ]
    assert {(p.src_lang, p.trg_lang, p.dataset) for p in pairs} == {("en", "de", "TED2020")}
    assert len({p.key for p in pairs}) == 2
    assert isinstance(items[-1], DeadLetter) and items[-1].reason == "parse_column_count"


def test_undetectable_lines_are_dead_letters_until_one_decides(tmp_path: Path) -> None:
    uri = _tsv(tmp_path / "x.de-en.tsv", ["header only", "", "Hallo\tHello"])
    items = list(read_tsv(uri))
    assert [getattr(i, "reason", None) for i in items] == [
        "parse_unknown_layout",
        "parse_unknown_layout",
        None,
    ]


def test_missing_languages(tmp_path: Path) -> None:
    uri = _tsv(tmp_path / "pairs.tsv", ["Hallo\tHello"])
    assert [i.reason for i in read_tsv(uri) if isinstance(i, DeadLetter)] == ["parse_missing_lang"]
    items = list(read_tsv(uri, src_lang="deu", trg_lang="eng"))
    assert isinstance(items[0], RawPair) and items[0].lang_pair == "de-en"


def test_invalid_utf8_line_is_reported_and_the_file_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "x.de-en.tsv"
    path.write_bytes(b"a\tb\n\xff\xfe\tc\nd\te\n")
    items = list(read_tsv(str(path)))
    assert [type(i).__name__ for i in items] == ["RawPair", "DeadLetter", "RawPair"]
    assert isinstance(items[1], DeadLetter) and items[1].reason == "read_decode_error"


def test_parse_tsv_line_is_pure() -> None:
    items = list(
        parse_tsv_line(
            "a\tb", TsvLayout.PAIR, Origin("f", None, 1), dataset="d", src_lang="de", trg_lang="en"
        )
    )
    assert items == [RawPair("a", "b", "de", "en", "d", "f", None, 1)]
