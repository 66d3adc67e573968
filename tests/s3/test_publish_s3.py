"""Releases on a real S3 server (versitygw): published as immutable versions committed by a
pointer written last, read back through it, whole whenever a build is killed or two race.

Each test runs the real command line in a child process with the standard AWS environment
variables (or Beam's ``--s3_*`` flags) pointing at the server.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest

from corpusforge.config.runner import Runner
from corpusforge.release import objectstore, reading
from tests.buckets import files, killed_build, racing_builds, small_archive

from .conftest import ACCESS, SECRET, S3Server, cli, twitter

pytestmark = pytest.mark.s3


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_archive(tmp_path_factory.mktemp("in"))


def pointer(s3: S3Server, uri: str) -> dict:
    return reading.current_version(uri, client=s3.client())


def seed_of(s3: S3Server, uri: str) -> int:
    return json.loads(Path(reading.local_copy(uri)).joinpath("manifest.json").read_text())[
        "config"
    ]["seed"]


def test_a_bucket_release_holds_the_same_files_as_a_local_one(
    s3: S3Server, archive: Path, tmp_path: Path
) -> None:
    uri = s3.bucket("same") + "/rel"
    local = tmp_path / "rel"
    assert cli(*twitter(archive, str(local))).returncode == 0
    done = cli(*twitter(archive, uri))
    assert done.returncode == 0, done.stderr[-2000:]
    current = pointer(s3, uri)
    assert current["manifest"] == f"versions/{current['version']}/manifest.json"
    published = Path(reading.local_copy(uri))
    assert files(published) == files(local)  # byte for byte, manifest and card included

    checked = cli("validate", uri)
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert cli("stats", uri, "--json").returncode == 0
    copy = cli("versions", uri, "--local")  # the current version as a local folder
    assert copy.returncode == 0, copy.stderr
    assert files(Path(copy.stdout.strip())) == files(local)
    ranked = cli("eval", "ranking", "--benchmarks", f"{uri}/benchmarks", "--model", "lexical",
                 "--json", str(tmp_path / "s3.json"))  # fmt: skip
    assert ranked.returncode == 0, ranked.stdout[-2000:]
    assert cli("eval", "ranking", "--benchmarks", str(local / "benchmarks"), "--model", "lexical",
               "--json", str(tmp_path / "local.json")).returncode == 0  # fmt: skip
    scores = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("s3", "local")]
    assert scores[0]["average"] == scores[1]["average"]
    assert scores[0]["average"]["benchmarks"]  # something was scored
    # polars reads the current version straight from the bucket
    pairs = pl.read_parquet(
        f"{uri}/{current['prefix']}pairs/all/*.parquet", storage_options=s3.storage_options
    )
    assert pairs.height == pl.read_parquet(local / "pairs" / "all" / "*.parquet").height > 0


def test_a_build_killed_at_any_write_leaves_the_previous_version_current(
    s3: S3Server, archive: Path, tmp_path: Path
) -> None:
    uri = s3.bucket("killed") + "/rel"
    count = tmp_path / "count"

    def killed(k: int) -> subprocess.CompletedProcess[str]:
        return killed_build(archive, uri, k, count)

    # the writes of a full build: every object of the new version, then the pointer
    full = killed(0)
    assert full.returncode == 0, full.stderr[-2000:]
    writes = int(count.read_text())
    assert cli(*twitter(archive, uri, seed=1)).returncode == 0  # seed 1 current again
    first = pointer(s3, uri)["version"]
    for k in (1, writes // 2, writes - 1):  # the first upload, one amid, the manifest (last)
        proc = killed(k)
        assert proc.returncode == -9, proc.stderr[-2000:]
        assert pointer(s3, uri)["version"] == first, k
        assert seed_of(s3, uri) == 1
        assert cli("validate", uri).returncode == 0
    proc = killed(writes)  # killed right after the pointer's PUT: the new version is current
    assert proc.returncode == -9
    assert pointer(s3, uri)["version"] != first
    assert seed_of(s3, uri) == 2
    assert cli("validate", uri).returncode == 0

    listed = cli("versions", uri, "--keep", "1", "--grace-hours", "0", "--json")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert [v["version"] for v in doc["versions"]] == [pointer(s3, uri)["version"]]
    assert first in doc["deleted"]
    assert cli("validate", uri).returncode == 0


def test_two_builds_racing_end_with_one_winner_and_one_clear_error(
    s3: S3Server, archive: Path, tmp_path: Path
) -> None:
    """Two machines (two draft folders) build the same release at once, each held before
    its pointer write until both are there (racing_build.py: both have read the same
    pointer, so the race happens whatever the load): the pointer's conditional write lets
    one commit; the other stops with exit 2 and publishes nothing."""
    uri = s3.bucket("race") + "/rel"
    results = racing_builds(archive, uri, tmp_path)
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    errors = [line for line in loser.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "another build committed version" in errors[0], loser
    assert pointer(s3, uri)["version"] in errors[0]  # the winner, named
    winner_seed = next(seed for seed, (code, _) in zip((1, 2), results, strict=True) if code == 0)
    assert seed_of(s3, uri) == winner_seed
    assert cli("validate", uri).returncode == 0
    names = [v["version"] for v in reading.versions(uri, client=s3.client())]
    assert names == [pointer(s3, uri)["version"]]  # the loser removed its objects


def test_credentials_given_as_flags_appear_in_no_release_and_no_log(
    s3: S3Server, archive: Path, tmp_path: Path
) -> None:
    uri = s3.bucket("secret") + "/rel"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("AWS_") and k not in ("CORPUSFORGE_CACHE",)
    }
    flags = [
        f"--s3_endpoint_url={s3.endpoint}",
        f"--s3_access_key_id={ACCESS}",
        f"--s3_secret_access_key={SECRET}",
        "--s3_region_name=us-east-1",
    ]
    args = twitter(archive, uri)
    args.remove("--quiet")
    done = cli(*args[:2], *flags[:2], *args[2:], *flags[2:], env=env)  # before and after
    assert done.returncode == 0, done.stderr[-2000:]
    assert SECRET not in done.stdout + done.stderr
    assert "secret/rel/_current.json" in done.stdout  # the summary names the pointer
    stored = [p for p in (s3.root / "secret").rglob("*") if p.is_file()]
    assert any(p.name == "manifest.json" for p in stored)
    for path in [*stored, *(tmp_path / "drafts").rglob("*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in s3.log.read_text(errors="replace")


@pytest.mark.parametrize(
    ("flags", "in_bucket"),
    [
        ([], False),
        (["--runner=prism"], False),
        (["--runner", "DataflowRunner"], True),
        (["--runner=PortableRunner", "--job_endpoint=localhost:8099"], True),
    ],
)
def test_a_runner_whose_workers_run_elsewhere_writes_its_draft_in_the_bucket(
    flags: list[str], in_bucket: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORPUSFORGE_S3_DRAFT", raising=False)
    store = objectstore.ObjectStore("s3://bucket/rel", Runner.parse(flags), client=object())
    assert store.in_bucket is in_bucket


def test_a_draft_in_the_bucket_as_a_distributed_runner_needs(
    s3: S3Server, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``CORPUSFORGE_S3_DRAFT=bucket`` (what a runner whose workers run elsewhere gets)
    the pipelines write the new version's prefix directly; the pointer commits it the same
    way. Such a release has no card and no reference scores (both are computed on local
    files), and a rebuild copies the extracts on the server instead of decoding again."""
    monkeypatch.setenv("CORPUSFORGE_S3_DRAFT", "bucket")
    uri = s3.bucket("indraft") + "/rel"
    local = tmp_path / "rel"
    assert cli(*twitter(archive, str(local))).returncode == 0
    done = cli(*twitter(archive, uri))
    assert done.returncode == 0, done.stderr[-2000:]
    published = files(Path(reading.local_copy(uri)))
    expected = {
        k: v for k, v in files(local).items() if k != "README.md" and not k.startswith("card/")
    }
    manifest = json.loads(published.pop("manifest.json"))
    local_manifest = json.loads(expected.pop("manifest.json"))
    assert published == expected
    assert manifest["reference_scores"] == {
        "model": "tfidf",
        "skipped": "computed only for local releases",
    }
    assert {**manifest, "reference_scores": None} == {**local_manifest, "reference_scores": None}
    assert cli("validate", uri).returncode == 0

    args = twitter(archive, uri, seed=5)
    args.remove("--quiet")
    again = cli(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "extracting 0 archives, reusing 1" in again.stderr
    assert cli("validate", uri).returncode == 0
    assert seed_of(s3, uri) == 5


def test_readers_take_a_folder_inside_the_current_version(
    s3: S3Server, archive: Path, tmp_path: Path
) -> None:
    """``train --data`` and ``eval ranking --benchmarks`` take ``s3://…/pairs/all``: the
    release is the nearest folder above holding ``_current.json``, read at its current
    version; a path under no release is one line and exit 2."""
    from corpusforge.release.reading import local_release_path

    uri = s3.bucket("inside") + "/team/rel"
    assert cli(*twitter(archive, uri)).returncode == 0
    current = Path(reading.local_copy(uri))
    assert local_release_path(f"{uri}/pairs/all") == current / "pairs" / "all"
    assert local_release_path(uri + "/") == current
    assert cli(*twitter(archive, uri, seed=1)).returncode == 0  # a new version is read next
    assert local_release_path(f"{uri}/pairs/all").parent.parent == Path(reading.local_copy(uri))
    assert local_release_path(f"{uri}/pairs/all") != current / "pairs" / "all"

    for args in (
        ("train", "--data", f"{uri}-not/pairs/all", "--out", str(tmp_path / "m")),
        ("train", "--data", f"{uri}/pairs/nothing", "--out", str(tmp_path / "m")),
        ("eval", "ranking", "--benchmarks", "s3://inside/team", "--model", "lexical"),
    ):
        refused = cli(*args)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        said = refused.stdout + refused.stderr
        assert "no release at or above" in said or "has no folder" in said, said
        assert "Traceback" not in said


def test_train_reads_pairs_from_a_bucket(s3: S3Server, archive: Path, tmp_path: Path) -> None:
    """``train --data s3://…/pairs/all`` trains on the current version (0 steps: the trainer
    opens the pairs and saves the untrained model)."""
    pytest.importorskip("torch")
    uri = s3.bucket("train") + "/rel"
    assert cli(*twitter(archive, uri)).returncode == 0
    tiny = ("--max-steps", "0", "--dim", "16", "--vocab-size", "200", "--device", "cpu")
    trained = cli("train", "--data", f"{uri}/pairs/all", "--out", str(tmp_path / "m"), *tiny)
    assert trained.returncode == 0, trained.stdout[-2000:] + trained.stderr[-2000:]
    assert any((tmp_path / "m").iterdir())
