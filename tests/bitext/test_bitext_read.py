"""Moses and TSV units read by byte ranges or blocks in the workers give what the reader gives.

:mod:`corpusforge.local.bitext_plan` cuts a plain Moses pair into ranges of
``RANGE_LINES`` lines (forced down to a few here, so every odd line meets a range's edge,
and the scan for them reads a few bytes at a time), and a compressed one into blocks of its
decompressed bytes at the same lines, and reads each apart; the pairs, their origins, the
skips, the dead letters (reason, detail, excerpt, line) and every count must equal
:func:`~corpusforge.sources.opus.formats.read_opus`'s over the whole files. Last, a whole
build of such files publishes the Beam pipeline's release.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from corpusforge.builds import bitext
from corpusforge.config.bitext import BitextConfig
from corpusforge.local import bitext_filter, bitext_plan
from corpusforge.local.bitext_plan import (
    MosesBlock,
    MosesRange,
    MosesUnit,
    Range,
    TsvBlock,
    TsvRange,
    read_unit,
)
from corpusforge.local.bitext_read import UnitTallies, read_range, tally
from corpusforge.release.layout import DEAD_LETTERS
from corpusforge.sources.opus.formats import OpusFormat, OpusInput, read_opus, reader_options
from corpusforge.sources.opus.records import DeadLetter, RawPair
from corpusforge.sources.opus.streams import MAX_LINE_BYTES
from tests.bitext.test_local_engine import same_on_every_engine

Read = tuple[list[RawPair], Counter[tuple[str, ...]], list[DeadLetter], int]

DE = [
    "\ufeffDas ist der erste Satz.",  # a byte-order mark on line 1 only
    "Ein Satz mit einem\r einsamen Wagenrücklauf.",  # a lone \r splits nothing
    "   ",  # a blank side: skipped
    "Zeile mit Windows-Ende.\r",  # \r\n ending
    "Kaputt \xff hier.",  # invalid UTF-8 (written as latin-1 below)
    "Noch ein guter Satz.",
    "",
    "Vorletzter Satz hier.",
    "Endet mit halbem Zeichen \xc3\r",  # an incomplete character before \r\n
    "Der letzte Satz.",
]
EN = [
    "This is the first sentence.",
    "A sentence with a lone carriage return.",
    "A side that is there.",
    "Line with a Windows ending.",
    "Broken here.",
    "Another good sentence.",
    "Both sides empty, but not this one.",
    "The last but one sentence.",
    "Ends with half a character.",
    "The last sentence.",
]


def _write(path: Path, lines: list[str], *, newline_at_end: bool = True) -> str:
    data = b"\n".join(_raw(line) for line in lines) + (b"\n" if newline_at_end else b"")
    path.write_bytes(data)
    return str(path)


def _raw(line: str) -> bytes:
    """The line's bytes: UTF-8, but ``\\xff`` and ``\\xc3`` stay single bad bytes."""
    return line.encode("latin-1" if "\xff" in line or "\xc3" in line else "utf-8")


def by_ranges(unit: OpusInput, **options: Any) -> Read:
    """What the engine makes of ``unit``: ranges read apart, else the reader's items."""
    pairs: list[RawPair] = []
    counts: Counter[tuple[str, ...]] = Counter()
    dead: list[DeadLetter] = []
    units = UnitTallies()
    ranges = 0
    for item in read_unit(unit, **options):
        if isinstance(item, Range):
            ranges += 1
            got, read = read_range(item)
            pairs += [got.pair(i) for i in range(len(got))]
            counts.update(read.counts)
            dead += read.dead
            units.add(read)
        elif isinstance(item, RawPair):
            pairs.append(item)
            counts[("read", "records")] += 1
        else:
            letter = tally(item, counts)
            dead += [letter] if letter is not None else []
    for note in units.notes():
        tally(note, counts)
        dead.append(note)
    return pairs, counts, dead, ranges


def as_read(unit: OpusInput, **options: Any) -> Read:
    """What the reader makes of ``unit``, counted as the engine counts it."""
    pairs: list[RawPair] = []
    counts: Counter[tuple[str, ...]] = Counter()
    dead: list[DeadLetter] = []
    dataset = options.pop("dataset", None)
    for item in read_opus(unit, dataset=dataset, **reader_options(unit, **options)):
        if isinstance(item, RawPair):
            pairs.append(item)
            counts[("read", "records")] += 1
        else:
            letter = tally(item, counts)
            dead += [letter] if letter is not None else []
    return pairs, counts, dead, 0


def assert_same(unit: OpusInput, *, ranges: int, **options: Any) -> Read:
    got = by_ranges(unit, **options)
    expected = as_read(unit, **options)
    assert got[0] == expected[0]
    assert got[1] == expected[1]
    assert sorted(got[2], key=repr) == sorted(expected[2], key=repr)
    assert got[3] == ranges
    return got


@pytest.fixture(autouse=True)
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bitext_plan, "RANGE_LINES", 3)
    monkeypatch.setattr(bitext_plan, "SCAN_BYTES", 16)  # a range's edge in any block


@pytest.mark.parametrize("newline_at_end", [(True, True), (False, True), (False, False)])
def test_hostile_lines_read_by_ranges_as_the_reader_reads_them(
    tmp_path: Path, newline_at_end: tuple[bool, bool]
) -> None:
    de = _write(tmp_path / "t.de-en.de", DE, newline_at_end=newline_at_end[0])
    en = _write(tmp_path / "t.de-en.en", EN, newline_at_end=newline_at_end[1])
    pairs, counts, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=4)
    assert pairs[0].src == "Das ist der erste Satz."
    assert [p.origin_line for p in pairs] == [1, 2, 4, 6, 8, 10]
    assert sorted(d.origin_line or 0 for d in dead) == [5, 9]
    assert counts[("skip", "align_empty_side")] == 2


def test_a_range_edge_on_the_last_line_and_a_line_count_of_whole_ranges(tmp_path: Path) -> None:
    # the last line, without a \n, keeps its \r (in its dead letter's excerpt)
    de = _write(tmp_path / "t.de-en.de", DE[:9], newline_at_end=False)
    en = _write(tmp_path / "t.de-en.en", EN[:9])
    assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=3)


def test_a_line_over_the_limit_is_dead_lettered_with_its_head(tmp_path: Path) -> None:
    long = "x" * (MAX_LINE_BYTES + 1)
    # the limit counts a \r before the \n: the last line is just within it
    de = _write(
        tmp_path / "t.de-en.de", [*DE[1:3], long, "Gut.", "y" * (MAX_LINE_BYTES - 1) + "\r"]
    )
    en = _write(tmp_path / "t.de-en.en", [*EN[1:3], "Fine.", long[:-2] + "\r\r", "Good."])
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=2)
    assert [d.reason for d in dead] == ["read_line_too_long"] * 2


def test_sides_of_different_lengths_are_refused_whole(tmp_path: Path) -> None:
    de = _write(tmp_path / "t.de-en.de", DE)
    en = _write(tmp_path / "t.de-en.en", EN[:-1])
    _, counts, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=0)
    assert [d.reason for d in dead] == ["align_line_count_mismatch"]
    assert counts[("read", "records")] == len(DE)


def test_a_unit_without_a_pair_gets_its_note_once_its_ranges_are_back(tmp_path: Path) -> None:
    de = _write(tmp_path / "t.de-en.de", ["", " ", "Nur eine Seite.", "\xff", ""])
    en = _write(tmp_path / "t.de-en.en", ["x", "", " ", "Broken.", ""])
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=2)
    assert sorted(d.reason for d in dead) == ["read_decode_error", "read_no_records"]
    (tmp_path / "e.de-en.de").write_bytes(b"")
    (tmp_path / "e.de-en.en").write_bytes(b"")
    empty = (str(tmp_path / "e.de-en.de"), str(tmp_path / "e.de-en.en"))
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, empty), ranges=0)
    assert [d.reason for d in dead] == ["read_no_records"]


def _compressed(path: Path, kind: str) -> str:
    """``path`` compressed in place with ``kind`` (its name unchanged, as the reader goes by
    the magic bytes)."""
    module = {"gz": gzip, "bz2": bz2, "xz": lzma}[kind]
    path.write_bytes(module.compress(path.read_bytes()))
    return str(path)


@pytest.mark.parametrize(("kinds", "newline_at_end"), [
    (("gz", "gz"), (True, True)),
    (("bz2", None), (False, True)),
    ((None, "xz"), (False, False)),
])  # fmt: skip
def test_compressed_sides_read_by_blocks_as_the_reader_reads_them(
    tmp_path: Path, kinds: tuple[str | None, str | None], newline_at_end: tuple[bool, bool]
) -> None:
    """One compressed side is enough: both sides go to the workers as decompressed blocks,
    cut at the lines a range would be."""
    de = _write(tmp_path / "t.de-en.de", DE, newline_at_end=newline_at_end[0])
    en = _write(tmp_path / "t.de-en.en", EN, newline_at_end=newline_at_end[1])
    sides = [_compressed(Path(p), k) if k else p for p, k in zip((de, en), kinds, strict=True)]
    unit = OpusInput(OpusFormat.MOSES, (sides[0], sides[1]))
    pairs, _, dead, _ = assert_same(unit, ranges=4)
    assert all(isinstance(item, MosesBlock) for item in read_unit(unit))
    assert [p.origin_line for p in pairs] == [1, 2, 4, 6, 8, 10]
    assert sorted(d.origin_line or 0 for d in dead) == [5, 9]


def test_compressed_sides_over_the_limit_of_different_lengths_or_damaged(tmp_path: Path) -> None:
    long = "x" * (MAX_LINE_BYTES + 1)
    de = (
        _compressed(tmp_path / "l.de-en.de", "gz")
        if _write(tmp_path / "l.de-en.de", [*DE[1:3], long, "Gut."])
        else ""
    )
    en = _write(tmp_path / "l.de-en.en", [*EN[1:3], "Fine.", "Good."])
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=2)
    assert [d.reason for d in dead] == ["read_line_too_long"]
    # different lengths: refused whole, as the reader refuses them
    _write(tmp_path / "m.de-en.de", DE)
    de = _compressed(tmp_path / "m.de-en.de", "xz")
    en = _write(tmp_path / "m.de-en.en", EN[:-1])
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=0)
    assert [d.reason for d in dead] == ["align_line_count_mismatch"]
    # a side cut short: the reader reads the lines before the damage and says what broke
    _write(tmp_path / "d.de-en.de", DE * 40)
    de = _compressed(tmp_path / "d.de-en.de", "gz")
    Path(de).write_bytes(Path(de).read_bytes()[:-40])
    en = _write(tmp_path / "d.de-en.en", EN * 40)
    pairs, _, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=0)
    assert pairs and dead[-1].reason == "read_unreadable"


def test_a_compressed_side_shorter_than_its_counted_lines_fails(tmp_path: Path) -> None:
    """The second pass cuts where the first found the lines: a side that no longer has
    those bytes (it changed in between) fails the read, never a block cut short."""
    de = _compressed(Path(_write(tmp_path / "t.de-en.de", DE)), "gz")
    en = _compressed(Path(_write(tmp_path / "t.de-en.en", EN)), "gz")
    unit = MosesUnit(OpusInput(OpusFormat.MOSES, (de, en)), "de", "en", "t")
    whole = len(gzip.decompress(Path(de).read_bytes()))
    for src_end, blocks in ((whole, 1), (whole + 1, None)):
        with gzip.open(de) as src, gzip.open(en) as trg:
            read = bitext_plan._blocks(unit, (src, trg), [0, src_end], [0, 10])
            if blocks is not None:
                assert len(list(read)) == blocks
                continue
            with pytest.raises(EOFError, match="changed while it was read"):
                list(read)


def _zip(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return str(path)


def _side(lines: list[str], newline_at_end: bool = True) -> bytes:
    return b"\n".join(_raw(line) for line in lines) + (b"\n" if newline_at_end else b"")


def test_an_opus_zip_read_by_blocks_as_the_reader_reads_it(tmp_path: Path) -> None:
    """Two member pairs (one without a pair of its own) and a README: every pair's blocks
    carry its member as the pairs' origin, and the zip is one unit for its note."""
    members = {
        "README": b"not a side",
        "A.de-en.de": _side(DE),
        "A.de-en.en": _side(EN, newline_at_end=False),
        "B.de-en.de": _side(["", "\xff", "Nur hier."]),
        "B.de-en.en": _side(["x", "y", " "]),
    }
    unit = OpusInput(OpusFormat.MOSES, (_zip(tmp_path / "de-en.txt.zip", members),))
    pairs, _, dead, _ = assert_same(unit, ranges=4 + 1)
    assert all(isinstance(item, MosesBlock) for item in read_unit(unit))
    assert {p.origin_member for p in pairs} == {"A.de-en.de"}
    assert {d.origin_member for d in dead} == {"A.de-en.de", "B.de-en.de"}
    assert pairs[0].dataset == "A"
    assert_same(unit, ranges=5, dataset="Mine")
    # no member pair with a pair: the zip's note, once
    members = {k: v for k, v in members.items() if k.startswith("B.")}
    unit = OpusInput(OpusFormat.MOSES, (_zip(tmp_path / "b.zip", members),))
    _, _, dead, _ = assert_same(unit, ranges=1)
    assert sorted(d.reason for d in dead) == ["read_decode_error", "read_no_records"]


def test_opus_zips_the_blocks_cannot_take_stay_with_the_reader(tmp_path: Path) -> None:
    """A pair of different lengths, no member pair, only empty members, a damaged member:
    the reader reads the whole zip and says what is wrong where it is."""
    good = {"A.de-en.de": _side(DE), "A.de-en.en": _side(EN)}
    zips = {
        "mismatch": {**good, "B.de-en.de": _side(DE), "B.de-en.en": _side(EN[:-1])},
        "no-pair": {"README": b"x", "A.de-en.de": _side(DE)},
        "empty": {"A.de-en.de": b"", "A.de-en.en": b""},
    }
    reasons = {
        "mismatch": "align_line_count_mismatch",
        "no-pair": "read_missing_member",
        "empty": "read_no_records",
    }
    for name, members in zips.items():
        unit = OpusInput(OpusFormat.MOSES, (_zip(tmp_path / f"{name}.zip", members),))
        _, _, dead, _ = assert_same(unit, ranges=0)
        assert reasons[name] in {d.reason for d in dead}, name
    damaged = Path(
        _zip(
            tmp_path / "damaged.zip",
            {**good, "B.de-en.de": _side(DE * 50), "B.de-en.en": _side(EN * 50)},
        )
    )
    data = damaged.read_bytes()
    at = data.index(b"B.de-en.de") + 200  # inside the member's compressed bytes
    damaged.write_bytes(data[:at] + bytes(64) + data[at + 64 :])
    pairs, _, dead, _ = assert_same(OpusInput(OpusFormat.MOSES, (str(damaged),)), ranges=0)
    assert pairs and dead[-1].reason == "read_unreadable"


def test_nameless_sides_stay_with_the_reader(tmp_path: Path) -> None:
    src = _write(tmp_path / "a.txt", DE[5:])
    trg = _write(tmp_path / "b.txt", EN[5:])
    unit = OpusInput(OpusFormat.MOSES, (src, trg))
    assert_same(unit, ranges=2, src_lang="de", trg_lang="en")
    assert_same(unit, ranges=0)  # no language: the reader's dead letter


def _hostile_inputs(folder: Path, compressed: bool) -> tuple[str, ...]:
    """Moses and TSV files of hostile lines: plain; or a gzip side beside a bz2 side, an
    OPUS zip and a gzip TSV file."""
    folder.mkdir()
    de = _write(folder / "t.de-en.de", DE * 3)
    en = _write(folder / "t.de-en.en", EN * 3, newline_at_end=False)
    tsv = _write(folder / "tatoeba.tsv", TSV * 2)
    if not compressed:
        return de, en, tsv
    return (
        _compressed(Path(de), "gz"),
        _compressed(Path(en), "bz2"),
        _zip(folder / "fr-it.txt.zip", {"Z.fr-it.fr": _side(DE * 3), "Z.fr-it.it": _side(EN * 3)}),
        _compressed(Path(tsv), "gz"),
    )


@pytest.mark.parametrize(
    ("compressed", "kinds", "read"),
    [(False, MosesRange | TsvRange, 10 + 6), (True, MosesBlock | TsvBlock, 10 + 10 + 6)],
)
def test_a_build_of_hostile_files_publishes_the_pipelines_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool, kinds: Any, read: int
) -> None:
    """The pipeline reads them with the readers; the local engine's workers by ranges or
    blocks (counted where this process filters: one worker)."""
    tasks: list[Range] = []

    def counted(task: Range) -> Any:
        tasks.append(task)
        return read_range(task)

    monkeypatch.setattr(bitext_filter, "read_range", counted)
    inputs = _hostile_inputs(tmp_path / "in", compressed)
    expected = same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(inputs=inputs, out=str(out), rows_per_shard=2),
        tmp_path,
    )
    assert any(name.startswith(f"{DEAD_LETTERS}/") for name in expected)
    assert len(tasks) == read and all(isinstance(task, kinds) for task in tasks)


def test_the_engine_cuts_units_into_ranges(tmp_path: Path) -> None:
    """The build above is honest only if its files went to the workers by ranges."""
    de = _write(tmp_path / "t.de-en.de", DE)
    en = _write(tmp_path / "t.de-en.en", EN)
    items = list(read_unit(OpusInput(OpusFormat.MOSES, (de, en))))
    assert [i.first_line for i in items if isinstance(i, MosesRange)] == [1, 4, 7, 10]
    sizes = [len(line.encode("utf-8", "surrogateescape")) for line in DE]
    assert items[1].src[0] == sum(sizes[:3]) + 3  # line 4 starts after three lines and \n


def test_a_mark_and_a_blank_side_in_ranges_that_decode_whole(tmp_path: Path) -> None:
    de = _write(tmp_path / "t.de-en.de", ["\ufeffEins.", "Zwei.", "Drei.", "Vier.", "Fünf."])
    en = _write(tmp_path / "t.de-en.en", ["One.", "Two.", "Three.", "Four.", " \t"])
    pairs, counts, _, _ = assert_same(OpusInput(OpusFormat.MOSES, (de, en)), ranges=2)
    assert pairs[0].src == "Eins."
    assert counts[("skip", "align_empty_side")] == 1


TSV = [
    "\ufeffdeu\teng\tEin Satz.\tA sentence.",  # tatoeba, with a byte-order mark
    "deu\teng\tZeile mit\r Wagenrücklauf.\tA lone carriage return.\r",
    "fra\teng\tUne phrase.\tA sentence.",
    "deu\teng\t \tBlank first side.",
    "xx!\teng\tKeine Sprache.\tNo language.",
    "deu\teng\tLetzter Satz.\tThe last one.\r",
    "deu\teng\tKaputt \xff.\tBroken.",
    "deu\teng\tZu wenige Spalten.\r",  # without a \n, its excerpt keeps the \r
]


@pytest.mark.parametrize("newline_at_end", [True, False])
def test_tsv_lines_read_by_ranges_as_the_reader_reads_them(
    tmp_path: Path, newline_at_end: bool
) -> None:
    path = _write(tmp_path / "tatoeba.tsv", TSV, newline_at_end=newline_at_end)
    pairs, counts, dead, _ = assert_same(OpusInput(OpusFormat.TSV, (path,)), ranges=3)
    assert [(p.src_lang, p.origin_line) for p in pairs] == [
        ("de", 1),
        ("de", 2),
        ("fr", 3),
        ("de", 6),
    ]
    assert pairs[0].src == "Ein Satz."
    assert sorted(d.reason for d in dead) == [
        "parse_column_count",
        "parse_missing_lang",
        "read_decode_error",
    ]
    assert counts[("skip", "align_empty_side")] == 1


@pytest.mark.parametrize("kind", ["gz", "xz"])
def test_compressed_tsv_read_by_blocks_as_the_reader_reads_it(tmp_path: Path, kind: str) -> None:
    """A compressed TSV file goes to the workers as decompressed blocks; one whose first
    line tells no layout, or that is damaged, stays with the reader."""
    path = _compressed(Path(_write(tmp_path / "tatoeba.tsv", TSV, newline_at_end=False)), kind)
    unit = OpusInput(OpusFormat.TSV, (path,))
    pairs, _, dead, _ = assert_same(unit, ranges=3)
    assert all(isinstance(item, TsvBlock) for item in read_unit(unit))
    assert [p.origin_line for p in pairs] == [1, 2, 3, 6]
    assert len(dead) == 3
    nameless = _compressed(Path(_write(tmp_path / "a.de-en.tsv", ["one column", *TSV[2:4]])), kind)
    assert_same(OpusInput(OpusFormat.TSV, (nameless,)), ranges=0)
    damaged = Path(_compressed(Path(_write(tmp_path / "d.tsv", TSV * 40)), kind))
    damaged.write_bytes(damaged.read_bytes()[:-40])
    pairs, _, dead, _ = assert_same(OpusInput(OpusFormat.TSV, (str(damaged),)), ranges=0)
    assert pairs and dead[-1].reason == "read_unreadable"


def test_tsv_layouts_languages_scores_and_parts(tmp_path: Path) -> None:
    wiki = ["1.25\tEin Satz.\tA sentence.", "oops\tKein Wert.\tNo score.", "1.0\t\tx"] * 2
    path = _write(tmp_path / "WikiMatrix.de-en.tsv", wiki)
    pairs, _, _, _ = assert_same(OpusInput(OpusFormat.TSV, (path,)), ranges=2)
    assert [p.score for p in pairs] == [1.25, 1.25]
    first = ["Hello.\tHallo.\tServus.", "One.\tEins.", "\tLeer."] * 2
    path = _write(tmp_path / "TED2020-en-de-train.tsv", first)
    unit = OpusInput(OpusFormat.TSV, (path,))
    pairs, _, _, _ = assert_same(unit, ranges=2, tsv_layout="english_first")
    assert [(p.origin_line, p.origin_part) for p in pairs][:3] == [(1, 0), (1, 1), (2, 0)]
    assert_same(unit, ranges=0, src_lang="en", trg_lang="de")  # 3 columns tell no layout
    path = _write(tmp_path / "pairs.tsv", ["Eins.\tOne.", "Zwei.\tTwo."])
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.TSV, (path,)), ranges=1)
    assert sorted(d.reason for d in dead) == ["parse_missing_lang"] * 2 + ["read_no_records"]


def test_tsv_files_whose_first_line_tells_no_layout_stay_with_the_reader(tmp_path: Path) -> None:
    for name, lines in [
        ("a.de-en.tsv", ["one column only", *TSV[2:4]]),
        ("b.de-en.tsv", ["\xff\tbad first line", *TSV[2:4]]),
        ("c.de-en.tsv", ["x" * (MAX_LINE_BYTES + 1), *TSV[2:4]]),
    ]:
        path = _write(tmp_path / name, lines)
        assert_same(OpusInput(OpusFormat.TSV, (path,)), ranges=0)
    path = _write(tmp_path / "d.de-en.tsv", ["one column only", "x\ty"])
    assert_same(OpusInput(OpusFormat.TSV, (path,)), ranges=1, tsv_layout="pair")
    (tmp_path / "e.de-en.tsv").write_bytes(b"")
    assert_same(OpusInput(OpusFormat.TSV, (str(tmp_path / "e.de-en.tsv"),)), ranges=0)


def test_a_tsv_line_over_the_limit_and_a_tsv_file_without_a_pair(tmp_path: Path) -> None:
    lines = ["Eins.\tOne.", "x" * MAX_LINE_BYTES + "\tTwo.", "Drei.\t ", "y" * (MAX_LINE_BYTES - 1)]
    path = _write(tmp_path / "t.de-en.tsv", lines)
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.TSV, (path,)), ranges=2)
    assert [d.reason for d in dead] == ["read_line_too_long", "parse_column_count"]
    path = _write(tmp_path / "u.de-en.tsv", ["Eins.\t", "\xff\tTwo."])
    _, _, dead, _ = assert_same(OpusInput(OpusFormat.TSV, (path,)), ranges=1)
    assert sorted(d.reason for d in dead) == ["read_decode_error", "read_no_records"]
