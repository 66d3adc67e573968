"""``corpusforge bitext build`` on real and realistic broken input, end to end (issue 23).

Each test runs the real command, then checks its exit code and message, the dead-letter
rows, the pairs and the accounting (``corpusforge.inspect.validate``). Inputs are cut
from ``../shared/realdata`` into a temporary folder, never into the repository.
"""

from __future__ import annotations

import gzip
import json
import logging
import zlib
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import polars as pl
import pytest
from typer.testing import CliRunner

from corpusforge.commands.bitext import app
from corpusforge.inspect.validate import validate_release
from pipelines.bitext_pairs import run
from tests.bitext.test_build_bitext import parquet_digests


def build(inputs: list[Path], out: Path, *flags: str) -> tuple[int, str, dict[str, Any]]:
    """Run the command; its exit code, output and manifest (``{}`` when none)."""
    result = CliRunner().invoke(app, [*map(str, inputs), "--out", str(out), *flags])
    manifest = out / "manifest.json"
    return (
        result.exit_code,
        result.output,
        json.loads(manifest.read_text()) if manifest.exists() else {},
    )


def dead_letters(out: Path) -> pl.DataFrame:
    return pl.read_parquet(out / "dead_letter" / "*.parquet").sort("reason", "origin_line")


def pairs(out: Path) -> pl.DataFrame:
    files = list((out / "pairs").rglob("*.parquet"))
    return pl.concat([pl.read_parquet(f) for f in files]) if files else pl.DataFrame()


def assert_valid(out: Path) -> None:
    report = validate_release(out)
    assert report.ok, report.failed_checks()


def lines(path: Path, n: int) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[:n]


def write_lines(path: Path, rows: list[str]) -> Path:
    path.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- item 1


def test_a_moses_pair_missing_one_line_is_refused_whole(realdata: Path, tmp_path: Path) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    german = lines(tatoeba / "tatoeba.deu-eng.deu", 200)
    english = lines(tatoeba / "tatoeba.deu-eng.eng", 200)
    del german[50]  # German line 51 gone: lines 51..199 pair with the wrong English line
    folder = tmp_path / "in"
    folder.mkdir()
    de = write_lines(folder / "tatoeba.deu-eng.deu", german)
    en = write_lines(folder / "tatoeba.deu-eng.eng", english)
    fr_en = lines(tatoeba / "tatoeba.fra-eng.eng", 50)
    fr = write_lines(folder / "ok.fra-eng.fra", lines(tatoeba / "tatoeba.fra-eng.fra", 50))
    fr_en_file = write_lines(folder / "ok.fra-eng.eng", fr_en)
    out = tmp_path / "out"
    code, output, m = build([de, en, fr, fr_en_file], out)
    assert code == 0, output
    assert "refused" in output and "tatoeba.deu-eng.deu (199 lines)" in output
    assert "tatoeba.deu-eng.eng (200 lines)" in output
    dead = dead_letters(out)
    assert dead.select("reason", "origin_archive", "origin_line").rows() == [
        ("align_line_count_mismatch", "tatoeba.deu-eng.deu", None)
    ]
    assert "tatoeba.deu-eng.deu has 199 lines and tatoeba.deu-eng.eng has 200" in dead["detail"][0]
    kept = pairs(out)
    assert set(kept["positive_lang"]) == {"fr"}  # not one German pair is published
    assert set(kept["anchor"]) <= set(fr_en)
    c = m["counts"]
    # the refused pair's 200 lines are read and accounted for, as one dead letter
    assert (c["lines_read"], c["pairs_read"], c["dead_letter"]) == (250, 50, 1)
    assert c["dead_letter_lines"] == 200
    assert "tatoeba" not in m["datasets"]
    assert m["accounting"]["balanced"]
    assert_valid(out)


@pytest.mark.slow  # two builds
def test_a_shift_with_equal_counts_is_caught_in_part_by_the_length_ratio(
    realdata: Path, tmp_path: Path
) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    german = lines(tatoeba / "tatoeba.deu-eng.deu", 200)
    english = lines(tatoeba / "tatoeba.deu-eng.eng", 200)
    del german[50]
    del english[-1]  # equal counts again: only the sentences say the pairs are wrong
    (tmp_path / "in").mkdir()
    de = write_lines(tmp_path / "in" / "shift.deu-eng.deu", german)
    en = write_lines(tmp_path / "in" / "shift.deu-eng.eng", english)
    out = tmp_path / "out"
    code, output, m = build([de, en], out)
    assert code == 0, output
    dropped = m["datasets"]["shift"]["dropped"]
    assert dropped["bitext_length_ratio"] >= 5
    assert m["config"]["filters"]["max_length_ratio"] == 3.0
    kept = pairs(out)
    true = dict(zip(german[:50], english[:50], strict=True))
    # the 50 aligned pairs before the gap are not stopped by the ratio
    assert sum(true.get(p) == a for a, p in kept.select("anchor", "positive").rows()) >= 45
    assert "bitext_length_ratio" in output
    assert_valid(out)
    # the limit is the user's: 0 turns it off, and the manifest records it
    code, output, m = build([de, en], tmp_path / "off", "--max-length-ratio", "0")
    assert code == 0, output
    assert "bitext_length_ratio" not in m["counts"]["dropped"]
    assert m["config"]["filters"]["max_length_ratio"] is None
    bad = CliRunner().invoke(app, [str(de), str(en), "--out", str(out), "--max-length-ratio", "1"])
    assert bad.exit_code != 0 and "--max-length-ratio must be > 1" in bad.output


# --------------------------------------------------------------------------- item 2

CHINESE = [  # Tatoeba-style eng-zho pairs: Mandarin, then Cantonese, then Wu
    ("我们试试看！", "Let's try something."),
    ("我不知道。", "I don't know."),
    ("你在干什么啊？", "What are you doing?"),
    ("我今天很忙。", "I am very busy today."),
    ("我喜欢吃苹果。", "I like eating apples."),
    ("你好。", "Hello."),  # too short on both sides, in any script
    ("你食咗飯未呀？", "Have you eaten yet?"),
    ("我唔係香港人。", "I am not from Hong Kong."),
    ("阿拉是上海人。", "We are from Shanghai."),
    ("侬今朝去哪里？", "Where are you going today?"),
]
JAPANESE = [
    ("私は学生です。", "I am a student."),
    ("今日はとても暑いです。", "It is very hot today."),
    ("トムはどこですか。", "Where is Tom?"),
]
THAI = [("ฉันไม่เข้าใจ", "I don't understand."), ("คุณชื่ออะไร", "What is your name?")]


def test_scripts_without_spaces_are_kept(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    inputs = []
    for code, rows in (("zho", CHINESE), ("jpn", JAPANESE), ("tha", THAI)):
        inputs.append(write_lines(folder / f"tatoeba.{code}-eng.{code}", [r[0] for r in rows]))
        inputs.append(write_lines(folder / f"tatoeba.{code}-eng.eng", [r[1] for r in rows]))
    out = tmp_path / "out"
    code, output, m = build(inputs, out)
    assert code == 0, output
    lang_pairs = m["datasets"]["tatoeba"]["lang_pairs"]
    assert {g: t["rows"] for g, t in lang_pairs.items()} == {"en-ja": 3, "en-th": 2, "en-zh": 9}
    assert lang_pairs["en-zh"]["dropped"] == {"bitext_too_short": 1}  # 你好。 / Hello.
    kept = pairs(out)
    expected = {(e, o) for rows in (CHINESE, JAPANESE, THAI) for o, e in rows if o != "你好。"}
    assert set(kept.select("anchor", "positive").rows()) == expected
    assert m["accounting"]["balanced"]
    assert_valid(out)


# --------------------------------------------------------------------------- item 3

MULTI_TMX = """<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4">
<header creationtool="x" creationtoolversion="1" segtype="sentence" o-tmf="x"
  adminlang="en-US" srclang="en-US" datatype="plaintext"/>
<body>
<tu tuid="1">
  <tuv xml:lang="en-US"><seg>Save the file before you close the window.</seg></tuv>
  <tuv xml:lang="en-GB"><seg>Save the file before you close the window.</seg></tuv>
  <tuv xml:lang="de-DE"><seg>Speichern Sie die Datei, bevor Sie das Fenster schließen.</seg></tuv>
  <tuv xml:lang="fr-FR"><seg>Enregistrez le fichier avant de fermer la fenêtre.</seg></tuv>
  <tuv xml:lang="ja-JP"><seg>ウィンドウを閉じる前にファイルを保存してください。</seg></tuv>
</tu>
<tu tuid="2">
  <tuv xml:lang="en-US"><seg>The printer is not connected to the network.</seg></tuv>
  <tuv xml:lang="de-DE"><seg>Der Drucker ist nicht mit dem Netzwerk verbunden.</seg></tuv>
  <tuv xml:lang="fr-FR"><seg>L'imprimante n'est pas connectée au réseau.</seg></tuv>
  <tuv xml:lang="ja-JP"><seg>プリンターがネットワークに接続されていません。</seg></tuv>
</tu>
<tu tuid="3">
  <tuv xml:lang="en-US"><seg>Color</seg></tuv>
  <tuv xml:lang="en-GB"><seg>Colour</seg></tuv>
</tu>
<tu tuid="4">
  <tuv xml:lang="de-DE"><seg>Ja</seg></tuv>
  <tuv xml:lang="fr-FR"><seg>Oui</seg></tuv>
  <tuv xml:lang="es-ES"><seg>Sí</seg></tuv>
</tu>
</body>
</tmx>
"""


def test_a_multilingual_tmx_gives_english_with_every_other_language(tmp_path: Path) -> None:
    tmx = tmp_path / "memory.tmx"
    tmx.write_text(MULTI_TMX, encoding="utf-8")
    out = tmp_path / "out"
    code, output, m = build([tmx], out)
    assert code == 0, output
    groups = m["datasets"]["memory"]["lang_pairs"]
    assert {g: t["rows"] for g, t in groups.items()} == {"en-de": 2, "en-fr": 2, "en-ja": 2}
    assert m["counts"]["skipped"] == {"align_extra_english": 1}
    dead = dead_letters(out)
    assert dead.select("reason", "origin_archive", "origin_line").rows() == [
        ("parse_no_english", "memory.tmx", 23),
        ("parse_one_language", "memory.tmx", 19),
    ]
    kept = pairs(out)
    assert set(kept["anchor"]) == {
        "Save the file before you close the window.",
        "The printer is not connected to the network.",
    }
    assert set(kept["anchor_lang"]) == {"en"}
    assert (
        "The printer is not connected to the network.",
        "L'imprimante n'est pas connectée au réseau.",
    ) in set(kept.select("anchor", "positive").rows())
    c = m["counts"]
    assert (c["lines_read"], c["pairs_read"], c["dead_letter"]) == (9, 6, 2)  # + 1 skip
    assert_valid(out)


# --------------------------------------------------------------------------- item 4


def test_half_a_gzipped_tmx_keeps_every_complete_unit(realdata: Path, tmp_path: Path) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    german = lines(tatoeba / "tatoeba.deu-eng.deu", 346)
    english = lines(tatoeba / "tatoeba.deu-eng.eng", 346)
    units = "".join(
        f'<tu>\n  <tuv xml:lang="de"><seg>{escape(de)}</seg></tuv>\n'
        f'  <tuv xml:lang="en"><seg>{escape(en)}</seg></tuv>\n</tu>\n'
        for de, en in zip(german, english, strict=True)
    )
    tmx = f'<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4">\n<header/>\n<body>\n{units}'
    body = gzip.compress((tmx + "</body>\n</tmx>\n").encode(), mtime=0)
    half = body[: len(body) // 2]
    path = tmp_path / "tatoeba.de-en.tmx.gz"
    path.write_bytes(half)
    complete = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(half).count(b"</tu>")
    assert complete > 100
    out = tmp_path / "out"
    code, output, m = build([path], out)
    assert code == 0, output
    c = m["counts"]
    assert (c["pairs_read"], c["dead_letter"]) == (complete, 1)
    dead = dead_letters(out)
    assert dead.select("reason", "origin_archive").rows() == [
        ("read_unreadable", "tatoeba.de-en.tmx.gz")
    ]
    assert "Compressed file ended" in dead["detail"][0]
    kept = pairs(out)
    true = dict(zip(german[:complete], english[:complete], strict=True))
    assert len(kept) > complete * 0.9
    assert all(true[p] == a for a, p in kept.select("anchor", "positive").rows())
    assert_valid(out)


# --------------------------------------------------------------------------- item 5


@pytest.mark.slow  # a build of many empty and broken inputs
def test_inputs_that_give_nothing_are_dead_letters_naming_them(
    realdata: Path, tmp_path: Path
) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    folder = tmp_path / "in"
    folder.mkdir()
    fr_en = lines(tatoeba / "tatoeba.fra-eng.eng", 30)
    good = [
        write_lines(folder / "ok.fra-eng.fra", lines(tatoeba / "tatoeba.fra-eng.fra", 30)),
        write_lines(folder / "ok.fra-eng.eng", fr_en),
    ]
    german = write_lines(folder / "source.txt", lines(tatoeba / "tatoeba.deu-eng.deu", 40))
    english = write_lines(folder / "target.txt", lines(tatoeba / "tatoeba.deu-eng.eng", 40))
    empty = folder / "empty.de-en.tmx"
    empty.write_text('<?xml version="1.0"?>\n<tmx version="1.4"><body>\n</body></tmx>\n')
    xces = folder / "news.de-en.xml"
    xces.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<cesAlign version="1.0">\n'
        '<linkGrp targType="s" fromDoc="de/gone.xml.gz" toDoc="en/gone.xml.gz">\n'
        '<link xtargets="s1;s1" />\n<link xtargets="s2;s2" />\n</linkGrp>\n</cesAlign>\n'
    )
    out = tmp_path / "out"
    code, output, m = build([*good, german, english, empty, xces], out)
    assert code == 0, output
    dead = dead_letters(out)
    assert sorted(dead.select("reason", "origin_archive").rows()) == [
        ("align_missing_document", "news.de-en.xml"),
        ("read_no_records", "empty.de-en.tmx"),
        ("read_no_records", "news.de-en.xml"),
        ("read_unknown_format", "source.txt"),
        ("read_unknown_format", "target.txt"),
    ]
    details = set(dead["detail"])
    assert "no pair could be read from empty.de-en.tmx (tmx): the input holds no record" in details
    assert (
        "no pair could be read from news.de-en.xml (xces): only align_group_unavailable 2, "
        "align_missing_document 1" in details
    )
    c = m["counts"]
    assert (c["pairs_read"], c["dead_letter"]) == (30, 5)
    assert c["dead_letter_reasons"]["read_no_records"] == 2
    assert set(pairs(out)["anchor"]) <= set(fr_en)
    assert_valid(out)

    # --src-lang/--trg-lang pair the two nameless files (name order: source.txt first)
    named = tmp_path / "named"
    code, output, m = build([*good, german, english], named, "--src-lang", "de", "--trg-lang", "en")
    assert code == 0, output
    assert m["counts"]["dead_letter"] == 0
    de = pairs(named).filter(pl.col("positive_lang") == "de")
    true = dict(
        zip(
            lines(tatoeba / "tatoeba.deu-eng.deu", 40),
            lines(tatoeba / "tatoeba.deu-eng.eng", 40),
            strict=True,
        )
    )
    assert len(de) > 30 and all(true[p] == a for a, p in de.select("anchor", "positive").rows())
    assert set(pairs(named).filter(pl.col("positive_lang") == "fr")["anchor"]) <= set(fr_en)
    assert_valid(named)
    # the Beam entry point builds the same release from the same flags
    beam_out = tmp_path / "beam"
    argv = [f"--input={p}" for p in (*good, german, english)]
    assert run([*argv, f"--out={beam_out}", "--src_lang=de", "--trg_lang=en"]) == 0
    assert parquet_digests(beam_out) == parquet_digests(named)


# --------------------------------------------------------------------------- item 7


def test_a_build_logs_no_type_hint_notes(
    realdata: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    (tmp_path / "in").mkdir()
    inputs = [
        write_lines(
            tmp_path / "in" / f"t.deu-eng.{side}", lines(tatoeba / f"tatoeba.deu-eng.{side}", 20)
        )
        for side in ("deu", "eng")
    ]
    with caplog.at_level(logging.INFO):
        code, output, _ = build(inputs, tmp_path / "out")
    assert code == 0, output
    notes = [r for r in caplog.records if "string literal type hint" in r.getMessage()]
    assert not notes and "string literal type hint" not in output


def test_duplicates_up_to_case_and_whitespace_are_kept_once(realdata: Path, tmp_path: Path) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    french = lines(tatoeba / "tatoeba.fra-eng.fra", 10)
    english = lines(tatoeba / "tatoeba.fra-eng.eng", 10)
    french.append(french[0].lower())  # the same pair again, lower-cased, with doubled spaces
    english.append(english[0].replace(" ", "  "))
    (tmp_path / "in").mkdir()
    inputs = [
        write_lines(tmp_path / "in" / "d.fra-eng.fra", french),
        write_lines(tmp_path / "in" / "d.fra-eng.eng", english),
    ]
    code, output, m = build(inputs, tmp_path / "out")
    assert code == 0, output
    assert m["counts"]["dropped"].get("dedup_duplicate") == 1
    kept = pairs(tmp_path / "out")
    assert english[0] in set(kept["anchor"])  # the copy with the smaller origin (line 1) stays
    assert_valid(tmp_path / "out")


def test_clean_none_still_makes_each_text_one_line(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    inputs = [
        write_lines(
            tmp_path / "in" / "b.deu-eng.deu",
            ["Er sagte:\u2028Ich komme morgen wieder.", "Das ist\rmein Haus am See."],
        ),
        write_lines(
            tmp_path / "in" / "b.deu-eng.eng",
            ["He said:\u2028I will come back tomorrow.", "This is\rmy house by the lake."],
        ),
    ]
    code, output, _ = build(inputs, tmp_path / "out", "--clean", "none")
    assert code == 0, output
    rows = set(pairs(tmp_path / "out").select("anchor", "positive").rows())
    assert rows == {
        ("He said: I will come back tomorrow.", "Er sagte: Ich komme morgen wieder."),
        ("This is my house by the lake.", "Das ist mein Haus am See."),
    }
    assert_valid(tmp_path / "out")


def test_an_overlong_line_is_a_dead_letter_and_the_rest_stays_aligned(
    realdata: Path, tmp_path: Path
) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    german = lines(tatoeba / "tatoeba.deu-eng.deu", 30)
    english = lines(tatoeba / "tatoeba.deu-eng.eng", 30)
    german[4] = "Wort " * 600_000  # a 3 MB line: never held whole, never published
    (tmp_path / "in").mkdir()
    inputs = [
        write_lines(tmp_path / "in" / "l.deu-eng.deu", german),
        write_lines(tmp_path / "in" / "l.deu-eng.eng", english),
    ]
    code, output, m = build(inputs, tmp_path / "out")
    assert code == 0, output
    dead = dead_letters(tmp_path / "out")
    assert dead.select("reason", "origin_archive", "origin_line").rows() == [
        ("read_line_too_long", "l.deu-eng.deu", 5)
    ]
    true = dict(zip(german, english, strict=True))
    kept = pairs(tmp_path / "out").select("anchor", "positive").rows()
    assert len(kept) > 20 and all(true[p] == a for a, p in kept)
    assert (m["counts"]["pairs_read"], m["counts"]["dead_letter"]) == (29, 1)
    assert_valid(tmp_path / "out")
