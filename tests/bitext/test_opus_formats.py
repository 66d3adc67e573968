"""Format detection, planning read units and dispatch; file-name conventions."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from corpusforge.sources.opus import (
    OpusFormat,
    OpusInput,
    RawPair,
    UnknownFormatError,
    detect_format,
    infer_dataset,
    languages_from_name,
    plan_inputs,
    read_opus,
)
from corpusforge.sources.opus.records import DeadLetter


@pytest.mark.parametrize(
    ("name", "langs", "dataset"),
    [
        ("de-en.tmx.gz", ("de", "en"), "unknown"),
        ("RF_v1_tmx_de-en.tmx.gz", ("de", "en"), "RF"),
        ("OpenSubtitles_v2018_xml_pt_br-zh_cn.xml.gz", ("pt", "zh"), "OpenSubtitles"),
        ("WikiMatrix.de-en.tsv.gz", ("de", "en"), "WikiMatrix"),
        ("tatoeba.deu-eng.deu", ("de", "en"), "tatoeba"),
        ("TED2020-en-de-train.tsv.gz", ("en", "de"), "TED2020"),
        ("news-commentary-v14.de-en.tsv", ("de", "en"), "news-commentary-v14"),
        ("gs://bucket/dir/Europarl.en-fr.en", ("en", "fr"), "Europarl"),
        ("RF-tokenized.en", None, "RF-tokenized"),
    ],
)
def test_names(name: str, langs: tuple[str, str] | None, dataset: str) -> None:
    assert languages_from_name(name) == langs
    assert infer_dataset(name) == dataset


def test_detect_by_name_without_reading() -> None:
    # these files do not exist: the name alone decides
    assert detect_format("/nowhere/de-en.tmx.gz") is OpusFormat.TMX
    assert detect_format("/nowhere/de-en.txt.zip") is OpusFormat.MOSES
    assert detect_format("/nowhere/WikiMatrix.de-en.tsv.gz") is OpusFormat.TSV


def test_detect_by_content(tmp_path: Path, realdata: Path) -> None:
    rf = realdata / "opus-rf-sample" / "t"
    assert detect_format(str(rf / "xml" / "de-en.xml.gz")) is OpusFormat.XCES
    assert detect_format(str(rf / "xml" / "sv-fr.xml")) is OpusFormat.XCES
    assert detect_format(str(rf / "moses" / "RF-tokenized.en")) is OpusFormat.MOSES
    tatoeba = realdata / "tatoeba-laser-v1" / "tatoeba.ara-eng.ara"
    assert detect_format(str(tatoeba)) is OpusFormat.MOSES
    with pytest.raises(UnknownFormatError, match="sentence document"):
        detect_format(str(rf / "xml" / "en" / "1988.xml.gz"))
    tmx = tmp_path / "memory.xml.gz"
    tmx.write_bytes(gzip.compress(b'<?xml version="1.0"?>\n<tmx version="1.4"><body/></tmx>'))
    assert detect_format(str(tmx)) is OpusFormat.TMX
    (tmp_path / "test.txt").write_text("eng\tdeu\tHi\tHallo\n", encoding="utf-8")
    assert detect_format(str(tmp_path / "test.txt")) is OpusFormat.TSV
    (tmp_path / "notes.txt").write_text("nothing to see\n", encoding="utf-8")
    with pytest.raises(UnknownFormatError):
        detect_format(str(tmp_path / "notes.txt"))


def test_plan_pairs_real_tatoeba_sides(realdata: Path) -> None:
    files = sorted(str(p) for p in (realdata / "tatoeba-laser-v1").glob("tatoeba.*"))
    units = plan_inputs(files)
    assert len(units) == 6 and all(isinstance(u, OpusInput) for u in units)
    for unit in units:
        assert isinstance(unit, OpusInput) and unit.format is OpusFormat.MOSES
        src, trg = (Path(u).name for u in unit.uris)
        assert not src.endswith(".eng") and trg.endswith(".eng")  # l1 of "xxx-eng" first


def test_plan_orders_undeclared_sides_alphabetically_and_reports_strays(
    realdata: Path, tmp_path: Path
) -> None:
    moses = realdata / "opus-rf-sample" / "t" / "moses"
    stray = tmp_path / "lonely.de"
    stray.write_text("allein\n", encoding="utf-8")
    sides = [str(moses / "RF-tokenized.fr"), str(moses / "RF-tokenized.en")]
    units = plan_inputs([*sides, str(stray)])
    letters = [u for u in units if isinstance(u, DeadLetter)]
    assert [(d.reason, d.origin_file) for d in letters] == [("read_unpaired_file", "lonely.de")]
    (unit,) = [u for u in units if isinstance(u, OpusInput)]
    assert [Path(u).name for u in unit.uris] == ["RF-tokenized.en", "RF-tokenized.fr"]


def test_plan_reports_unknown_formats_and_honours_the_override(tmp_path: Path) -> None:
    odd = tmp_path / "odd.data"
    odd.write_text("no tabs here\n", encoding="utf-8")
    (letter,) = plan_inputs([str(odd)])
    assert isinstance(letter, DeadLetter) and letter.reason == "read_unknown_format"
    (unit,) = plan_inputs([str(odd)], format="tsv")
    assert unit == OpusInput(OpusFormat.TSV, (str(odd),))


def test_opus_input_checks_its_file_count() -> None:
    with pytest.raises(ValueError, match="takes 2 file"):
        OpusInput(OpusFormat.MOSES, ("a.de",))
    with pytest.raises(ValueError, match="takes 1 file"):
        OpusInput(OpusFormat.TMX, ("a.tmx", "b.tmx"))


def test_read_opus_dispatches_every_format(realdata: Path, tmp_path: Path) -> None:
    rf = realdata / "opus-rf-sample" / "t"
    xces = plan_inputs([str(rf / "xml" / "en-fr.xml.gz")])
    moses = plan_inputs([str(p) for p in sorted((rf / "moses").glob("RF-tokenized.*"))])
    tsv = tmp_path / "x.de-en.tsv"
    tsv.write_text("Hallo\tHello\n", encoding="utf-8")
    counts = []
    for units in (xces, moses, plan_inputs([str(tsv)])):
        (unit,) = units
        assert isinstance(unit, OpusInput)
        counts.append(sum(isinstance(i, RawPair) for i in read_opus(unit, dataset="RF")))
    assert counts == [175, 175, 1]


def test_plan_pairs_two_nameless_files_when_the_languages_are_given(tmp_path: Path) -> None:
    for name in ("target.txt", "source.txt", "notes.data"):
        (tmp_path / name).write_text("Hallo Welt\n", encoding="utf-8")
    (tmp_path / "page.xml").write_text("<html/>\n", encoding="utf-8")
    two = [str(tmp_path / "target.txt"), str(tmp_path / "source.txt")]
    assert [u.reason for u in plan_inputs(two) if isinstance(u, DeadLetter)] == [
        "read_unknown_format"
    ] * 2
    (unit,) = plan_inputs(two, src_lang="de", trg_lang="en")
    assert isinstance(unit, OpusInput) and unit.format is OpusFormat.MOSES
    assert [Path(u).name for u in unit.uris] == ["source.txt", "target.txt"]  # name order
    three = plan_inputs([*two, str(tmp_path / "notes.data")], src_lang="de", trg_lang="en")
    assert {u.reason for u in three if isinstance(u, DeadLetter)} == {"read_unpaired_file"}
    assert "--src-lang/--trg-lang pair exactly two" in three[0].detail  # type: ignore[union-attr]
    # XML of no known kind stays an unknown format
    (xml,) = plan_inputs([str(tmp_path / "page.xml")], src_lang="de", trg_lang="en")
    assert isinstance(xml, DeadLetter) and xml.reason == "read_unknown_format"


def test_nothing_read_from_a_unit_is_a_dead_letter_naming_it(tmp_path: Path) -> None:
    (tmp_path / "empty.de-en.tmx").write_text('<tmx version="1.4"><body/></tmx>\n', "utf-8")
    (unit,) = plan_inputs([str(tmp_path / "empty.de-en.tmx")])
    assert isinstance(unit, OpusInput)
    (letter,) = read_opus(unit)
    assert isinstance(letter, DeadLetter)
    assert (letter.reason, letter.origin_file) == ("read_no_records", "empty.de-en.tmx")
    expected = "no pair could be read from empty.de-en.tmx (tmx): the input holds no record"
    assert letter.detail == expected
    one = (
        '<tu><tuv xml:lang="en-US"><seg>Color</seg></tuv>'
        '<tuv xml:lang="en-GB"><seg>Colour</seg></tuv></tu>'
    )
    (tmp_path / "one.tmx").write_text(f'<tmx version="1.4"><body>{one}</body></tmx>', "utf-8")
    items = list(read_opus(OpusInput(OpusFormat.TMX, (str(tmp_path / "one.tmx"),))))
    assert [i.reason for i in items] == ["parse_one_language", "read_no_records"]  # type: ignore[union-attr]
    assert "only parse_one_language 1" in items[-1].detail  # type: ignore[union-attr]


def test_moses_side_languages_from_the_flags_where_names_carry_none(
    realdata: Path, tmp_path: Path
) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    src, trg = tmp_path / "train.src", tmp_path / "train.tgt"
    src.write_bytes((tatoeba / "tatoeba.deu-eng.deu").read_bytes())
    trg.write_bytes((tatoeba / "tatoeba.deu-eng.eng").read_bytes())
    (unit,) = plan_inputs([str(src), str(trg)], src_lang="deu", trg_lang="eng")
    assert isinstance(unit, OpusInput)
    first = next(read_opus(unit, src_lang="deu", trg_lang="eng"))
    assert isinstance(first, RawPair) and first.lang_pair == "de-en"
    # a name that says its language wins over the flag
    named = OpusInput(
        OpusFormat.MOSES,
        (str(tatoeba / "tatoeba.deu-eng.deu"), str(tatoeba / "tatoeba.deu-eng.eng")),
    )
    pair = next(read_opus(named, src_lang="fr", trg_lang="en"))
    assert isinstance(pair, RawPair) and pair.lang_pair == "de-en"
