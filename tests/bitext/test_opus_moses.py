"""Moses line-aligned bitext: real Tatoeba and OPUS RF files, and generated edge cases."""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

from corpusforge.sources.opus.moses import moses_members, read_moses_files, read_moses_zip
from corpusforge.sources.opus.records import DeadLetter, RawPair, Skipped, orient_english
from corpusforge.sources.opus.streams import count_lines, iter_lines


def _write(path: Path, lines: list[bytes]) -> str:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def test_real_tatoeba_pairs_line_by_line(realdata: Path) -> None:
    folder = realdata / "tatoeba-laser-v1"
    items = list(
        read_moses_files(str(folder / "tatoeba.deu-eng.deu"), str(folder / "tatoeba.deu-eng.eng"))
    )
    assert all(isinstance(item, RawPair) for item in items)
    pairs = [item for item in items if isinstance(item, RawPair)]
    assert len(pairs) == 1000
    first = pairs[0]
    assert first.src == "Maria sagte, sie wisse nicht, wo Tom sei."
    assert first.trg == "Mary said she didn't know where Tom was."
    assert (first.src_lang, first.trg_lang, first.dataset) == ("de", "en", "tatoeba")
    assert (first.origin_file, first.origin_line) == ("tatoeba.deu-eng.deu", 1)
    assert [p.origin_line for p in pairs] == list(range(1, 1001))
    assert orient_english(first).src_lang == "en"


def test_real_rf_moses_files(realdata: Path) -> None:
    folder = realdata / "opus-rf-sample" / "t" / "moses"
    items = list(read_moses_files(str(folder / "RF-tokenized.en"), str(folder / "RF-tokenized.fr")))
    pairs = [item for item in items if isinstance(item, RawPair)]
    assert len(pairs) == len(items) == 175
    assert {(p.src_lang, p.trg_lang, p.dataset) for p in pairs} == {("en", "fr", "RF-tokenized")}


def test_line_count_mismatch_refuses_the_whole_file_pair(tmp_path: Path) -> None:
    src = _write(tmp_path / "c.de", [b"eins", b"zwei", b"drei", b"vier", b"funf"])
    trg = _write(tmp_path / "c.en", [b"one", b"two", b"three"])
    items = list(read_moses_files(src, trg))
    assert len(items) == 1  # no pair of a misaligned file pair, not even the first ones
    letter = items[0]
    assert isinstance(letter, DeadLetter)
    assert (letter.reason, letter.stage) == ("align_line_count_mismatch", "align")
    assert (letter.origin_file, letter.origin_line) == ("c.de", None)
    assert "c.de has 5 lines and c.en has 3" in letter.detail
    # a missing final newline does not change the count
    (tmp_path / "d.en").write_bytes(b"one\ntwo\nthree\nfour\nfive")
    pairs = list(read_moses_files(src, str(tmp_path / "d.en")))
    assert len(pairs) == 5 and all(isinstance(p, RawPair) for p in pairs)


def test_count_lines_agrees_with_iter_lines() -> None:
    for body in (b"", b"a", b"a\n", b"a\n\n", b"a\r\nb", b"\n\n\n", b"x" * 10 + b"\n" + b"y"):
        assert count_lines(io.BytesIO(body), chunk_size=3) == len(
            list(iter_lines(io.BytesIO(body)))
        )


def test_line_count_mismatch_in_a_zip_refuses_only_that_member_pair(tmp_path: Path) -> None:
    uri = _moses_zip(
        tmp_path / "de-en.txt.zip",
        {
            "A.de-en.de": "Guten Tag\nDanke schön\n".encode(),
            "A.de-en.en": b"Thank you\n",
            "B.de-en.de": b"Guten Tag\n",
            "B.de-en.en": b"Good day\n",
        },
    )
    items = list(read_moses_zip(uri))
    assert [type(i) for i in items] == [DeadLetter, RawPair]
    assert isinstance(items[0], DeadLetter)
    assert (items[0].reason, items[0].origin_member) == ("align_line_count_mismatch", "A.de-en.de")
    assert "A.de-en.de has 2 lines and A.de-en.en has 1" in items[0].detail


def test_bad_line_does_not_stop_the_file(tmp_path: Path) -> None:
    src = _write(tmp_path / "c.de", [b"eins", b"zw\xffei", b"drei", b"   "])
    trg = _write(tmp_path / "c.en", [b"one", b"two", b"three", b"four"])
    items = list(read_moses_files(src, trg))
    assert isinstance(items[1], DeadLetter)
    assert (items[1].reason, items[1].origin_line) == ("read_decode_error", 2)
    assert isinstance(items[2], RawPair) and items[2].src == "drei"
    assert isinstance(items[3], Skipped) and items[3].reason == "align_empty_side"


def test_the_fast_path_keeps_each_lines_record(tmp_path: Path) -> None:
    # past line 1 a good line skips the general path: every other kind still takes it, a
    # byte-order mark is dropped on line 1 only, and a bad line's message is the decoder's
    src = _write(
        tmp_path / "c.de", ["\ufeffeins".encode(), "\ufeffzwei".encode(), b"x\xff", b"", b"f"]
    )
    trg = _write(tmp_path / "c.en", [b"one", b"two", b"three", b"four", b"\xfe"])
    items = list(read_moses_files(src, trg))
    assert [(p.src, p.origin_line) for p in items[:2] if isinstance(p, RawPair)] == [
        ("eins", 1),
        ("\ufeffzwei", 2),
    ]
    assert [(i.reason, i.origin_line) for i in items[2:]] == [
        ("read_decode_error", 3),
        ("align_empty_side", 4),
        ("read_decode_error", 5),
    ]
    assert "position 1" in items[2].detail and "position 0" in items[4].detail


def test_only_newline_splits_lines(tmp_path: Path) -> None:
    # U+2028, U+0085 and a bare \r are inside sentences; CRLF endings are stripped
    src = _write(tmp_path / "c.fr", ["a\u2028b".encode(), "c\u0085d\re\r".encode(), b"f"])
    trg = _write(tmp_path / "c.en", [b"1", b"2", b"3"])
    pairs = [i for i in read_moses_files(src, trg) if isinstance(i, RawPair)]
    assert [(p.src, p.trg) for p in pairs] == [("a\u2028b", "1"), ("c\u0085d\re", "2"), ("f", "3")]


def test_compressed_sides_and_bom(tmp_path: Path) -> None:
    (tmp_path / "c.de.gz").write_bytes(gzip.compress("\ufeffeins\nzwei\n".encode()))
    trg = _write(tmp_path / "c.en", [b"one", b"two"])
    pairs = [i for i in read_moses_files(str(tmp_path / "c.de.gz"), trg) if isinstance(i, RawPair)]
    assert [p.src for p in pairs] == ["eins", "zwei"]
    assert pairs[0].src_lang == "de"


def test_truncated_gzip_keeps_lines_before_the_break(tmp_path: Path) -> None:
    body = gzip.compress(b"".join(b"line %d\n" % i for i in range(2000)))
    (tmp_path / "c.de.gz").write_bytes(body[: len(body) // 2])
    trg = _write(tmp_path / "c.en", [b"x"] * 2000)
    items = list(read_moses_files(str(tmp_path / "c.de.gz"), trg))
    assert isinstance(items[0], RawPair)
    assert isinstance(items[-1], DeadLetter)
    assert items[-1].reason == "read_unreadable"


def test_corrupt_gzip_keeps_lines_before_the_break(tmp_path: Path) -> None:
    body = bytearray(gzip.compress(b"".join(b"line %d\n" % i for i in range(20000))))
    body[len(body) // 2 : len(body) // 2 + 64] = b"\x00" * 64
    (tmp_path / "c.de.gz").write_bytes(bytes(body))
    trg = _write(tmp_path / "c.en", [b"x"] * 20000)
    items = list(read_moses_files(str(tmp_path / "c.de.gz"), trg))
    assert isinstance(items[0], RawPair)
    assert isinstance(items[-1], DeadLetter) and items[-1].reason == "read_unreadable"
    assert "stream broke" in items[-1].detail


def test_missing_language_suffix_is_a_dead_letter(tmp_path: Path) -> None:
    src = _write(tmp_path / "left.txt", [b"a"])
    trg = _write(tmp_path / "right.txt", [b"b"])
    items = list(read_moses_files(src, trg))
    assert [i.reason for i in items if isinstance(i, DeadLetter)] == ["parse_missing_lang"]
    pairs = list(read_moses_files(src, trg, src_lang="deu", trg_lang="eng", dataset="d"))
    assert isinstance(pairs[0], RawPair) and pairs[0].lang_pair == "de-en"


def _moses_zip(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return str(path)


def test_moses_zip_reads_the_corpus_members(tmp_path: Path) -> None:
    uri = _moses_zip(
        tmp_path / "de-en.txt.zip",
        {
            "README": b"readme\n",
            "LICENSE": b"licence\n",
            "Corp.de-en.xml": b"<x/>\n",
            "Corp.de-en.de": "Guten Tag\nDanke schön\n".encode(),
            "Corp.de-en.en": b"Good day\nThank you\n",
        },
    )
    pairs = [i for i in read_moses_zip(uri) if isinstance(i, RawPair)]
    assert [(p.src, p.trg) for p in pairs] == [
        ("Guten Tag", "Good day"),
        ("Danke schön", "Thank you"),
    ]
    assert {(p.dataset, p.origin_file, p.origin_member) for p in pairs} == {
        ("Corp", "de-en.txt.zip", "Corp.de-en.de")
    }


def test_moses_zip_without_members_or_not_a_zip(tmp_path: Path) -> None:
    uri = _moses_zip(tmp_path / "de-en.txt.zip", {"README": b"x"})
    assert [i.reason for i in read_moses_zip(uri) if isinstance(i, DeadLetter)] == [
        "read_missing_member"
    ]
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    items = list(read_moses_zip(str(tmp_path / "bad.zip")))
    assert [i.reason for i in items if isinstance(i, DeadLetter)] == ["read_unreadable"]
    assert len(items) == 1


def test_moses_members_pairs_sides_and_ignores_the_rest() -> None:
    names = [
        "README",
        "A.de-en.de",
        "A.de-en.en",
        "A.de-en.ids",
        "B.de-en.de",
        "x/C.en-fr.fr",
        "x/C.en-fr.en",
    ]
    assert moses_members(names) == [
        ("A.de-en.de", "A.de-en.en", "de", "en"),
        ("x/C.en-fr.en", "x/C.en-fr.fr", "en", "fr"),
    ]


def test_an_overlong_line_is_skipped_without_losing_the_alignment(tmp_path: Path) -> None:
    body = [b"eins", b"x" * 5000, b"drei"]
    assert [
        type(line).__name__ for line in iter_lines(io.BytesIO(b"\n".join(body)), max_bytes=100)
    ] == ["bytes", "LineTooLong", "bytes"]
    src = _write(tmp_path / "c.de", [b"eins", b"zwei " * 300_000, b"drei"])  # 1.5 MB
    trg = _write(tmp_path / "c.en", [b"one", b"two", b"three"])
    items = list(read_moses_files(src, trg))
    assert [type(i).__name__ for i in items] == ["RawPair", "DeadLetter", "RawPair"]
    letter, last = items[1], items[2]
    assert isinstance(letter, DeadLetter) and isinstance(last, RawPair)
    assert (letter.reason, letter.origin_line) == ("read_line_too_long", 2)
    assert "longer than 1,048,576 bytes" in letter.detail and letter.excerpt.startswith("zwei")
    assert (last.src, last.trg, last.origin_line) == ("drei", "three", 3)
