"""``--keep-rejected``: every dropped pair under ``rejected/``, with its reason and the value
that failed, the same bytes on every engine, accounted for and checked by ``validate``.

The pure rows first (:mod:`corpusforge.pairing.rejects`, a stub language identifier), then
whole builds: bitext with every format, bad records and a cap (drops by length, language,
duplicate and cap), and ParaNMT with reversed duplicates, each on Beam and the local engine.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from corpusforge.builds import bitext, paranmt
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.inspect.validate import validate_release
from corpusforge.pairing.candidates import Dropped, PairRules
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    FilterReason,
    LanguageFilterConfig,
)
from corpusforge.pairing.rejects import copy_row, rejected_row
from corpusforge.schemas import REJECTED, arrow_schema
from tests.bitext.test_build_bitext import write_fixtures
from tests.bitext.test_build_paranmt import GOOD, LINES, write_paranmt
from tests.bitext.test_local_engine import same_on_every_engine

RULES = PairRules(language=LanguageFilterConfig(min_confidence=0.5), lengths=BitextFilterConfig())


class StubLid:
    """Says ``fr`` for a text containing "bonjour", else ``en``; 0.3 for "maybe", else 0.9."""

    def predict(self, text: str) -> tuple[str, float]:
        return ("fr" if "bonjour" in text else "en"), (0.3 if "maybe" in text else 0.9)


def dropped(reason: FilterReason, anchor: str, positive: str, **extra: Any) -> Dropped:
    row = {"anchor": anchor, "positive": positive, "anchor_lang": "en", "positive_lang": "de"}
    return Dropped(reason, "T", "en-de", "T|f||3|0", {**row, **extra})


@pytest.mark.parametrize(
    ("reason", "anchor", "positive", "value", "detail"),
    [
        (FilterReason.BITEXT_TOO_SHORT, "one two three four", "eins zwei", 2.0, "positive"),
        (FilterReason.BITEXT_TOO_LONG, "a " * 101, "b c d", 101.0, "anchor"),
        (FilterReason.BITEXT_LENGTH_RATIO, "a b c d e f g h i", "x y z", 3.0, None),
        (FilterReason.LANG_MISMATCH, "hello there you", "bonjour mes amis", 0.9, "positive:fr"),
        (FilterReason.LANG_LOW_CONFIDENCE, "maybe english here", "und so", 0.3, "anchor:en"),
        (FilterReason.BITEXT_HTML_TAGS, "a b c", "x <b>y</b> z", None, "positive"),
    ],
)
def test_a_filter_drop_carries_the_value_that_failed(
    reason: FilterReason, anchor: str, positive: str, value: float | None, detail: str | None
) -> None:
    row = rejected_row(dropped(reason, anchor, positive), RULES, StubLid())
    assert row["reason"] == str(reason)
    assert row["value"] == (None if value is None else pytest.approx(value))
    assert row["detail"] == detail
    assert (row["anchor"], row["positive"], row["origin"]) == (anchor, positive, "T|f||3|0")
    assert list(row) == arrow_schema(REJECTED).names


def test_paraphrase_drops_carry_mean_words_score_and_overlap() -> None:
    rules = PairRules(language=LanguageFilterConfig())
    sides = {"anchor": "a b c d", "positive": "a b c d", "score": 0.25}
    for reason, value in (
        (FilterReason.PARAPHRASE_TOO_SHORT, 4.0),
        (FilterReason.PARAPHRASE_SCORE_TOO_LOW, 0.25),
        (FilterReason.PARAPHRASE_OVERLAP_TOO_HIGH, 1.0),
    ):
        drop = Dropped(reason, "paranmt", "en-en", "paranmt|f||1", sides)
        row = rejected_row(drop, rules, StubLid())
        assert (row["reason"], row["value"]) == (str(reason), value)
        assert (row["anchor_lang"], row["positive_lang"]) == ("en", "en")


def test_duplicates_the_cap_and_unknown_reasons_have_no_value() -> None:
    row = copy_row({"anchor": "a", "positive": "b"}, "p", "en-en", "dedup_duplicate", "p|f||2")
    assert (row["value"], row["detail"], row["anchor_lang"]) == (None, None, "en")
    drop = Dropped(FilterReason.CAP_OVER_LIMIT, "T", "en-de", "k", {"anchor": "a", "positive": "b"})
    assert rejected_row(drop, RULES, StubLid())["value"] is None


def rejected_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((out / "rejected").rglob("*.parquet")):
        rows += pq.read_table(path).to_pylist()
    return rows


def check_release(out: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Balanced, valid, every drop a rejected row of the rejected schema, once."""
    assert manifest["accounting"]["balanced"]
    assert manifest["config"]["keep_rejected"] is True
    assert manifest["schemas"]["rejected"] == "rejected.v1"
    names = [i["name"] for i in manifest["accounting"]["identities"]]
    assert "dropped == rows in rejected/" in names
    rows = rejected_rows(out)
    assert len(rows) == sum(manifest["counts"]["dropped"].values()) > 0
    by_reason: dict[str, int] = {}
    for row in rows:
        by_reason[row["reason"]] = by_reason.get(row["reason"], 0) + 1
    assert by_reason == manifest["counts"]["dropped"]
    listed = [f for f in manifest["files"] if f["path"].startswith("rejected/")]
    assert listed and all(f["schema"] == "rejected.v1" for f in listed)
    assert len({r["origin"] for r in rows}) == len(rows)  # each pair read dropped once
    assert validate_release(out).ok
    return rows


def test_bitext_rejects_are_the_same_on_every_engine_and_validate(tmp_path: Path) -> None:
    inputs = tuple(write_fixtures(tmp_path / "in"))
    same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(
            inputs=inputs, out=str(out), max_pairs_per_lang=2, rows_per_shard=1, keep_rejected=True
        ),
        tmp_path,
    )
    out = tmp_path / "local-2"
    manifest = bitext.build(
        BitextConfig(inputs=inputs, out=str(out), max_pairs_per_lang=2, keep_rejected=True)
    )
    rows = check_release(out, manifest)
    reasons = {r["reason"] for r in rows}
    assert {"cap_over_limit", "bitext_too_short"} <= reasons
    for row in rows:
        folder = f"rejected/{row['dataset']}/{row['anchor_lang']}-{row['positive_lang']}/"
        assert any(f["path"].startswith(folder) for f in manifest["files"])
        if row["reason"].startswith(("bitext_", "lang_")):
            assert row["value"] is not None


def test_paranmt_rejects_are_the_same_on_every_engine(tmp_path: Path) -> None:
    lines = [*LINES, "\t".join((*GOOD[2], "0.55")), "\t".join((GOOD[2][1], GOOD[2][0], "0.6"))]
    uri = write_paranmt(tmp_path / "in" / "para.txt.gz")
    more = tmp_path / "in" / "more.txt"
    more.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = same_on_every_engine(
        paranmt.build,
        lambda out: ParaphraseConfig(inputs=(uri, str(more)), out=str(out), keep_rejected=True),
        tmp_path,
    )
    assert any(name.startswith("rejected/paranmt/part-") for name in expected)
    out = tmp_path / "local-2"
    manifest = paranmt.build(
        ParaphraseConfig(inputs=(uri, str(more)), out=str(out), keep_rejected=True)
    )
    rows = check_release(out, manifest)
    assert "dedup_duplicate" in {r["reason"] for r in rows}


def test_validate_fails_on_a_tampered_or_unlisted_rejected_file(tmp_path: Path) -> None:
    inputs = tuple(write_fixtures(tmp_path / "in"))
    out = tmp_path / "release"
    bitext.build(BitextConfig(inputs=inputs, out=str(out), keep_rejected=True))
    assert validate_release(out).ok
    shard = sorted((out / "rejected").rglob("*.parquet"))[0]
    table = pq.read_table(shard)
    pq.write_table(table.slice(1), shard)
    report = validate_release(out)
    assert not report.ok
    assert {"file_sha256_mismatch", "file_rows_mismatch"} & set(report.failed_checks())
    pq.write_table(table, shard.with_name("part-extra.parquet"))
    assert "unlisted_file" in validate_release(out).failed_checks()


def test_without_the_flag_nothing_is_kept_aside(tmp_path: Path) -> None:
    inputs = tuple(write_fixtures(tmp_path / "in"))
    out = tmp_path / "release"
    manifest = bitext.build(replace(BitextConfig(inputs=inputs, out=str(out)), engine="local"))
    assert not (out / "rejected").exists()
    assert "keep_rejected" not in manifest["config"]
    assert "rejected" not in manifest["schemas"]
