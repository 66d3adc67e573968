"""TMX translation memories, from tiny generated files."""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from pathlib import Path

from corpusforge.sources.opus.records import DeadLetter, RawPair, Skipped
from corpusforge.sources.opus.tmx import read_tmx, seg_text

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
        "DeadLetter",
        "RawPair",
        "DeadLetter",
        "Skipped",
        "RawPair",
    ]
    first, count, inline, nolang, blank, legacy = items
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
    assert isinstance(count, DeadLetter) and count.reason == "parse_segment_count"
    assert count.origin_line == 9 and "3 <tuv>" in count.detail
    assert isinstance(inline, RawPair)
    assert (inline.src, inline.trg) == ("Das ist fett und so", "That is bold and so")
    assert inline.trg_lang == "en"
    assert isinstance(nolang, DeadLetter) and nolang.reason == "parse_missing_lang"
    assert isinstance(blank, Skipped) and blank.reason == "align_empty_side"
    assert isinstance(legacy, RawPair) and legacy.lang_pair == "de-en"


def test_gzipped_and_truncated_tmx(tmp_path: Path) -> None:
    path = tmp_path / "de-en.tmx.gz"
    path.write_bytes(gzip.compress(TMX.encode()))
    assert sum(isinstance(i, RawPair) for i in read_tmx(str(path), dataset="d")) == 3
    cut = TMX[: TMX.index('<tu>\n  <tuv xml:lang="de"><seg>eins')] + "<tu><tuv"
    (tmp_path / "cut.tmx").write_text(cut, encoding="utf-8")
    items = list(read_tmx(str(tmp_path / "cut.tmx")))
    assert isinstance(items[0], RawPair)
    assert isinstance(items[-1], DeadLetter) and items[-1].reason == "read_xml_error"


def test_seg_text_drops_native_codes_only() -> None:
    seg = ET.fromstring("<seg>a <it pos='begin'>{b}</it>b<sub>c</sub>\n d</seg>")
    assert seg_text(seg) == "a bc d"
