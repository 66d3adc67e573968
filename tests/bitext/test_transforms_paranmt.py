"""The ParaNMT composites on small inline inputs: main outputs, reject outputs and counters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apache_beam as beam
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from corpusforge.pairing.filters import LanguageFilterConfig, ParaphraseFilterConfig
from corpusforge.schemas import PARAPHRASE, arrow_schema
from corpusforge.sources.paranmt.parse import RawParaphrase
from corpusforge.text.overlap import trigram_overlap
from corpusforge.transforms.bitext import ParaphrasePairs, ReadParaphrases, Rejected

REF = "i do n't think we should go to the party tonight ."
PARA = "i believe it 's better if we stay home this evening ."


def _raw(reference: str, paraphrase: str, score: float, line: int) -> RawParaphrase:
    return RawParaphrase(reference, paraphrase, score, "paranmt", "p.txt", None, line)


def _key(line: int) -> str:
    return f"paranmt|p.txt||{line}"


def _paraphrases(**kwargs: Any) -> ParaphrasePairs:
    return ParaphrasePairs(
        filters=ParaphraseFilterConfig(), language=LanguageFilterConfig(), **kwargs
    )


def test_read_paraphrases_keeps_the_file_going_after_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "para-nmt-sample.txt"
    path.write_text(
        f"{REF}\t{PARA}\t0.8\nonly two\tcolumns\n{REF}\t{PARA}\thigh\n{PARA}\t{REF}\t0.5\n",
        encoding="utf-8",
    )
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create([str(path)]) | ReadParaphrases("paranmt")
    assert_that(
        out["pairs"] | "Lines" >> beam.Map(lambda r: (r.origin_line, r.score)),
        equal_to([(1, 0.8), (4, 0.5)]),
        label="pairs",
    )
    assert_that(
        out["dead"] | "Dead" >> beam.Map(lambda r: (r["reason"], r["origin_line"])),
        equal_to([("parse_column_count", 2), ("parse_bad_score", 3)]),
        label="dead",
    )
    assert_that(
        out["counts"],
        equal_to(
            [
                (("read", "units"), 1),
                (("read", "records"), 4),
                (("read", "dead_letter_lines"), 2),
                (("dead", "parse_column_count"), 1),
                (("dead", "parse_bad_score"), 1),
            ]
        ),
        label="counts",
    )
    result = p.run()
    result.wait_until_finish()
    counters = result.metrics().query(MetricsFilter().with_name("parse_bad_score"))["counters"]
    assert sum(c.committed for c in counters) == 1


def _training(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if not k.endswith("_lid_prob")}


def _lid_probs_after_the_training_columns(kv: tuple[Any, dict[str, Any]]) -> bool:
    row = kv[1]
    names = [f.name for f in arrow_schema(PARAPHRASE)]
    probs = (row["anchor_lid_prob"], row["positive_lid_prob"])
    return list(row) == names and names[-2:] == list(row)[-2:] and all(0 < p <= 1 for p in probs)


def test_paraphrase_pairs_filters_in_psp_order_and_keeps_one_copy() -> None:
    raw = [
        _raw(REF, PARA, 0.8, 1),
        _raw("yes .", "sure .", 0.9, 2),  # mean length 2
        _raw(REF, PARA, 0.2, 3),  # score too low
        _raw(REF, PARA, 1.5, 4),  # score too high
        _raw(REF, REF.replace("tonight", "today"), 0.9, 5),  # near copy: overlap 0.9
        _raw(REF, "je pense que nous ne devrions pas aller à la fête ce soir .", 0.6, 6),
        _raw(PARA, REF, 0.7, 7),  # line 1 the other way round: a duplicate
        _raw(" ".join(["word"] * 50), " ".join(["other"] * 45), 0.5, 8),  # mean 47.5
    ]
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create(raw) | _paraphrases()
    assert_that(
        out["pairs"] | "Probs" >> beam.Map(_lid_probs_after_the_training_columns),
        equal_to([True]),
        label="scores",
    )
    assert_that(
        out["pairs"] | "Training" >> beam.Map(lambda kv: (kv[0], _training(kv[1]))),
        equal_to(
            [
                (
                    ("paranmt", "en-en"),
                    {
                        "anchor": REF,
                        "positive": PARA,
                        "score": 0.8,
                        "trigram_overlap": trigram_overlap(REF, PARA),
                    },
                )
            ]
        ),
        label="pairs",
    )
    assert_that(
        out["rejected"],
        equal_to(
            [
                Rejected("paraphrase_too_short", "paranmt", "en-en", _key(2)),
                Rejected("paraphrase_score_too_low", "paranmt", "en-en", _key(3)),
                Rejected("paraphrase_score_too_high", "paranmt", "en-en", _key(4)),
                Rejected("paraphrase_overlap_too_high", "paranmt", "en-en", _key(5)),
                Rejected("lang_mismatch", "paranmt", "en-en", _key(6)),
                Rejected("dedup_duplicate", "paranmt", "en-en", _key(7)),
                Rejected("paraphrase_too_long", "paranmt", "en-en", _key(8)),
            ]
        ),
        label="rejected",
    )
    assert_that(
        out["counts"],
        equal_to(
            [
                (("cand", "paranmt", "en-en"), 8),
                (("rows", "paranmt", "en-en"), 1),
                *(
                    (("drop", "paranmt", "en-en", reason), 1)
                    for reason in (
                        "paraphrase_too_short",
                        "paraphrase_too_long",
                        "paraphrase_score_too_low",
                        "paraphrase_score_too_high",
                        "paraphrase_overlap_too_high",
                        "lang_mismatch",
                        "dedup_duplicate",
                    )
                ),
            ]
        ),
        label="counts",
    )
    result = p.run()
    result.wait_until_finish()
    query = result.metrics().query(MetricsFilter().with_namespace("paraphrase"))
    assert sum(c.committed for c in query["counters"]) == 5
    lid = result.metrics().query(MetricsFilter().with_name("pairs_checked"))["counters"]
    assert sum(c.committed for c in lid) == 3  # lines 1, 6 and 7: after the cheap checks


@pytest.mark.parametrize(
    ("anchor", "lowercase", "expected"),
    [
        (REF.upper(), True, REF),  # shouted text also fails language id unless lowercased
        ("I don't think we should go to the party tonight.", False, None),
    ],
)
def test_lowercasing_without_a_profile(anchor: str, lowercase: bool, expected: str | None) -> None:
    raw = [_raw(anchor, PARA, 0.8, 1)]
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create(raw) | _paraphrases(lowercase=lowercase)
    assert_that(out["pairs"] | beam.Map(lambda kv: kv[1]["anchor"]), equal_to([expected or anchor]))
    p.run().wait_until_finish()
