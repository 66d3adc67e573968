"""The bitext composites on small inline inputs: main outputs, reject outputs and counters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apache_beam as beam
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from corpusforge.keys import pair_key, seeded_hash
from corpusforge.pairing.filters import BitextFilterConfig, LanguageFilterConfig
from corpusforge.schemas import BITEXT, arrow_schema
from corpusforge.sources.opus.formats import OpusFormat, OpusInput, reader_options
from corpusforge.sources.opus.records import DeadLetter, RawPair, SourceReason
from corpusforge.text.clean import get_profile
from corpusforge.transforms.bitext import BitextPairs, ReadBitext, Rejected

GOOD = [
    ("Ich habe heute leider keine Zeit für dich.", "Unfortunately I have no time for you today."),
    ("Das Wetter ist heute wirklich sehr schön.", "The weather is really very nice today."),
    ("Meine Schwester wohnt in einer großen Stadt.", "My sister lives in a big city."),
    ("Wir gehen morgen zusammen ins Kino.", "We are going to the cinema together tomorrow."),
    ("Der Zug kommt heute wieder zu spät an.", "The train is late again today."),
]


SPACED = GOOD[1][0].replace(" ", "  ")


def _row(dataset: str, de: str, en: str) -> tuple[tuple[str, str], dict[str, str]]:
    row = {"anchor": en, "positive": de, "anchor_lang": "en", "positive_lang": "de"}
    return (dataset, "en-de"), {**row, "dataset": dataset}


def _pair(src: str, trg: str, line: int, dataset: str = "demo", file: str = "demo.de") -> RawPair:
    return RawPair(src, trg, "de", "en", dataset, file, None, line)


def _counter(result: beam.runners.runner.PipelineResult, name: str) -> int:
    counters = result.metrics().query(MetricsFilter().with_name(name))["counters"]
    return sum(c.committed for c in counters)


def _default_pairs(**kwargs: Any) -> BitextPairs:
    return BitextPairs(lengths=BitextFilterConfig(), language=LanguageFilterConfig(), **kwargs)


def test_read_bitext_routes_pairs_dead_letters_and_planning_letters(tmp_path: Path) -> None:
    tsv = tmp_path / "extra.fr-en.tsv"
    tsv.write_text(
        "Je voudrais un café.\tI would like a coffee.\n"
        "trois\tcolonnes\tici\n"
        "\tvide\n"
        "Le chat dort.\tThe cat sleeps.\n",
        encoding="utf-8",
    )
    planned = DeadLetter.of(SourceReason.READ_UNKNOWN_FORMAT, ("notes.data", None, None), "?")
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create([OpusInput(OpusFormat.TSV, (str(tsv),)), planned]) | ReadBitext()
    assert_that(
        out["pairs"] | "Pairs" >> beam.Map(lambda r: (r.src, r.trg, r.lang_pair, r.origin_line)),
        equal_to(
            [
                ("Je voudrais un café.", "I would like a coffee.", "fr-en", 1),
                ("Le chat dort.", "The cat sleeps.", "fr-en", 4),
            ]
        ),
        label="pairs",
    )
    assert_that(
        out["dead"]
        | "Dead" >> beam.Map(lambda r: (r["reason"], r["origin_archive"], r["origin_line"])),
        equal_to(
            [
                ("parse_column_count", "extra.fr-en.tsv", 2),
                ("read_unknown_format", "notes.data", None),
            ]
        ),
        label="dead",
    )
    assert_that(
        out["counts"],
        equal_to(
            [
                (("read", "units"), 1),
                # two pairs, one skip and the bad line; the file of unknown format
                # read no line
                (("read", "records"), 4),
                (("read", "dead_letter_lines"), 1),
                (("dead", "parse_column_count"), 1),
                (("dead", "read_unknown_format"), 1),
                (("skip", "align_empty_side"), 1),
            ]
        ),
        label="counts",
    )
    result = p.run()
    result.wait_until_finish()
    assert _counter(result, "parse_column_count") == 1
    assert _counter(result, "align_empty_side") == 1


def test_reader_options_go_only_to_the_readers_that_take_them() -> None:
    opts = {"documents_root": "/docs", "tsv_layout": "pair", "src_lang": "de", "trg_lang": "en"}
    assert reader_options(OpusInput(OpusFormat.XCES, ("a.xml",)), **opts) == {
        "documents_root": "/docs"
    }
    assert reader_options(OpusInput(OpusFormat.TSV, ("a.tsv",)), **opts) == {
        "layout": "pair",
        "src_lang": "de",
        "trg_lang": "en",
    }
    assert reader_options(OpusInput(OpusFormat.MOSES, ("a.de", "a.en")), **opts) == {
        "src_lang": "de",
        "trg_lang": "en",
    }
    assert reader_options(OpusInput(OpusFormat.MOSES, ("de-en.txt.zip",)), **opts) == {}
    assert reader_options(OpusInput(OpusFormat.TMX, ("a.tmx",))) == {}


TRAINING = ("anchor", "positive", "anchor_lang", "positive_lang", "dataset")
"""The columns before the scores (``schemas/bitext.v2``)."""


def _training(kv: tuple[Any, dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
    return kv[0], {k: v for k, v in kv[1].items() if k in TRAINING}


def _scores_are_sound(kv: tuple[Any, dict[str, Any]]) -> bool:
    """The scores the filters computed: after the training columns, the length ratio of a
    kept pair below 3, each side's language as labelled and its probability."""
    row = kv[1]
    names = [f.name for f in arrow_schema(BITEXT)]
    return (
        list(row) == names
        and names[: len(TRAINING)] == list(TRAINING)
        and 1.0 <= row["length_ratio"] < 3.0
        and (row["anchor_lid"], row["positive_lid"]) == (row["anchor_lang"], row["positive_lang"])
        and all(0.0 < row[f"{side}_lid_prob"] <= 1.0 for side in ("anchor", "positive"))
    )


def test_bitext_pairs_orients_filters_dedups_and_counts() -> None:
    raw = [_pair(de, en, i) for i, (de, en) in enumerate(GOOD[:3], start=1)]
    raw += [
        _pair("Ja.", "Yes.", 4),  # too short
        _pair("Der Hund schläft im Garten.", "Der Hund schläft den ganzen Tag.", 5),  # not English
        _pair(*GOOD[0], 6),  # a copy of line 1: line 1 is kept
        _pair(SPACED, GOOD[1][1], 1, dataset="another", file="x.de"),  # line 2 up to whitespace
    ]
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create(raw) | _default_pairs()
    assert_that(
        out["pairs"] | "Scores" >> beam.Map(_scores_are_sound),
        equal_to([True] * 3),
        label="scores",
    )
    assert_that(
        out["pairs"] | "Training" >> beam.Map(_training),
        equal_to(
            [
                _row("demo", *GOOD[0]),
                _row("another", SPACED, GOOD[1][1]),
                _row("demo", *GOOD[2]),
            ]
        ),
        label="pairs",
    )
    assert_that(
        out["rejected"],
        equal_to(
            [
                Rejected("bitext_too_short", "demo", "en-de", "demo|demo.de||4|0"),
                Rejected("lang_mismatch", "demo", "en-de", "demo|demo.de||5|0"),
                Rejected("dedup_duplicate", "demo", "en-de", "demo|demo.de||6|0"),
                # the same pair up to whitespace in another dataset: the smallest origin
                # ("another" < "demo") is kept, the dropped copy counts against "demo"
                Rejected("dedup_duplicate", "demo", "en-de", "demo|demo.de||2|0"),
            ]
        ),
        label="rejected",
    )
    result = p.run()
    result.wait_until_finish()
    assert _counter(result, "dedup_duplicate") == 2
    assert _counter(result, "lang_mismatch") == 1
    assert _counter(result, "pairs_checked") == 6  # language id only after the length check


def test_bitext_pairs_counts_close_per_dataset_and_language_pair() -> None:
    raw = [_pair(de, en, i) for i, (de, en) in enumerate(GOOD, start=1)]
    raw += [_pair("Ja.", "Yes.", 9), _pair(*GOOD[0], 10)]
    raw += [
        RawPair(
            "Hello there, my friend.", "Hola, mi amigo querido.", "en", "es", "demo", "f", None, 1
        )
    ]
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create(raw) | _default_pairs()
    assert_that(
        out["counts"],
        equal_to(
            [
                (("cand", "demo", "en-de"), 7),
                (("cand", "demo", "en-es"), 1),
                (("drop", "demo", "en-de", "bitext_too_short"), 1),
                (("drop", "demo", "en-de", "dedup_duplicate"), 1),
                (("rows", "demo", "en-de"), 5),
                (("rows", "demo", "en-es"), 1),
            ]
        ),
    )
    p.run().wait_until_finish()


def test_cap_keeps_the_smallest_seeded_hashes_whatever_the_order() -> None:
    raw = [_pair(de, en, i) for i, (de, en) in enumerate(GOOD, start=1)]
    ranks = sorted(
        (seeded_hash(7, "cap", "demo", "en-de", pair_key(en, de)), en) for de, en in GOOD
    )
    expected = sorted(en for _, en in ranks[:2])
    for order in (raw, raw[::-1]):
        p = TestPipeline(runner="FnApiRunner")
        out = p | beam.Create(order) | _default_pairs(seed=7, max_pairs_per_lang=2)
        assert_that(
            out["pairs"] | beam.Map(lambda kv: kv[1]["anchor"]), equal_to(expected), label="kept"
        )
        assert_that(
            out["rejected"] | beam.Map(lambda r: r.reason),
            equal_to(["cap_over_limit"] * 3),
            label="capped",
        )
        result = p.run()
        result.wait_until_finish()
        assert _counter(result, "cap_over_limit") == 3


def test_cleaning_runs_before_the_filters_and_goes_into_the_row() -> None:
    raw = [
        _pair(
            "Schau mal hier: https://example.com/x  ist schön",
            "Look here: https://example.com/x is nice",
            1,
        ),
        _pair(
            "WIR SEHEN UNS MORGEN IN DER SCHULE.", "WE WILL SEE EACH OTHER AT SCHOOL TOMORROW.", 2
        ),
    ]
    p = TestPipeline(runner="FnApiRunner")
    ct = _default_pairs(profile=get_profile("ct"))
    lower = _default_pairs(lowercase=True)
    cleaned = p | "Ct" >> beam.Create(raw[:1]) | "CtPairs" >> ct
    lowered = p | "Lower" >> beam.Create(raw[1:]) | "LowerPairs" >> lower
    assert_that(
        cleaned["pairs"] | "CtText" >> beam.Map(lambda kv: (kv[1]["anchor"], kv[1]["positive"])),
        equal_to([("Look here: HTTPURL is nice", "Schau mal hier: HTTPURL ist schön")]),
        label="ct",
    )
    assert_that(
        lowered["pairs"] | "LowText" >> beam.Map(lambda kv: kv[1]["anchor"]),
        equal_to(["we will see each other at school tomorrow."]),
        label="lower",
    )
    p.run().wait_until_finish()
