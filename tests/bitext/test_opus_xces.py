"""XCES alignments: the real OPUS RF sample, and generated edge cases."""

from __future__ import annotations

import gzip
import re
import zipfile
import zlib
from pathlib import Path

import pytest

from corpusforge.sources.opus.records import DeadLetter, RawPair, Skipped
from corpusforge.sources.opus.streams import open_decompressed
from corpusforge.sources.opus.xces import load_sentences, parse_xtargets, read_xces

HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE cesAlign PUBLIC "" "dtd/x.dtd">\n'


def _rf(realdata: Path) -> Path:
    return realdata / "opus-rf-sample" / "t"


def _split(items: list) -> tuple[list[RawPair], list[DeadLetter], list[Skipped]]:
    return (
        [i for i in items if isinstance(i, RawPair)],
        [i for i in items if isinstance(i, DeadLetter)],
        [i for i in items if isinstance(i, Skipped)],
    )


def test_real_en_fr_matches_opus_moses_export(realdata: Path) -> None:
    """OPUS's own Moses export of RF en-fr is what our XCES reader must produce."""
    pairs, letters, skips = _split(list(read_xces(str(_rf(realdata) / "xml" / "en-fr.xml.gz"))))
    moses = _rf(realdata) / "moses"
    en = (moses / "RF-tokenized.en").read_text(encoding="utf-8").split("\n")[:-1]
    fr = (moses / "RF-tokenized.fr").read_text(encoding="utf-8").split("\n")[:-1]
    assert [(p.src, p.trg) for p in pairs] == list(zip(en, fr, strict=True))
    assert not letters
    assert len(skips) == 5 and {s.reason for s in skips} == {"align_empty_side"}
    assert {(p.src_lang, p.trg_lang) for p in pairs} == {("en", "fr")}


def test_real_de_en_many_to_one_and_origins(realdata: Path) -> None:
    xml = _rf(realdata) / "xml"
    pairs, letters, skips = _split(list(read_xces(str(xml / "de-en.xml.gz"), dataset="RF")))
    assert (len(pairs), len(letters), len(skips)) == (177, 0, 2)
    first = pairs[0]
    assert (first.origin_file, first.origin_line) == ("de-en.xml.gz", 5)
    assert first.origin_member == "de/1988.xml.gz|en/1988.xml.gz"
    assert first.score == pytest.approx(4.26176)
    assert first.dataset == "RF"
    # <link xtargets="s4.1;s4.1 s4.2"> joins two English sentences with a space
    with open_decompressed(str(xml / "en" / "1988.xml.gz")) as stream:
        english = load_sentences(stream)
    joined = next(p for p in pairs if p.trg.startswith(english["s4.1"]))
    assert joined.trg == f"{english['s4.1']} {english['s4.2']}"
    assert english["s1.1"].startswith("Statement of Government Policy by the Prime Minister ,")


def test_real_languages_come_from_document_folders(realdata: Path) -> None:
    xml = _rf(realdata) / "xml"
    pairs, _, _ = _split(list(read_xces(str(xml / "sv-de-en.xml"))))
    assert [(p.src_lang, p.trg_lang) for p in pairs] == [("sv", "de")] * 9 + [("sv", "en")] * 9
    sv_fr, _, _ = _split(list(read_xces(str(xml / "sv-fr.xml"))))
    assert sv_fr[0].src.count(" . ") == 1  # "s5.1 s5.2" joined
    assert list(read_xces(str(xml / "de-en.xml"))) == []  # an empty <cesAlign>


def _sentence_doc(path: Path, sentences: dict[str, str], *, tokens: bool = True) -> None:
    body = []
    for sid, text in sentences.items():
        inner = "".join(f"<w>{w}</w>" for w in text.split()) if tokens else text
        body.append(f'<s id="{sid}">{inner}</s>')
    xml = f'<?xml version="1.0" encoding="utf-8"?>\n<text><p>{"".join(body)}</p></text>\n'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(xml.encode()) if path.suffix == ".gz" else xml.encode())


def _alignment(
    path: Path, groups: list[tuple[str, str, list[str]]], tail: str = "</cesAlign>\n"
) -> str:
    lines = [HEAD, '<cesAlign version="1.0">\n']
    for from_doc, to_doc, links in groups:
        lines.append(f'<linkGrp targType="s" fromDoc="{from_doc}" toDoc="{to_doc}">\n')
        lines.extend(f'<link xtargets="{x}" />\n' for x in links)
        lines.append("</linkGrp>\n")
    lines.append(tail)
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    xml = tmp_path / "xml"
    _sentence_doc(xml / "de" / "a.xml.gz", {"s1": "Guten Morgen", "s2": "Wie geht es", "s3": "Gut"})
    english = {"s1": "Good morning", "s2": "How are you"}
    _sentence_doc(xml / "en" / "a.xml.gz", english, tokens=False)
    return xml


def test_links_out_of_order_bad_and_missing(corpus: Path) -> None:
    uri = _alignment(
        corpus / "de-en.xml",
        [("de/a.xml.gz", "en/a.xml.gz", ["s2;s2", "s9;s1", "s1", "s2 s3;", "s1;s1"])],
    )
    items = list(read_xces(uri, dataset="demo"))
    assert [type(i).__name__ for i in items] == [
        "RawPair",
        "DeadLetter",
        "DeadLetter",
        "Skipped",
        "RawPair",
    ]
    assert isinstance(items[0], RawPair) and (items[0].src, items[0].trg) == (
        "Wie geht es",
        "How are you",
    )
    assert isinstance(items[1], DeadLetter) and items[1].reason == "align_missing_sentence"
    assert "de/a.xml.gz#s9" in items[1].detail and items[1].origin_line == 6
    assert isinstance(items[2], DeadLetter) and items[2].reason == "align_bad_xtargets"
    assert isinstance(items[4], RawPair) and items[4].origin_line == 9


def test_missing_document_is_one_letter_and_counted_skips(corpus: Path) -> None:
    uri = _alignment(
        corpus / "de-en.xml",
        [
            ("de/gone.xml.gz", "en/a.xml.gz", ["s1;s1", "s2;s2"]),
            ("de/a.xml.gz", "en/a.xml.gz", ["s1;s1"]),
        ],
    )
    items = list(read_xces(uri))
    assert isinstance(items[0], DeadLetter) and items[0].reason == "align_missing_document"
    assert "de/gone.xml.gz" in items[0].detail
    assert [i.reason for i in items[1:3] if isinstance(i, Skipped)] == [
        "align_group_unavailable"
    ] * 2
    assert isinstance(items[3], RawPair) and items[3].src == "Guten Morgen"


def test_malformed_alignment_keeps_links_before_the_error(corpus: Path) -> None:
    uri = _alignment(
        corpus / "de-en.xml", [("de/a.xml.gz", "en/a.xml.gz", ["s1;s1"])], tail="<link </cesAlign>"
    )
    items = list(read_xces(uri))
    assert isinstance(items[0], RawPair)
    assert isinstance(items[-1], DeadLetter) and items[-1].reason == "read_xml_error"
    assert items[-1].origin_line == 7


def test_documents_from_opus_language_zips_and_gzipped_alignment(tmp_path: Path) -> None:
    root = tmp_path / "xml"
    root.mkdir()
    for lang, text in (("de", "Hallo Welt"), ("en", "Hello world")):
        doc = tmp_path / "doc.xml"
        _sentence_doc(doc, {"s1.1": text})
        # opus_get's name for the German zip, OPUS's plain name for the English one
        name = "Corp_v1_xml_de.zip" if lang == "de" else f"{lang}.zip"
        with zipfile.ZipFile(root / name, "w") as zf:
            zf.write(doc, f"Corp/xml/{lang}/1.xml")
    align = tmp_path / "de-en.xml"
    _alignment(align, [("de/1.xml.gz", "en/1.xml.gz", ["s1.1;s1.1"])])
    (root / "de-en.xml.gz").write_bytes(gzip.compress(align.read_bytes()))
    items = list(read_xces(str(root / "de-en.xml.gz"), dataset="Corp"))
    pairs = [(i.src, i.trg) for i in items if isinstance(i, RawPair)]
    assert pairs == [("Hallo Welt", "Hello world")]


def test_documents_root_override(corpus: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "alignments"
    elsewhere.mkdir()
    uri = _alignment(elsewhere / "de-en.xml", [("de/a.xml.gz", "en/a.xml.gz", ["s3;s1"])])
    items = list(read_xces(uri, documents_root=str(corpus)))
    assert isinstance(items[0], RawPair) and (items[0].src, items[0].trg) == ("Gut", "Good morning")


def test_parse_xtargets() -> None:
    assert parse_xtargets("s1 s2;s1") == (["s1", "s2"], ["s1"])
    assert parse_xtargets(";s8.1") == ([], ["s8.1"])
    with pytest.raises(ValueError, match="exactly one"):
        parse_xtargets("s1;s2;s3")


def test_truncated_gzipped_alignment_keeps_every_link_before_the_damage(
    realdata: Path, tmp_path: Path
) -> None:
    xml = _rf(realdata) / "xml"
    body = (xml / "de-en.xml.gz").read_bytes()
    cut = tmp_path / "de-en.xml.gz"
    cut.write_bytes(body[: len(body) // 2])
    whole, _, _ = _split(list(read_xces(str(xml / "de-en.xml.gz"))))
    pairs, letters, skips = _split(list(read_xces(str(cut), documents_root=str(xml))))
    complete = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body[: len(body) // 2])
    assert len(pairs) + len(skips) == len(re.findall(rb"<link [^>]*/>", complete)) > 50
    assert [(p.src, p.trg) for p in pairs] == [(p.src, p.trg) for p in whole[: len(pairs)]]
    assert [letter.reason for letter in letters] == ["read_unreadable"]
    assert "stream broke" in letters[0].detail


def test_every_document_missing_ends_with_read_no_records(corpus: Path) -> None:
    from corpusforge.sources.opus.formats import OpusFormat, OpusInput, read_opus

    uri = _alignment(
        corpus / "de-en.xml",
        [
            ("de/gone.xml.gz", "en/a.xml.gz", ["s1;s1", "s2;s2"]),
            ("de/a.xml.gz", "en/lost.xml.gz", ["s1;s1"]),
        ],
    )
    items = list(read_opus(OpusInput(OpusFormat.XCES, (uri,))))
    letters = [i for i in items if isinstance(i, DeadLetter)]
    assert [d.reason for d in letters] == ["align_missing_document"] * 2 + ["read_no_records"]
    assert letters[-1].origin_file == "de-en.xml" and letters[-1].origin_line is None
    assert "align_group_unavailable 3" in letters[-1].detail


def test_a_truncated_document_keeps_its_complete_sentences(realdata: Path, tmp_path: Path) -> None:
    xml = _rf(realdata) / "xml"
    root = tmp_path / "xml"
    (root / "de").mkdir(parents=True)
    (root / "en").mkdir()
    (root / "en" / "1988.xml.gz").write_bytes((xml / "en" / "1988.xml.gz").read_bytes())
    german = (xml / "de" / "1988.xml.gz").read_bytes()
    (root / "de" / "1988.xml.gz").write_bytes(german[: len(german) * 2 // 3])
    alignment = (xml / "de-en.xml.gz").read_bytes()
    (root / "de-en.xml.gz").write_bytes(alignment)
    group = "de/1988.xml.gz|en/1988.xml.gz"  # the other groups' documents are not copied
    whole = [p for p in read_xces(str(xml / "de-en.xml.gz")) if isinstance(p, RawPair)]
    whole = [p for p in whole if p.origin_member == group]
    pairs, letters, _ = _split(list(read_xces(str(root / "de-en.xml.gz"))))
    letters = [d for d in letters if d.origin_member == group]
    assert 0 < len(pairs) < len(whole)
    assert {(p.src, p.trg) for p in pairs} <= {(p.src, p.trg) for p in whole}
    damaged = [d for d in letters if d.reason == "read_unreadable"]
    assert len(damaged) == 1 and "de/1988.xml.gz" in damaged[0].detail
    assert "Compressed file ended" in damaged[0].detail
    lost = [d for d in letters if d.reason == "align_missing_sentence"]
    assert len(pairs) + len(lost) == len(whole)  # every link is a pair or says why not
