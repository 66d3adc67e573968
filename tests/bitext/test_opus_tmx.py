"""TMX translation memories, from tiny generated files."""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

from corpusforge.sources.opus.records import DeadLetter, Origin, RawPair, Skipped
from corpusforge.sources.opus.tmx import parse_tu, read_tmx, seg_text

TMX = """<?xml version="1.0" encoding="utf-8"?>
<tmx version="1.4">
<header srclang="de" adminlang="en" segtype="sentence" datatype="plaintext" o-tmf="x"/>
<body>
<tu>
  <tuv xml:lang="de"><seg>Guten Morgen</seg></tuv>
  <tuv xml:lang="en"><seg>Good morning</seg></tuv>
</tu>
<tu>
  <tuv xml:lang="de"><seg>eins</seg></tuv>
  <tuv xml:lang="en"><seg>one</seg></tuv>
  <tuv xml:lang="fr"><seg>un</seg></tuv>
</tu>
<tu>
  <tuv xml:lang="de"><seg>Das ist <bpt i="1">&lt;b&gt;</bpt>fett<ept i="1">&lt;/b&gt;</ept>
    und <hi>so</hi></seg></tuv>
  <tuv xml:lang="en-GB"><seg>That is <ph>&lt;br/&gt;</ph>bold and <hi>so</hi></seg></tuv>
</tu>
<tu>
  <tuv><seg>ohne Sprache</seg></tuv>
  <tuv xml:lang="en"><seg>no language</seg></tuv>
</tu>
<tu>
  <tuv xml:lang="de"><seg>  </seg></tuv>
  <tuv xml:lang="en"><seg>blank</seg></tuv>
</tu>
<tu>
  <tuv lang="DE"><seg>Tschüss</seg></tuv>
  <tuv lang="EN"><seg>Bye</seg></tuv>
</tu>
</body>
</tmx>
"""


def test_tmx_units_pairs_letters_and_skips(tmp_path: Path) -> None:
    path = tmp_path / "Demo_v1_tmx_de-en.tmx"
    path.write_text(TMX, encoding="utf-8")
    items = list(read_tmx(str(path)))
    assert [type(i).__name__ for i in items] == [
        "RawPair",
        "RawPair",
        "RawPair",
        "RawPair",
        "DeadLetter",
        "Skipped",
        "RawPair",
    ]
    first, de, fr, inline, nolang, blank, legacy = items
    assert isinstance(first, RawPair)
    assert (first.src, first.trg, first.src_lang, first.trg_lang) == (
        "Guten Morgen",
        "Good morning",
        "de",
        "en",
    )
    assert (first.dataset, first.origin_file, first.origin_line) == (
        "Demo",
        "Demo_v1_tmx_de-en.tmx",
        5,
    )
    # a unit of three languages: English with each other one, keys unique by part
    assert isinstance(de, RawPair) and isinstance(fr, RawPair)
    assert [(p.src, p.trg, p.lang_pair, p.origin_line) for p in (de, fr)] == [
        ("one", "eins", "en-de", 9),
        ("one", "un", "en-fr", 9),
    ]
    assert de.key != fr.key
    assert isinstance(inline, RawPair)
    assert (inline.src, inline.trg) == ("Das ist fett und so", "That is bold and so")
    assert inline.trg_lang == "en"
    assert isinstance(nolang, DeadLetter) and nolang.reason == "parse_missing_lang"
    assert isinstance(blank, Skipped) and blank.reason == "align_empty_side"
    assert isinstance(legacy, RawPair) and legacy.lang_pair == "de-en"


def _tu(*tuvs: tuple[str, str]) -> ET.Element:
    """A ``<tu>`` as the streaming reader builds it (``xml:lang`` kept as written)."""
    tu = ET.Element("tu")
    for lang, text in tuvs:
        ET.SubElement(ET.SubElement(tu, "tuv", {"xml:lang": lang}), "seg").text = text
    return tu


def test_multilingual_units_pair_english_with_every_other_language() -> None:
    origin = Origin("m.tmx", None, 3)
    items = parse_tu(
        _tu(
            ("de-DE", "Datei speichern"),
            ("en-US", "Save file"),
            ("fr-FR", "Enregistrer le fichier"),
            ("en-GB", "Save file"),
            ("ja-JP", "ファイルを保存"),
            ("es-ES", ""),
        ),
        origin,
        "ui",
    )
    pairs = [(i.src, i.trg, i.lang_pair, i.origin_part) for i in items if isinstance(i, RawPair)]
    assert pairs == [
        ("Save file", "Datei speichern", "en-de", 0),
        ("Save file", "Enregistrer le fichier", "en-fr", 2),
        ("Save file", "ファイルを保存", "en-ja", 4),
    ]  # never an en-en pair
    skips = [i.reason for i in items if isinstance(i, Skipped)]
    assert skips == ["align_extra_english", "align_empty_side"]


def test_units_that_make_no_pair_say_why() -> None:
    origin = Origin("m.tmx", None, 3)
    cases = {
        "parse_one_language": _tu(("en-US", "Color"), ("en-GB", "Colour")),
        "parse_no_english": _tu(("de", "Ja"), ("fr", "Oui"), ("es", "Sí")),
        "parse_segment_count": _tu(("de", "allein")),
    }
    for reason, tu in cases.items():
        (item,) = parse_tu(tu, origin, "d")
        assert isinstance(item, DeadLetter) and item.reason == reason, reason
        assert item.excerpt == ET.tostring(tu, encoding="unicode")[:200]  # the unit's XML
    # two languages, neither English, stay one pair in file order
    (pair,) = parse_tu(_tu(("de", "Ja"), ("fr", "Oui")), origin, "d")
    assert isinstance(pair, RawPair) and pair.lang_pair == "de-fr"


def test_gzipped_and_truncated_tmx(tmp_path: Path) -> None:
    path = tmp_path / "de-en.tmx.gz"
    path.write_bytes(gzip.compress(TMX.encode()))
    assert sum(isinstance(i, RawPair) for i in read_tmx(str(path), dataset="d")) == 5
    cut = TMX[: TMX.index('<tu>\n  <tuv xml:lang="de"><seg>eins')] + "<tu><tuv"
    (tmp_path / "cut.tmx").write_text(cut, encoding="utf-8")
    items = list(read_tmx(str(tmp_path / "cut.tmx")))
    assert isinstance(items[0], RawPair)
    assert isinstance(items[-1], DeadLetter) and items[-1].reason == "read_xml_error"


def test_seg_text_drops_native_codes_only() -> None:
    seg = ET.fromstring("<seg>a <it pos='begin'>{b}</it>b<sub>c</sub>\n d</seg>")
    assert seg_text(seg) == "a bc d"


def test_half_a_gzipped_tmx_keeps_every_complete_unit(tmp_path: Path) -> None:
    units = "".join(
        f'<tu><tuv xml:lang="de"><seg>Satz {i}</seg></tuv>'
        f'<tuv xml:lang="en"><seg>Sentence {i}</seg></tuv></tu>\n'
        for i in range(3000)
    )
    body = gzip.compress(f'<tmx version="1.4"><header/><body>\n{units}</body></tmx>'.encode())
    path = tmp_path / "de-en.tmx.gz"
    path.write_bytes(body[: len(body) // 2])
    complete = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body[: len(body) // 2])
    items = list(read_tmx(str(path)))
    pairs = [i for i in items if isinstance(i, RawPair)]
    assert len(pairs) == complete.count(b"</tu>") > 100
    assert [p.src for p in pairs[:2]] == ["Satz 0", "Satz 1"]
    assert isinstance(items[-1], DeadLetter) and items[-1].reason == "read_unreadable"
    assert f"on line {pairs[-1].origin_line}" in items[-1].detail
