"""Bitext releases end to end: generated fixtures in every format, bad input, and the real samples.

The real samples (``../shared/realdata/tatoeba-laser-v1``, ``opus-rf-sample``) are read in
place, never copied.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from corpusforge.builds.bitext import build
from corpusforge.commands.bitext import app
from corpusforge.config.beam import BitextPairsOptions
from corpusforge.config.bitext import BitextConfig
from corpusforge.release.accounting import pair_accounting
from corpusforge.release.pipeline import assemble_counts
from corpusforge.schemas import BITEXT, DEAD_LETTER, MANIFEST, arrow_schema, validate_json
from pipelines.bitext_pairs import run

# --------------------------------------------------------------------------- fixtures

MOSES_DE = [
    "Ich habe heute leider keine Zeit für dich.",
    "Das Wetter ist heute wirklich sehr schön.",
    "Ja.",
    "Wir gehen morgen zusammen ins Kino.",
    "Der Zug kommt heute wieder viel zu spät an.",
]
MOSES_EN = [
    "Unfortunately I have no time for you today.",
    "The weather is really very nice today.",
    "Yes.",
    "We are going to the cinema together tomorrow.",
    "Der Hund schläft den ganzen Tag im Garten.",  # German on the English side
]
TMX = """<?xml version="1.0" encoding="utf-8"?>
<tmx version="1.4">
<header srclang="de" adminlang="en" segtype="sentence" datatype="plaintext" o-tmf="x"/>
<body>
<tu>
  <tuv xml:lang="de"><seg>Wir gehen morgen zusammen ins Kino.</seg></tuv>
  <tuv xml:lang="en"><seg>We are going to the cinema together tomorrow.</seg></tuv>
</tu>
<tu>
  <tuv xml:lang="de"><seg>Nur eine Seite hat hier einen Satz.</seg></tuv>
</tu>
<tu>
  <tuv xml:lang="de"><seg>Meine Schwester wohnt in einer großen Stadt.</seg></tuv>
  <tuv xml:lang="en"><seg>My sister lives in a big city.</seg></tuv>
</tu>
</body>
</tmx>
"""
TSV = (
    "Je voudrais un café, s'il vous plaît.\tI would like a coffee, please.\n"
    "Nous habitons à Paris depuis dix ans.\tWe have lived in Paris for ten years.\n"
    "trois\tcolonnes\tici\n"
    "Le chat dort toute la journée sur le canapé.\tThe cat sleeps on the sofa all day.\n"
)
DE_DOC = {
    "s1": "Guten Morgen , wie geht es dir heute ?",
    "s2": "Ich lese sehr gern Bücher über Geschichte .",
    "s3": "Tschüss",
}
EN_DOC = {
    "s1": "Good morning , how are you today ?",
    "s2": "I really like reading books about history .",
}
LINKS = ["s1;s1", "s2;s2", "s9;s2", "s3;"]


def _sentence_doc(path: Path, sentences: dict[str, str]) -> None:
    body = "".join(
        f'<s id="{sid}">{"".join(f"<w>{w}</w>" for w in text.split())}</s>'
        for sid, text in sentences.items()
    )
    xml = f'<?xml version="1.0" encoding="utf-8"?>\n<text><p>{body}</p></text>\n'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(xml.encode(), mtime=0))


def write_fixtures(root: Path) -> list[str]:
    """One small file set per format, each with one bad record; returns the input paths."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "mini.de-en.de").write_text("\n".join(MOSES_DE) + "\n", encoding="utf-8")
    (root / "mini.de-en.en").write_text("\n".join(MOSES_EN) + "\n", encoding="utf-8")
    (root / "memory.de-en.tmx").write_text(TMX, encoding="utf-8")
    (root / "extra.fr-en.tsv").write_text(TSV, encoding="utf-8")
    _sentence_doc(root / "de" / "a.xml.gz", DE_DOC)
    _sentence_doc(root / "en" / "a.xml.gz", EN_DOC)
    links = "".join(f'<link xtargets="{x}" />\n' for x in LINKS)
    (root / "news.de-en.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<cesAlign version="1.0">\n'
        f'<linkGrp targType="s" fromDoc="de/a.xml.gz" toDoc="en/a.xml.gz">\n{links}'
        "</linkGrp>\n</cesAlign>\n",
        encoding="utf-8",
    )
    (root / "notes.data").write_text("nothing to see here\n", encoding="utf-8")
    names = [
        "mini.de-en.de",
        "mini.de-en.en",
        "memory.de-en.tmx",
        "extra.fr-en.tsv",
        "news.de-en.xml",
        "notes.data",
    ]
    return [str(root / name) for name in names]


def parquet_digests(out: Path) -> dict[str, str]:
    return {
        str(path.relative_to(out)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(out.rglob("*.parquet"))
    }


def failed(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in manifest["accounting"]["identities"] if not i["holds"]]


@pytest.fixture(scope="module")
def fixture_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], dict]:
    root = tmp_path_factory.mktemp("bitext")
    inputs = write_fixtures(root / "in")
    out = root / "release"
    manifest = build(BitextConfig(inputs=tuple(inputs), out=str(out)))
    return out, inputs, manifest


# --------------------------------------------------------------------------- fixtures, every format


def test_every_format_is_read_and_the_accounting_closes(fixture_release: tuple) -> None:
    _, _, m = fixture_release
    validate_json(MANIFEST, m)
    assert m["kind"] == "bitext-pairs"
    c = m["counts"]
    # moses 5 pairs, tmx 2 + 1 letter, tsv 3 + 1, xces 2 + 1 (+1 skip), planning 1 letter
    # (a whole file of unknown format: no line read)
    assert (c["lines_read"], c["pairs_read"], c["dead_letter"]) == (16, 12, 4)
    assert (c["dead_letter_lines"], sum(c["skipped"].values())) == (3, 1)
    assert c["units_read"] == 4
    assert c["skipped"] == {"align_empty_side": 1}
    assert c["dead_letter_reasons"] == {
        "align_missing_sentence": 1,
        "parse_column_count": 1,
        "parse_segment_count": 1,
        "read_unknown_format": 1,
    }
    assert c["dropped"] == {"bitext_too_short": 1, "dedup_duplicate": 1, "lang_mismatch": 1}
    assert c["rows"] == 9
    assert m["accounting"]["balanced"], failed(m)
    names = {i["name"] for i in m["accounting"]["identities"]}
    assert {
        "lines_read == pairs_read + dead_letter_lines + skipped",
        "pairs_read == rows + dropped",
        "rows == rows in pairs/",
        "dead_letter == rows in dead_letter/",
        "mini en-de: candidates == rows + dropped",
    } <= names


def test_datasets_language_pairs_and_files(fixture_release: tuple) -> None:
    out, _, m = fixture_release
    ds = m["datasets"]
    assert {name: d["rows"] for name, d in ds.items()} == {
        "extra": 3,
        "memory": 2,
        "mini": 2,
        "news": 2,
    }
    # the cinema pair is in the TMX and the Moses file: the smaller origin ("memory") keeps it
    assert ds["mini"]["dropped"] == {
        "bitext_too_short": 1,
        "dedup_duplicate": 1,
        "lang_mismatch": 1,
    }
    assert ds["mini"]["lang_pairs"]["en-de"]["candidates"] == 5
    assert ds["extra"]["files"] == ["pairs/extra/en-fr/part-00000-of-00001.parquet"]
    for f in m["files"]:
        path = out / f["path"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"]
        assert pq.read_metadata(path).num_rows == f["rows"]
        schema = BITEXT if f["path"].startswith("pairs/") else DEAD_LETTER
        assert f["schema"] == str(schema)
        assert pq.read_schema(path).equals(arrow_schema(schema), check_metadata=False)
    assert m["config"]["lid"]["sha256"] and len(m["config"]["lid"]["sha256"]) == 64
    assert [u["format"] for u in m["plan"]] == ["tsv", "tmx", "xces", "moses"]  # sorted names
    assert len(m["inputs"]) == 6 and all(len(i["sha256"]) == 64 for i in m["inputs"])


def test_english_is_the_anchor(fixture_release: tuple) -> None:
    out, _, _ = fixture_release
    pairs = pl.read_parquet(out / "pairs" / "**" / "*.parquet")
    assert set(pairs["anchor_lang"]) == {"en"}
    assert set(pairs["positive_lang"]) == {"de", "fr"}
    assert "The cat sleeps on the sofa all day." in set(pairs["anchor"])
    assert pairs.filter(pl.col("anchor") == "My sister lives in a big city.")[
        "positive"
    ].to_list() == ["Meine Schwester wohnt in einer großen Stadt."]


def test_bad_records_are_dead_letters_with_reason_and_origin(fixture_release: tuple) -> None:
    out, _, _ = fixture_release
    dead = pl.read_parquet(out / "dead_letter" / "*.parquet").sort("reason")
    rows = dead.select("reason", "origin_archive", "origin_line").rows()
    assert rows == [
        ("align_missing_sentence", "news.de-en.xml", 6),
        ("parse_column_count", "extra.fr-en.tsv", 3),
        ("parse_segment_count", "memory.de-en.tmx", 9),
        ("read_unknown_format", "notes.data", None),
    ]
    # and the rest of each file is kept
    pairs = pl.read_parquet(out / "pairs" / "**" / "*.parquet")
    assert "The cat sleeps on the sofa all day." in set(pairs["anchor"])  # after the bad TSV row
    assert "My sister lives in a big city." in set(pairs["anchor"])  # after the bad <tu>


@pytest.mark.slow  # a second build, on two workers
def test_rerun_gives_byte_identical_parquet_whatever_the_worker_count(
    fixture_release: tuple, tmp_path: Path
) -> None:
    out, inputs, first = fixture_release
    again = tmp_path / "again"
    argv = [f"--input={path}" for path in reversed(inputs)]
    argv += [f"--out={again}", "--direct_num_workers=2", "--direct_running_mode=multi_threading"]
    assert run(argv) == 0
    assert parquet_digests(again) == parquet_digests(out)
    second = json.loads((again / "manifest.json").read_text())
    assert (
        second["counts"] == first["counts"]
        and second["datasets"].keys() == first["datasets"].keys()
    )
    # a rebuild into the same folder replaces the release and leaves no staging behind
    assert run(argv) == 0
    assert parquet_digests(again) == parquet_digests(out)
    assert not (again / "_staging").exists()
    # a smaller build into the same folder leaves none of the earlier release's files
    tsv_only = [f"--input={inputs[3]}", f"--out={again}"]
    assert run(tsv_only) == 0
    listed = {f["path"] for f in json.loads((again / "manifest.json").read_text())["files"]}
    assert set(parquet_digests(again)) == listed
    assert listed == {
        "dead_letter/part-00000-of-00001.parquet",
        "pairs/extra/en-fr/part-00000-of-00001.parquet",
    }


def test_cap_and_options_through_the_command_line(tmp_path: Path) -> None:
    inputs = write_fixtures(tmp_path / "in")
    tiny = tmp_path / "in" / "tiny.it-en.tsv"  # nothing in it survives the filters
    tiny.write_text("Sì.\tYes.\n", encoding="utf-8")
    out = tmp_path / "capped"
    args = [*inputs[:4], str(tiny), "--out", str(out), "--max-pairs-per-lang", "1"]
    result = CliRunner().invoke(app, [*args, "--clean", "ct", "--quiet"])
    assert result.exit_code == 0, result.output
    m = json.loads((out / "manifest.json").read_text())
    assert m["config"]["clean"] == "ct" and m["config"]["max_pairs_per_lang"] == 1
    assert {name: d["rows"] for name, d in m["datasets"].items()} == {
        "extra": 1,
        "memory": 1,
        "mini": 1,
        "tiny": 0,
    }
    assert m["datasets"]["extra"]["dropped"] == {"cap_over_limit": 2}
    empty = out / "pairs" / "tiny" / "en-it" / "part-00000-of-00001.parquet"
    assert pq.read_metadata(empty).num_rows == 0  # every dataset has a file with the schema
    assert m["accounting"]["balanced"], failed(m)


def test_command_line_errors() -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["/nowhere/x.de", "--out", "/tmp/x"])
    assert missing.exit_code != 0 and "does not exist" in missing.output
    bad = runner.invoke(app, ["a.de", "--out", "/tmp/x", "--clean", "loud"])
    assert bad.exit_code != 0 and "clean must be one of" in bad.output
    model = runner.invoke(app, [__file__, "--out", "/tmp/x", "--lid-model", "/nowhere/lid.bin"])
    assert model.exit_code != 0 and "lid" in model.output
    assert run(["--out=/tmp/x"]) == 2


def test_pipeline_options_give_the_bitext_defaults() -> None:
    config = BitextPairsOptions(
        ["--input=a.de", "--input=a.en", "--out=o", "--seed=3", "--max_pairs_per_lang=0"]
    ).to_config()
    assert (config.inputs, config.seed, config.clean, config.max_pairs_per_lang) == (
        ("a.de", "a.en"),
        3,
        "none",  # bitext is not cleaned by default (Twitter's default is paper)
        None,
    )
    cleaned = BitextPairsOptions(["--input=a", "--out=o", "--clean=paper", "--no_lowercase"])
    assert cleaned.to_config().profile is not None
    assert cleaned.to_config().profile.lowercase is False  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="format must be one of"):
        BitextConfig(inputs=("a",), out="o", format="csv")
    with pytest.raises(ValueError, match="--max-pairs-per-lang must be"):
        BitextConfig(inputs=("a",), out="o", max_pairs_per_lang=0)


def test_accounting_fails_loudly_when_counts_and_files_disagree() -> None:
    counts, datasets = assemble_counts(
        [
            (("read", "records"), 5),
            (("read", "dead_letter_lines"), 1),
            (("dead", "parse_column_count"), 1),
            (("cand", "d", "en-de"), 4),
            (("drop", "d", "en-de", "lang_mismatch"), 1),
            (("rows", "d", "en-de"), 3),
        ],
        per_lang_pair=True,
    )
    assert (counts["lines_read"], counts["pairs_read"], counts["rows"]) == (5, 4, 3)
    assert datasets["d"]["lang_pairs"]["en-de"]["dropped"] == {"lang_mismatch": 1}
    files = [
        {"path": "pairs/d/en-de/part-00000-of-00001.parquet", "rows": 2},  # one row short
        {"path": "dead_letter/part-00000-of-00001.parquet", "rows": 1},
    ]
    broken = {
        i["name"] for i in pair_accounting(counts, datasets, files).identities if not i["holds"]
    }
    assert broken == {
        "rows == rows in pairs/",
        "d: rows == rows in pairs/d/",
        "d en-de: rows == rows in pairs/d/en-de/",
    }


# --------------------------------------------------------------------------- real samples


@pytest.fixture(scope="module")
def tatoeba(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = realdata / "tatoeba-laser-v1"
    inputs = [
        str(folder / f"tatoeba.{lang}-eng.{side}")
        for lang in ("deu", "fra")
        for side in (lang, "eng")
    ]
    out = tmp_path_factory.mktemp("tatoeba") / "release"
    return out, build(BitextConfig(inputs=tuple(inputs), out=str(out)))


def test_real_tatoeba_anchors_are_english_and_counts_close(
    tatoeba: tuple[Path, dict], realdata: Path
) -> None:
    out, m = tatoeba
    c = m["counts"]
    assert (c["lines_read"], c["pairs_read"], c["dead_letter"]) == (2000, 2000, 0)
    assert m["accounting"]["balanced"], failed(m)
    lang_pairs = m["datasets"]["tatoeba"]["lang_pairs"]
    assert sorted(lang_pairs) == ["en-de", "en-fr"]
    assert all(lp["candidates"] == 1000 for lp in lang_pairs.values())
    assert c["dropped"]["lang_mismatch"] > 0  # language id drops are counted
    assert c["dropped"]["bitext_too_short"] > 0
    assert c["rows"] > 1900
    de = pl.read_parquet(out / "pairs" / "tatoeba" / "en-de" / "*.parquet")
    english = (
        (realdata / "tatoeba-laser-v1" / "tatoeba.deu-eng.eng").read_text("utf-8").splitlines()
    )
    german = (realdata / "tatoeba-laser-v1" / "tatoeba.deu-eng.deu").read_text("utf-8").splitlines()
    assert set(de["anchor"]) <= set(english) and set(de["positive"]) <= set(german)
    assert dict(zip(german, english, strict=True))[de["positive"][0]] == de["anchor"][0]
    assert set(de["anchor_lang"]) == {"en"} and set(de["positive_lang"]) == {"de"}


def test_real_opus_rf_moses_and_xces_dedup_across_formats(realdata: Path, tmp_path: Path) -> None:
    rf = realdata / "opus-rf-sample" / "t"
    inputs = [
        str(rf / "moses" / "RF-tokenized.en"),
        str(rf / "moses" / "RF-tokenized.fr"),
        str(rf / "xml" / "en-fr.xml.gz"),
        str(rf / "xml" / "de-en.xml.gz"),
    ]
    m = build(BitextConfig(inputs=tuple(inputs), out=str(tmp_path / "rf"), dataset="RF"))
    c = m["counts"]
    assert m["accounting"]["balanced"], failed(m)
    assert (c["lines_read"], c["pairs_read"], c["dead_letter"]) == (534, 527, 0)
    assert c["skipped"] == {"align_empty_side": 7}  # links with an empty side are read too
    assert [u["format"] for u in m["plan"]] == ["xces", "xces", "moses"]
    en_fr = m["datasets"]["RF"]["lang_pairs"]["en-fr"]
    # the XCES en-fr alignment is OPUS's source of the Moses files: every copy that passes
    # the filters is a duplicate, and the Moses copy ("RF-tokenized.en" < "en-fr.xml.gz") stays
    assert en_fr["candidates"] == 350
    assert en_fr["dropped"]["dedup_duplicate"] == en_fr["rows"] > 100
    assert "en-de" in m["datasets"]["RF"]["lang_pairs"]
