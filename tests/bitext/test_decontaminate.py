"""``--decontaminate FILE...`` for bitext and ParaNMT: a side leaking from an evaluation set is
dropped as ``decontam_exact`` or ``decontam_ngram`` (Twitter's rule), on every engine alike,
and a kept-aside pair names the side and the set."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from corpusforge.builds import bitext, paranmt
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.config.flags import FlagError
from corpusforge.pairing.decontam import check_contamination, contamination, load_decontaminator
from corpusforge.pairing.filters import FilterReason
from tests.bitext.test_build_bitext import write_fixtures
from tests.bitext.test_build_paranmt import GOOD, write_paranmt
from tests.bitext.test_local_engine import same_on_every_engine

LONG = "the committee met on tuesday to discuss the new budget for the city schools next year"


def eval_file(path: Path, lines: list[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_exact_and_ngram_leaks_are_told_apart(tmp_path: Path) -> None:
    deco = load_decontaminator(
        [eval_file(tmp_path / "sts-test.txt", ["A man is dancing.", LONG])], None, False
    )
    assert deco is not None
    assert contamination("a man is dancing", "ein Mann tanzt", deco) == (
        FilterReason.DECONTAM_EXACT,
        "anchor",
        "sts-test.txt",
    )
    leaked = "Yesterday " + LONG.replace("tuesday", "Tuesday") + " and more"
    assert check_contamination("Guten Tag", leaked, deco) is FilterReason.DECONTAM_NGRAM
    assert check_contamination("a man is dancing now", "x", deco) is None
    assert check_contamination("a man is dancing", "x", None) is None
    assert load_decontaminator([], None, False) is None


def test_bitext_leaks_are_dropped_on_every_engine(tmp_path: Path) -> None:
    inputs = tuple(write_fixtures(tmp_path / "in"))
    sets = (eval_file(tmp_path / "eval" / "sts.txt", ["The weather is really very nice today"]),)
    same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(
            inputs=inputs, out=str(out), decontaminate=sets, keep_rejected=True
        ),
        tmp_path,
    )
    out = tmp_path / "local-2"
    manifest = bitext.build(
        BitextConfig(inputs=inputs, out=str(out), decontaminate=sets, keep_rejected=True)
    )
    assert manifest["counts"]["dropped"]["decontam_exact"] == 1
    assert manifest["config"]["decontaminate"] == ["sts.txt"]
    for path in (out / "pairs").rglob("*.parquet"):
        assert "The weather is really very nice today." not in pq.read_table(path)["anchor"]
    rows = [
        r
        for p in (out / "rejected").rglob("*.parquet")
        for r in pq.read_table(p).to_pylist()
        if r["reason"] == "decontam_exact"
    ]
    assert [r["detail"] for r in rows] == ["anchor:sts.txt"]


def test_paranmt_leaks_are_dropped_on_every_engine(tmp_path: Path) -> None:
    uri = write_paranmt(tmp_path / "in" / "para.txt.gz")
    sets = (eval_file(tmp_path / "eval" / "sick.txt", [GOOD[2][1]]),)
    same_on_every_engine(
        paranmt.build,
        lambda out: ParaphraseConfig(inputs=(uri,), out=str(out), decontaminate=sets),
        tmp_path,
    )
    manifest = paranmt.build(
        ParaphraseConfig(inputs=(uri,), out=str(tmp_path / "again"), decontaminate=sets)
    )
    assert manifest["counts"]["dropped"]["decontam_exact"] == 1
    assert manifest["accounting"]["balanced"]


def test_a_bad_decontaminate_value_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(FlagError, match="--decontaminate"):
        BitextConfig(inputs=("x",), out=str(tmp_path), decontaminate=("",))
