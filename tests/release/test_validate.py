"""``validate_release``: a built release passes; each way of breaking a copy is caught by name.

Content breakages are "resealed" (the manifest's rows, bytes and sha256 of the changed file
are recomputed), so they are caught by the content checks, not only by the checksums.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpusforge.inspect.validate import Check, schema_differences, validate_release
from corpusforge.release.accounting import recompute_identities
from corpusforge.schemas import BENCHMARK, MANIFEST, PAIR, arrow_schema, validate_json
from corpusforge.sinks.parquet import table_bytes
from tests.release import copy_release, real_release, synthetic_release

QT = "pairs/qt/part-00000-of-00001.parquet"
ALL = "pairs/all/part-00000-of-00001.parquet"
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_release(tmp_path_factory)


@pytest.fixture
def broken(synthetic: Path, tmp_path: Path) -> Path:
    return copy_release(synthetic, tmp_path)


def read_manifest(release: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((release / "manifest.json").read_text())
    return doc


def write_manifest(release: Path, manifest: dict[str, Any]) -> None:
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))


def rows_of(release: Path, rel: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(release / rel).to_pylist()
    return rows


def rewrite(release: Path, rel: str, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    (release / rel).write_bytes(table_bytes(rows, schema))


def reseal(release: Path, rel: str) -> None:
    """Make the manifest's entry for ``rel`` match the file again (rows, bytes, sha256)."""
    manifest = read_manifest(release)
    data = (release / rel).read_bytes()
    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry["rows"] = pq.ParquetFile(release / rel).metadata.num_rows
            entry["bytes"] = len(data)
            entry["sha256"] = hashlib.sha256(data).hexdigest()
    write_manifest(release, manifest)


def edit_qt(
    release: Path, change: Callable[[list[dict[str, Any]]], None], schema: pa.Schema | None = None
) -> None:
    """Apply ``change`` to the rows of ``pairs/qt`` and to the same rows in ``pairs/all``
    (both sorted by ids), then reseal both: a forgery only the content checks can see."""
    schema = schema or arrow_schema(PAIR)
    qt = rows_of(release, QT)
    change(qt)
    rewrite(release, QT, qt, schema)
    everything = rows_of(release, ALL)
    change([r for r in everything if r["dataset"] == "qt"])
    rewrite(release, ALL, everything, schema)
    reseal(release, QT)
    reseal(release, ALL)


def failed(release: Path) -> set[str]:
    return set(validate_release(release).failed_checks())


# ---------------------------------------------------------------------------------------
# Releases as built


def test_the_synthetic_release_is_valid(synthetic: Path) -> None:
    manifest = read_manifest(synthetic)
    assert any(b["rows"] for b in manifest["benchmarks"].values()), "benchmarks must not be empty"
    report = validate_release(synthetic)
    assert report.ok, report.failures
    assert report.files_checked == len(manifest["files"])
    bench_rows = sum(b["rows"] for b in manifest["benchmarks"].values())
    pair_rows = sum(f["rows"] for f in manifest["files"] if f["path"].startswith("pairs/"))
    assert report.rows_scanned == bench_rows + pair_rows


def test_the_real_release_is_valid(
    realdata: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    release = real_release(tmp_path_factory, realdata)
    report = validate_release(str(release))
    assert report.ok, report.failures
    assert report.to_json()["ok"] is True


def test_recomputed_identities_match_the_stored_ones(synthetic: Path) -> None:
    manifest = read_manifest(synthetic)
    recomputed, missing = recompute_identities(manifest)
    assert not missing
    assert all(i["holds"] for i in recomputed)
    stored = {i["name"]: i for i in manifest["accounting"]["identities"]}
    mine = {i["name"]: i for i in recomputed}
    assert set(stored) <= set(mine)  # every identity the build states is recomputed
    assert all(mine[n] == stored[n] for n in stored)


# ---------------------------------------------------------------------------------------
# Files


def test_a_deleted_file_is_file_missing(broken: Path) -> None:
    (broken / QT).unlink()
    assert failed(broken) == {Check.FILE_MISSING}


def test_a_flipped_byte_is_file_sha256_mismatch(broken: Path) -> None:
    data = bytearray((broken / QT).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (broken / QT).write_bytes(bytes(data))
    found = failed(broken)
    assert Check.FILE_SHA256_MISMATCH in found
    assert found <= {Check.FILE_SHA256_MISMATCH, Check.FILE_UNREADABLE}


def test_an_appended_row_is_file_rows_mismatch(broken: Path) -> None:
    rows = rows_of(broken, QT)
    rows.append({**rows[0], "anchor": "a brand new anchor text", "anchor_id": 1, "positive_id": 2})
    rewrite(broken, QT, rows, arrow_schema(PAIR))
    assert failed(broken) == {
        Check.FILE_ROWS_MISMATCH,
        Check.FILE_SHA256_MISMATCH,
        Check.FILE_BYTES_MISMATCH,
    }


def test_an_unlisted_file_is_reported(broken: Path) -> None:
    (broken / "pairs" / "qt" / "part-extra.parquet").write_bytes((broken / QT).read_bytes())
    (broken / "benchmarks" / "notes.txt").write_text("hello")
    report = validate_release(broken)
    assert report.failed_checks() == [Check.UNLISTED_FILE]
    assert {f.path for f in report.failures} == {
        "pairs/qt/part-extra.parquet",
        "benchmarks/notes.txt",
    }


# ---------------------------------------------------------------------------------------
# Schemas


def _without_lang() -> pa.Schema:
    schema = arrow_schema(PAIR)
    return schema.remove(schema.get_field_index("lang"))


def _large_strings() -> pa.Schema:
    schema = arrow_schema(PAIR)
    i = schema.get_field_index("anchor")
    return schema.set(i, schema.field(i).with_type(pa.large_string()))


def _no_metadata() -> pa.Schema:
    return arrow_schema(PAIR).remove_metadata()


def test_texts_of_another_type_are_schema_mismatch_not_a_crash(broken: Path) -> None:
    schema = arrow_schema(PAIR)
    schema = schema.set(0, schema.field(0).with_type(pa.int64()))
    rows = [{**r, "anchor": i} for i, r in enumerate(rows_of(broken, QT))]
    rewrite(broken, QT, rows, schema)
    reseal(broken, QT)
    bench = "benchmarks/dr.parquet"
    bench_schema = arrow_schema(BENCHMARK)
    i = bench_schema.get_field_index("labels")
    bench_schema = bench_schema.set(i, pa.field("labels", pa.string(), nullable=False))
    rewrite(broken, bench, [{**r, "labels": "1"} for r in rows_of(broken, bench)], bench_schema)
    reseal(broken, bench)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.SCHEMA_MISMATCH]
    assert {f.path for f in report.failures} == {QT, bench}


@pytest.mark.parametrize(
    ("make_schema", "expected"),
    [
        (_without_lang, "columns"),
        (_large_strings, "anchor: type large_string != string"),
        (_no_metadata, "metadata corpusforge.schema=None"),
    ],
)
def test_a_wrong_schema_is_schema_mismatch(
    broken: Path, make_schema: Callable[[], pa.Schema], expected: str
) -> None:
    schema = make_schema()
    rows = [{k: v for k, v in r.items() if k in schema.names} for r in rows_of(broken, QT)]
    rewrite(broken, QT, rows, schema)
    reseal(broken, QT)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.SCHEMA_MISMATCH]
    assert expected in report.failures[0].detail


def test_a_declared_version_that_differs_is_schema_mismatch(broken: Path) -> None:
    manifest = read_manifest(broken)
    manifest["schemas"]["pair"] = "pair.v2"
    write_manifest(broken, manifest)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.SCHEMA_MISMATCH]
    assert {f.path for f in report.failures} == {
        f["path"] for f in manifest["files"] if f["schema"] == "pair.v1"
    }


def test_schema_differences_name_nullability() -> None:
    nullable = arrow_schema(PAIR).set(0, arrow_schema(PAIR).field(0).with_nullable(True))
    assert schema_differences(nullable, PAIR) == ["anchor: nullable=True != False"]
    assert schema_differences(arrow_schema(PAIR), PAIR) == []


# ---------------------------------------------------------------------------------------
# Contents


@pytest.mark.parametrize("text", ["", "   \t "])
def test_an_empty_text_is_empty_text(broken: Path, text: str) -> None:
    def blank(rows: list[dict[str, Any]]) -> None:
        rows[1]["positive"] = text

    edit_qt(broken, blank)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.EMPTY_TEXT]
    assert [(f.path, f.count) for f in report.failures] == [(ALL, 1), (QT, 1)]
    assert "row 1: positive" in report.failures[1].detail


def test_a_null_text_is_empty_text_and_schema_mismatch(broken: Path) -> None:
    schema = arrow_schema(PAIR)
    schema = schema.set(0, schema.field(0).with_nullable(True))

    def null(rows: list[dict[str, Any]]) -> None:
        rows[0]["anchor"] = None

    edit_qt(broken, null, schema)
    assert failed(broken) == {Check.EMPTY_TEXT, Check.SCHEMA_MISMATCH}


def test_an_empty_benchmark_candidate_is_empty_text(broken: Path) -> None:
    rel = next(f"benchmarks/{b}.parquet" for b in ("dr", "cr", "dq", "cq") if _rows(broken, b))
    rows = rows_of(broken, rel)
    rows[0]["candidates"][3] = ""
    rewrite(broken, rel, rows, arrow_schema(BENCHMARK))
    reseal(broken, rel)
    assert failed(broken) == {Check.EMPTY_TEXT}


def test_misaligned_benchmark_lists_are_reported(broken: Path) -> None:
    rel = next(f"benchmarks/{b}.parquet" for b in ("dr", "cr", "dq", "cq") if _rows(broken, b))
    rows = rows_of(broken, rel)
    rows[0]["labels"] = rows[0]["labels"][:-1]
    rewrite(broken, rel, rows, arrow_schema(BENCHMARK))
    reseal(broken, rel)
    assert failed(broken) == {Check.BENCHMARK_MISALIGNED}


def _rows(release: Path, bench: str) -> int:
    return int(read_manifest(release)["benchmarks"][bench]["rows"])


def test_a_duplicate_pair_is_duplicate_pair(broken: Path) -> None:
    def duplicate(rows: list[dict[str, Any]]) -> None:
        rows[1]["anchor"], rows[1]["positive"] = rows[0]["anchor"], rows[0]["positive"]

    edit_qt(broken, duplicate)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.DUPLICATE_PAIR]
    assert [(f.path, f.count) for f in report.failures] == [("pairs/all/", 1), ("pairs/qt/", 1)]


def test_the_same_texts_in_two_datasets_of_all_are_no_duplicate(broken: Path) -> None:
    rows = rows_of(broken, ALL)
    other = next(r for r in rows if r["dataset"] != rows[0]["dataset"])
    other["anchor"], other["positive"] = rows[0]["anchor"], rows[0]["positive"]
    rewrite(broken, ALL, rows, arrow_schema(PAIR))
    reseal(broken, ALL)
    # not a duplicate (two datasets), but no longer the rows of the datasets
    report = validate_release(broken)
    assert report.failed_checks() == [Check.MIX_MISMATCH]
    assert "1 rows in pairs/all/ that no other dataset has, 1 rows" in report.failures[0].detail


def test_a_row_missing_from_all_is_mix_mismatch(broken: Path) -> None:
    rows = rows_of(broken, ALL)
    manifest = read_manifest(broken)
    rewrite(broken, ALL, rows[1:], arrow_schema(PAIR))
    reseal(broken, ALL)
    manifest = read_manifest(broken)
    manifest["datasets"]["all"]["rows"] -= 1  # hide it from the accounting too
    write_manifest(broken, manifest)
    found = failed(broken)
    assert Check.MIX_MISMATCH in found
    assert found <= {Check.MIX_MISMATCH, Check.ACCOUNTING_UNBALANCED, Check.ACCOUNTING_STALE}


def _benchmark_row(release: Path) -> dict[str, Any]:
    for bench in ("dr", "cr", "dq", "cq"):
        rows = rows_of(release, f"benchmarks/{bench}.parquet")
        if rows:
            return rows[0]
    raise AssertionError("no benchmark rows")


@pytest.mark.parametrize("field", ["query_id", "root_id", "candidate_ids"])
def test_a_benchmark_tweet_id_in_pairs_is_benchmark_leak_id(broken: Path, field: str) -> None:
    bench = _benchmark_row(broken)
    leaked = bench[field][-1] if field == "candidate_ids" else bench[field]

    def leak(rows: list[dict[str, Any]]) -> None:
        rows[0]["positive_id"] = leaked

    edit_qt(broken, leak)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.BENCHMARK_LEAK_ID]
    assert [f.path for f in report.failures] == [ALL, QT]
    assert f"positive_id={leaked}" in report.failures[1].detail


@pytest.mark.parametrize("field", ["query", "candidates"])
def test_a_benchmark_text_in_pairs_is_benchmark_leak_text(broken: Path, field: str) -> None:
    bench = _benchmark_row(broken)
    leaked = bench[field][-1] if field == "candidates" else bench[field]

    def leak(rows: list[dict[str, Any]]) -> None:
        rows[0]["anchor"] = leaked

    edit_qt(broken, leak)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.BENCHMARK_LEAK_TEXT]
    assert [(f.path, f.count) for f in report.failures] == [(ALL, 1), (QT, 1)]


# ---------------------------------------------------------------------------------------
# Accounting and the manifest


def test_edited_counts_are_accounting_unbalanced(broken: Path) -> None:
    manifest = read_manifest(broken)
    manifest["counts"]["tweets"] += 1
    write_manifest(broken, manifest)
    report = validate_release(broken)
    unbalanced = [f for f in report.failures if f.check == Check.ACCOUNTING_UNBALANCED]
    assert [f.detail.split(":")[0] for f in unbalanced] == [
        "lines_read == tweets + delete_notices + other_messages + dead_letter_lines"
    ]
    # the stored identity (and flag) no longer match what the counts say
    assert set(report.failed_checks()) == {Check.ACCOUNTING_UNBALANCED, Check.ACCOUNTING_STALE}


def test_edited_dataset_rows_are_accounting_unbalanced(broken: Path) -> None:
    manifest = read_manifest(broken)
    manifest["datasets"]["qt"]["rows"] += 1
    manifest["datasets"]["qt"]["dropped"]["pair_parent_missing"] -= 1  # candidates still close
    write_manifest(broken, manifest)
    details = [
        f.detail for f in validate_release(broken).failures if f.check == "accounting_unbalanced"
    ]
    assert any(d.startswith("qt: rows == rows in pairs/qt/") for d in details)
    assert any(d.startswith("all: rows == qt + rp + coqt + corp rows") for d in details)


def test_a_stored_flag_is_never_trusted(broken: Path) -> None:
    manifest = read_manifest(broken)
    manifest["accounting"]["identities"][0]["holds"] = False
    manifest["accounting"]["balanced"] = False
    write_manifest(broken, manifest)
    assert failed(broken) == {Check.ACCOUNTING_STALE}


def test_missing_counts_are_reported_not_raised(broken: Path) -> None:
    manifest = read_manifest(broken)
    del manifest["counts"]["members_read"]
    write_manifest(broken, manifest)
    report = validate_release(broken)
    assert Check.ACCOUNTING_UNBALANCED in report.failed_checks()
    assert any("members_read" in f.detail for f in report.failures)


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.pop("files"),
        lambda m: m.update(manifest_version=2),
        lambda m: m["files"][0].update(sha256="not-a-sha"),
        lambda m: m["counts"].update(lines_read=-1),
    ],
)
def test_an_invalid_manifest_is_manifest_invalid(
    broken: Path, edit: Callable[[dict[str, Any]], Any]
) -> None:
    manifest = read_manifest(broken)
    edit(manifest)
    write_manifest(broken, manifest)
    assert failed(broken) == {Check.MANIFEST_INVALID}


def test_validate_json_raises_on_what_the_release_check_reports(broken: Path) -> None:
    manifest = read_manifest(broken)
    validate_json(MANIFEST, manifest)
    manifest["files"][0].update(sha256="not-a-sha")
    with pytest.raises(jsonschema.ValidationError, match="not-a-sha"):
        validate_json(MANIFEST, manifest)


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.schema.json")), ids=lambda p: p.name)
def test_each_json_schema_is_valid_under_its_meta_schema(path: Path) -> None:
    # validate_json does not check the schema itself on every call; this does.
    schema = json.loads(path.read_text())
    jsonschema.validators.validator_for(schema).check_schema(schema)


def test_a_manifest_that_is_not_json_is_manifest_invalid(broken: Path) -> None:
    (broken / "manifest.json").write_text('{"manifest_version": 1,')
    assert failed(broken) == {Check.MANIFEST_INVALID}


def test_no_manifest_is_manifest_missing(tmp_path: Path) -> None:
    assert failed(tmp_path) == {Check.MANIFEST_MISSING}


def test_paths_outside_the_release_are_manifest_inconsistent(broken: Path) -> None:
    manifest = read_manifest(broken)
    manifest["files"].append({**manifest["files"][0], "path": "../outside.parquet"})
    manifest["datasets"]["qt"]["files"].append("pairs/qt/part-nowhere.parquet")
    write_manifest(broken, manifest)
    report = validate_release(broken)
    assert report.failed_checks() == [Check.MANIFEST_INCONSISTENT]
    assert {f.path for f in report.failures} == {
        "../outside.parquet",
        "pairs/qt/part-nowhere.parquet",
    }


def test_small_batches_give_the_same_report(broken: Path) -> None:
    def spoil(rows: list[dict[str, Any]]) -> None:
        rows[-1]["anchor"], rows[-1]["positive"] = rows[0]["anchor"], rows[0]["positive"]
        rows[2]["positive"] = ""

    edit_qt(broken, spoil)
    whole = validate_release(broken)
    batched = validate_release(broken, batch_rows=2)
    assert whole.failures == batched.failures
    assert set(whole.failed_checks()) == {Check.DUPLICATE_PAIR, Check.EMPTY_TEXT}
