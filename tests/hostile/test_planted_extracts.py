"""Planted and altered extracts: a rebuild reuses an extract only as it was written.

A Twitter build reuses ``tweets/<archive>-<key>/`` of the current release and of a killed
build's draft. Each test here plants tweets of the right schema in one (an altered shard, an
extra shard, a forged record) and rebuilds: the extract is read again from the archive, one
warning says which and why, and no published pair or benchmark holds the planted text.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpusforge.builds import twitter as twitter_build
from corpusforge.builds.twitter import build
from corpusforge.builds.twitter_extract import (
    InputArchive,
    extract_is_complete,
    extract_problem,
    seal_extract,
)
from corpusforge.config.twitter import TwitterConfig
from corpusforge.inspect.validate import validate_release
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.release.io import file_digest
from corpusforge.schemas import TWEET, arrow_schema
from corpusforge.synth.twitter import write_synthetic_archive
from tests.s3.conftest import S3Server, s3, s3_server  # noqa: F401 (the server fixtures)

PLANTED = "planted by someone else"
BENCH = BenchmarkConfig(queries=5)
SHARD = "tweets/part-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("in") / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(path, tweets=3_000, layout="zip-2020", seed=5)
    return str(path)


@pytest.fixture(scope="module")
def built(archive: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release of ``archive``, built once; tests change a copy."""
    out = tmp_path_factory.mktemp("built") / "release"
    _build(archive, out)
    return out


@pytest.fixture
def release(built: Path, tmp_path: Path) -> Path:
    out = tmp_path / "release"
    shutil.copytree(built, out)
    return out


def _build(archive: str, out: Path | str) -> dict[str, Any]:
    return build(TwitterConfig(inputs=(archive,), out=str(out), benchmarks=BENCH))


def _extract(root: Path) -> Path:
    (folder,) = (root / "tweets").iterdir()
    return folder


def _plant(shard: Path, to: Path | None = None) -> None:
    """Rewrite ``shard`` (to ``to``, else in place) with every tweet's text planted, with
    the tweet schema: the conversations stay, so planted text would land in their pairs."""
    table = pq.read_table(shard, schema=arrow_schema(TWEET))
    texts = pa.array([f"{PLANTED}: {t}" for t in table["text"].to_pylist()], pa.string())
    table = table.set_column(table.schema.get_field_index("text"), "text", texts)
    pq.write_table(table.cast(arrow_schema(TWEET)), to or shard)


def _reseal(folder: Path, **forged: Any) -> None:
    """Forge a consistent record of ``folder``: ``_files.json`` with the sizes and sha256
    of the files now there, and a ``_SUCCESS`` sealing it (with ``forged`` fields)."""
    files = json.loads((folder / "_files.json").read_text())
    for info in files:
        if (folder.parents[1] / info["path"]).is_file():
            size, sha = file_digest(str(folder.parents[1] / info["path"]))
            info.update(bytes=size, sha256=sha)
    (folder / "_files.json").write_text(json.dumps(files))
    was = json.loads((folder / "_SUCCESS").read_text())
    seal_extract(
        str(folder), InputArchive("", was["name"], was["bytes"], was["sha256"], folder.name)
    )
    success = json.loads((folder / "_SUCCESS").read_text())
    (folder / "_SUCCESS").write_text(json.dumps({**success, **forged}))


def _published_text(release: Path) -> str:
    """Every value of every published pair and benchmark file, as one lower-case string."""
    files = sorted((release / "pairs").rglob("*.parquet")) + sorted(
        (release / "benchmarks").glob("*.parquet")
    )
    assert files
    return json.dumps([pq.read_table(f).to_pylist() for f in files], default=str).lower()


def _assert_clean(release: Path, manifest: dict[str, Any]) -> None:
    """Nothing planted published; the manifest lists exactly the files there, as they are."""
    assert PLANTED not in _published_text(release)
    on_disk = {
        p.relative_to(release).as_posix()
        for p in (release / "tweets").rglob("*.parquet")
        if p.is_file()
    } | {p.relative_to(release).as_posix() for p in (release / "dead_letter").rglob("*.parquet")}
    listed = {f["path"] for f in manifest["files"] if f["path"].startswith(("tweets/", "dead"))}
    assert on_disk == listed
    report = validate_release(release)
    assert report.ok, report.to_json()["failures"][:5]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def _warned(caplog: pytest.LogCaptureFixture, folder: Path, what: str) -> None:
    said = [w for w in _warnings(caplog) if w.startswith(f"tweets/{folder.name}: ")]
    assert len(said) == 1, _warnings(caplog)
    assert what in said[0] and said[0].endswith("; extracting the archive again"), said[0]


def test_planted_text_reaches_the_pairs_when_an_extract_is_trusted_blindly(
    archive: str, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other tests' control: a planted shard that is reused is published."""
    _plant(_extract(release) / SHARD)
    _reseal(_extract(release))
    monkeypatch.setattr(
        twitter_build,
        "reusable_extract",
        lambda root, a, published: extract_is_complete(f"{root}/tweets/{a.extract}"),
    )
    _build(archive, release)
    assert PLANTED in _published_text(release)


def test_an_altered_shard_of_the_release_is_extracted_again(
    archive: str, release: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _extract(release)
    _plant(folder / SHARD)
    manifest = _build(archive, release)
    _warned(caplog, folder, f"{SHARD} changed since it was written (sha256 ")
    _assert_clean(release, manifest)


def test_a_shard_altered_with_its_record_is_caught_by_the_manifest(
    archive: str, release: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``_files.json`` and ``_SUCCESS`` forged to match: the release's manifest disagrees."""
    folder = _extract(release)
    _plant(folder / SHARD)
    _reseal(folder)
    manifest = _build(archive, release)
    _warned(caplog, folder, "_files.json differs from the current release's manifest")
    _assert_clean(release, manifest)


@pytest.mark.parametrize(
    "planted",
    ["tweets/part-00001-of-00002.parquet", "deletes/x.parquet", "dead_letter"],
)
def test_a_planted_extra_shard_is_extracted_again(
    archive: str, release: Path, caplog: pytest.LogCaptureFixture, planted: str
) -> None:
    folder = _extract(release)
    if planted == "dead_letter":
        target = release / "dead_letter" / folder.name / "part-00009-of-00010.parquet"
        shown = f"dead_letter/{folder.name}/part-00009-of-00010.parquet"
    else:
        target, shown = folder / planted, planted
    target.parent.mkdir(parents=True, exist_ok=True)
    _plant(folder / SHARD, target)
    manifest = _build(archive, release)
    _warned(caplog, folder, f"{shown} is not in its _files.json")
    assert not target.exists()
    _assert_clean(release, manifest)


def _killed_draft(archive: str, tmp_path: Path) -> tuple[Path, Path]:
    """A release folder not yet published and the draft a killed build left for it,
    holding a finished extract (as a build killed in its pair stage leaves it)."""
    out = tmp_path / "release"
    draft = tmp_path / ".release.draft"
    _build(archive, tmp_path / "elsewhere")
    shutil.copytree(tmp_path / "elsewhere", draft)
    (draft / "manifest.json").unlink()
    return out, draft


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ("shard", f"{SHARD} changed since it was written (sha256 "),
        ("shard and list", "_files.json changed since it was written"),
        ("nothing", ""),
    ],
)
def test_a_killed_builds_extract_is_reused_only_as_it_was_written(
    archive: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, change: str, what: str
) -> None:
    out, draft = _killed_draft(archive, tmp_path)
    folder = _extract(draft)
    if change != "nothing":
        _plant(folder / SHARD)
    if change == "shard and list":  # _files.json rewritten to match, _SUCCESS left
        files = json.loads((folder / "_files.json").read_text())
        for info in files:
            size, sha = file_digest(str(draft / info["path"]))
            info.update(bytes=size, sha256=sha)
        (folder / "_files.json").write_text(json.dumps(files))
    with caplog.at_level(logging.INFO):
        manifest = _build(archive, out)
    if what:
        _warned(caplog, folder, what)
    else:
        assert [w for w in _warnings(caplog) if w.startswith("tweets/")] == []
        assert "extracting 0 archives, reusing 1" in caplog.messages
    _assert_clean(out, manifest)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sha256", "0" * 64),
        ("extract", "tweets/twitter-stream-2021-01-01.zip-000000000000"),
        ("bytes", 1),
    ],
)
def test_a_forged_record_naming_another_archive_is_refused(
    archive: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, field: str, value: object
) -> None:
    """Planted shards under a record that matches them, but names another archive (or
    another extract key) than the input's."""
    out, draft = _killed_draft(archive, tmp_path)
    folder = _extract(draft)
    _plant(folder / SHARD)
    _reseal(folder, **{field: value})
    manifest = _build(archive, out)
    _warned(caplog, folder, f"_SUCCESS names another archive ({field} {value}")
    _assert_clean(out, manifest)


@pytest.mark.s3
def test_an_altered_extract_in_the_local_copy_of_a_bucket_release_is_extracted_again(
    s3: S3Server,  # noqa: F811 (the fixture imported above)
    archive: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An ``s3://`` build carries the extracts of the local copy of the last version it
    published (under the drafts folder); that copy's manifest vouches for them."""
    from corpusforge.release import objectstore, reading

    uri = f"{s3.bucket('planted')}/release"
    _build(archive, uri)
    (copy,) = Path(objectstore.drafts_root()).glob("*/last")
    folder = _extract(copy)
    _plant(folder / SHARD)
    _build(archive, uri)
    _warned(caplog, folder, f"{SHARD} changed since it was written (sha256 ")
    published = Path(reading.local_copy(uri))
    _assert_clean(published, json.loads((published / "manifest.json").read_text()))


@pytest.mark.parametrize(
    "path",
    [
        "tweets/{x}/tweets/../../../manifest.json",
        "dead_letter/{x}/./../../manifest.json",
        "/elsewhere/manifest.json",
    ],
)
def test_a_record_listing_a_file_outside_its_extract_is_refused(release: Path, path: str) -> None:
    """A sealed ``_files.json`` that points the pair stage at a file outside the extract
    (here the release's own manifest, whose sha256 it records truly)."""
    folder = _extract(release)
    files = json.loads((folder / "_files.json").read_text())
    files.append({"path": path.format(x=folder.name), "rows": 1, "bytes": 0, "sha256": ""})
    (folder / "_files.json").write_text(json.dumps(files))
    _reseal(folder)
    (entry,) = json.loads((release / "manifest.json").read_text())["inputs"]
    archive = InputArchive("", entry["name"], entry["bytes"], entry["sha256"], folder.name)
    problem = extract_problem(str(release), archive)
    assert problem is not None and "is outside the extract" in problem, problem


@pytest.mark.s3
def test_a_shard_planted_in_a_bucket_version_is_not_carried_into_the_next(
    s3: S3Server,  # noqa: F811 (the fixture imported above)
    archive: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A draft in the bucket (a distributed runner's) copies the current version's extracts
    on the server; an extra shard planted among them is found before anything is read."""
    from corpusforge.release import reading

    monkeypatch.setenv("CORPUSFORGE_S3_DRAFT", "bucket")
    uri = f"{s3.bucket('plantedbucket')}/release"
    _build(archive, uri)
    prefix = "release/" + reading.current_version(uri, client=s3.client())["prefix"]
    client = s3.client()
    (key,) = [
        o["Key"]
        for o in client.list_objects_v2(Bucket="plantedbucket", Prefix=prefix)["Contents"]
        if o["Key"].endswith(SHARD)
    ]
    shard = tmp_path / "shard.parquet"
    shard.write_bytes(client.get_object(Bucket="plantedbucket", Key=key)["Body"].read())
    _plant(shard)
    planted = key.replace("part-00000-of-00001", "part-00001-of-00002")
    client.put_object(Bucket="plantedbucket", Key=planted, Body=shard.read_bytes())
    _build(archive, uri)
    extract = planted.split("/")[-3]
    said = [w for w in _warnings(caplog) if w.startswith(f"tweets/{extract}: ")]
    assert said == [
        f"tweets/{extract}: tweets/part-00001-of-00002.parquet is not in its _files.json; "
        "extracting the archive again"
    ]
    published = Path(reading.local_copy(uri))
    _assert_clean(published, json.loads((published / "manifest.json").read_text()))
