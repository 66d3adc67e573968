"""``--holdout N``: N pairs of each dataset and language pair (each dataset for ParaNMT) set
aside by seeded hash under ``heldout/``, never in ``pairs/``, the same bytes on every engine,
accounted for and checked by ``validate``; ``corpusforge eval bitext --heldout`` reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from corpusforge.builds import bitext, paranmt
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.config.flags import FlagError
from corpusforge.inspect.validate import validate_release
from corpusforge.local import bitext as engine
from tests.bitext.test_build_bitext import write_fixtures
from tests.bitext.test_build_paranmt import GOOD, LINES, write_paranmt
from tests.bitext.test_local_engine import same_on_every_engine


def texts(folder: Path) -> set[tuple[str, str]]:
    return {
        (r["anchor"], r["positive"])
        for p in folder.rglob("*.parquet")
        for r in pq.read_table(p).to_pylist()
    }


def check_heldout(out: Path, manifest: dict[str, Any], per_group: int) -> set[tuple[str, str]]:
    assert manifest["accounting"]["balanced"]
    assert validate_release(out).ok
    names = [i["name"] for i in manifest["accounting"]["identities"]]
    assert "pairs_read == rows + heldout + dropped" in names
    held = texts(out / "heldout")
    assert held and not held & texts(out / "pairs")  # never in the training files
    assert manifest["counts"]["heldout"] == len(held)
    for ds in manifest["datasets"].values():
        for tally in ds.get("lang_pairs", {"": ds}).values():
            kept = tally["rows"] + tally["heldout"]
            assert tally["heldout"] == min(per_group, kept)
    return held


def test_bitext_holdout_on_every_engine_with_a_cap(tmp_path: Path) -> None:
    inputs = tuple(write_fixtures(tmp_path / "in"))
    same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(
            inputs=inputs, out=str(out), holdout=1, max_pairs_per_lang=1, rows_per_shard=1
        ),
        tmp_path,
    )
    out = tmp_path / "again"
    manifest = bitext.build(
        BitextConfig(inputs=inputs, out=str(out), holdout=1, max_pairs_per_lang=1, seed=3)
    )
    check_heldout(out, manifest, 1)
    assert manifest["config"]["holdout"] == 1
    folders = {f["path"].rsplit("/", 1)[0] for f in manifest["files"]}
    assert "heldout/mini/en-de" in folders


def test_holdout_without_a_cap_over_many_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boundary of each group is found across partitions, as Beam finds it whole."""
    monkeypatch.setattr(engine, "PARTITION_BYTES", 256)
    inputs = tuple(write_fixtures(tmp_path / "in"))
    same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(inputs=inputs, out=str(out), holdout=2, max_pairs_per_lang=None),
        tmp_path,
    )


def test_paranmt_holdout_on_every_engine(tmp_path: Path) -> None:
    lines = [*LINES, "\t".join((*GOOD[2], "0.55")), "\t".join((GOOD[2][1], GOOD[2][0], "0.6"))]
    uri = write_paranmt(tmp_path / "in" / "para.txt.gz")
    more = tmp_path / "in" / "more.txt"
    more.write_text("\n".join(lines) + "\n", encoding="utf-8")
    same_on_every_engine(
        paranmt.build,
        lambda out: ParaphraseConfig(inputs=(uri, str(more)), out=str(out), holdout=1),
        tmp_path,
    )
    out = tmp_path / "again"
    manifest = paranmt.build(ParaphraseConfig(inputs=(uri, str(more)), out=str(out), holdout=1))
    assert len(check_heldout(out, manifest, 1)) == 1
    assert [f for f in manifest["files"] if f["path"].startswith("heldout/paranmt/part-")]


def test_validate_fails_on_a_tampered_heldout_file(tmp_path: Path) -> None:
    inputs = tuple(write_fixtures(tmp_path / "in"))
    out = tmp_path / "release"
    bitext.build(BitextConfig(inputs=inputs, out=str(out), holdout=1))
    shard = sorted((out / "heldout").rglob("*.parquet"))[0]
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, 0), shard)
    assert {"file_sha256_mismatch", "file_rows_mismatch"} & set(
        validate_release(out).failed_checks()
    )


def test_validate_finds_a_heldout_pair_among_the_training_pairs(tmp_path: Path) -> None:
    import pyarrow as pa

    inputs = tuple(write_fixtures(tmp_path / "in"))
    out = tmp_path / "release"
    bitext.build(BitextConfig(inputs=inputs, out=str(out), holdout=1))
    held = pq.read_table(sorted((out / "heldout" / "mini" / "en-de").glob("*.parquet"))[0])
    shard = sorted((out / "pairs" / "mini" / "en-de").glob("*.parquet"))[0]
    pq.write_table(pa.concat_tables([pq.read_table(shard), held]), shard)
    report = validate_release(out)
    leaks = [f for f in report.failures if f.check == "heldout_leak"]
    assert [(f.path, f.count) for f in leaks] == [(str(shard.relative_to(out)), 1)]


def test_eval_bitext_reads_the_heldout_folder(tmp_path: Path) -> None:
    from corpusforge.commands.eval import app

    inputs = tuple(write_fixtures(tmp_path / "in"))
    out = tmp_path / "release"
    bitext.build(BitextConfig(inputs=inputs, out=str(out), holdout=3))
    report = tmp_path / "report.json"
    folder = str(out / "heldout" / "mini" / "en-de")
    args = ["bitext", "--heldout", folder, "--model", "lexical", "--json", str(report)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["pairs"] == len(texts(out / "heldout" / "mini" / "en-de"))
    result = CliRunner().invoke(app, ["bitext", "--model", "lexical"])
    assert result.exit_code == 2


def test_a_bad_holdout_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(FlagError, match="--holdout"):
        BitextConfig(inputs=("x",), out=str(tmp_path), holdout=-1)
