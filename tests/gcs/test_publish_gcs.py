"""Releases on GCS (fake-gcs-server), committed exactly as on S3: immutable versions and a
pointer written last with ``ifGenerationMatch``; read back through it, whole whenever a
build is killed or two race, by every reader.

Each test runs the real command line in a child process with ``STORAGE_EMULATOR_HOST``
pointing at the emulator. The store's logic is the one ``tests/s3`` checks on versitygw
(:mod:`corpusforge.release.objectstore` over :class:`corpusforge.release.buckets.Bucket`);
these tests check that the GCS side of the bucket interface carries it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from corpusforge.release import objectstore, reading
from tests.buckets import files, killed_build, racing_builds, small_archive

from .conftest import GcsServer, cli, twitter

pytestmark = pytest.mark.gcs


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_archive(tmp_path_factory.mktemp("in"))


def pointer(gcs: GcsServer, uri: str) -> dict[str, Any]:
    return reading.current_version(uri, client=gcs.client())


def seed_of(uri: str) -> int:
    manifest = Path(reading.local_copy(uri)).joinpath("manifest.json").read_text()
    return int(json.loads(manifest)["config"]["seed"])


def test_a_gcs_release_holds_the_same_files_as_a_local_one_and_every_reader_reads_it(
    gcs: GcsServer, archive: Path, tmp_path: Path
) -> None:
    uri = gcs.bucket("same") + "/rel"
    local = tmp_path / "rel"
    assert cli(*twitter(archive, str(local))).returncode == 0
    done = cli(*twitter(archive, uri))
    assert done.returncode == 0, done.stderr[-2000:]
    current = pointer(gcs, uri)
    assert current["manifest"] == f"versions/{current['version']}/manifest.json"
    names = [blob.name for blob in gcs.client().list_blobs("same")]
    assert "rel/_current.json" in names
    assert all(n == "rel/_current.json" or n.startswith("rel/versions/") for n in names)
    published = Path(reading.local_copy(uri))
    assert files(published) == files(local)  # byte for byte: parquet, manifest and card

    checked = cli("validate", uri)
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert json.loads(cli("stats", uri, "--json").stdout) == json.loads(
        cli("stats", str(local), "--json").stdout
    )
    copy = cli("versions", uri, "--local")
    assert copy.returncode == 0, copy.stderr
    assert files(Path(copy.stdout.strip())) == files(local)
    scores = []
    for name, benchmarks in (("gcs", f"{uri}/benchmarks"), ("local", str(local / "benchmarks"))):
        ranked = cli("eval", "ranking", "--benchmarks", benchmarks, "--model", "lexical",
                     "--json", str(tmp_path / f"{name}.json"))  # fmt: skip
        assert ranked.returncode == 0, ranked.stdout[-2000:] + ranked.stderr[-2000:]
        scores.append(json.loads((tmp_path / f"{name}.json").read_text()))
    assert scores[0]["average"] == scores[1]["average"]
    assert scores[0]["average"]["benchmarks"]  # something was scored

    carded = cli("card", uri)  # a new version carrying the card, committed the same way
    assert carded.returncode == 0, carded.stdout[-2000:] + carded.stderr[-2000:]
    after = pointer(gcs, uri)
    assert after["version"] != current["version"] and after["previous"] == current["version"]
    assert cli("validate", uri).returncode == 0


def test_a_build_killed_at_any_write_leaves_the_previous_version_current(
    gcs: GcsServer, archive: Path, tmp_path: Path
) -> None:
    uri = gcs.bucket("killed") + "/rel"
    count = tmp_path / "count"

    def killed(k: int) -> subprocess.CompletedProcess[str]:
        return killed_build(archive, uri, k, count)

    full = killed(0)  # the writes of a full build: every object of the version, the pointer
    assert full.returncode == 0, full.stderr[-2000:]
    writes = int(count.read_text())
    assert cli(*twitter(archive, uri, seed=1)).returncode == 0  # seed 1 current again
    first = pointer(gcs, uri)["version"]
    for k in (1, writes - 1):  # the first upload, the manifest (the last before the pointer)
        proc = killed(k)
        assert proc.returncode == -9, proc.stderr[-2000:]
        assert pointer(gcs, uri)["version"] == first, k
        assert seed_of(uri) == 1
    proc = killed(writes)  # killed right after the pointer's write: the new version is current
    assert proc.returncode == -9
    assert pointer(gcs, uri)["version"] != first
    assert seed_of(uri) == 2
    assert cli("validate", uri).returncode == 0

    listed = cli("versions", uri, "--json")
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)["versions"]) == 5  # 3 committed, 2 killed halfway
    pruned = cli("versions", uri, "--keep", "1", "--grace-hours", "0", "--json")
    assert pruned.returncode == 0, pruned.stderr
    doc = json.loads(pruned.stdout)
    assert [v["version"] for v in doc["versions"]] == [pointer(gcs, uri)["version"]]
    assert first in doc["deleted"]
    assert cli("validate", uri).returncode == 0


def test_two_builds_racing_end_with_one_winner_and_one_clear_error(
    gcs: GcsServer, archive: Path, tmp_path: Path
) -> None:
    """Two machines (two draft folders) build the same release at once, each held before
    its pointer write until both are there (racing_build.py: both have read the same
    pointer, so the race happens whatever the load): the pointer's ``ifGenerationMatch``
    lets one commit; the other stops with exit 2 and publishes nothing."""
    uri = gcs.bucket("race") + "/rel"
    results = racing_builds(archive, uri, tmp_path)
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    errors = [line for line in loser.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "another build committed version" in errors[0], loser
    assert pointer(gcs, uri)["version"] in errors[0]  # the winner, named
    assert uri in errors[0]
    winner_seed = next(seed for seed, (code, _) in zip((1, 2), results, strict=True) if code == 0)
    assert seed_of(uri) == winner_seed
    assert cli("validate", uri).returncode == 0
    names = [v["version"] for v in reading.versions(uri, client=gcs.client())]
    assert names == [pointer(gcs, uri)["version"]]  # the loser removed its objects


def test_a_stale_pointer_write_is_refused_by_its_generation(
    gcs: GcsServer, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race without timing: a build reads the pointer, another commits, then the first
    commits: the pointer's generation has moved, so its write is refused and it publishes
    nothing."""
    uri = gcs.bucket("stale") + "/rel"
    assert cli(*twitter(archive, uri, seed=1)).returncode == 0
    store = objectstore.ObjectStore(uri, client=gcs.client())
    with store.locked():
        draft = Path(store.begin(rebuilt=("manifest.json", "pairs")))
        (draft / "manifest.json").write_text('{"files": []}')
        monkeypatch.setenv("CORPUSFORGE_DRAFTS", str(tmp_path / "machine2"))
        other = objectstore.ObjectStore(uri, client=gcs.client())  # another machine's draft
        other_draft = Path(other.begin(rebuilt=("manifest.json",)))
        (other_draft / "manifest.json").write_text('{"files": []}')
        other.commit()
        with pytest.raises(objectstore.ReleaseConflict, match=other.version):
            store.commit()
    assert pointer(gcs, uri)["version"] == other.version
    names = [v["version"] for v in reading.versions(uri, client=gcs.client())]
    assert store.version not in names


def test_readers_take_a_folder_inside_the_current_version_and_train_on_it(
    gcs: GcsServer, archive: Path, tmp_path: Path
) -> None:
    from corpusforge.release.reading import local_release_path

    uri = gcs.bucket("inside") + "/team/rel"
    assert cli(*twitter(archive, uri)).returncode == 0
    current = Path(reading.local_copy(uri))
    assert local_release_path(f"{uri}/pairs/all") == current / "pairs" / "all"
    refused = cli("train", "--data", f"{uri}-not/pairs/all", "--out", str(tmp_path / "m"))
    assert refused.returncode == 2
    assert "no release at or above" in refused.stdout + refused.stderr
    if not _has_torch():
        return
    tiny = ("--max-steps", "0", "--dim", "16", "--vocab-size", "200", "--device", "cpu")
    trained = cli("train", "--data", f"{uri}/pairs/all", "--out", str(tmp_path / "m"), *tiny)
    assert trained.returncode == 0, trained.stdout[-2000:] + trained.stderr[-2000:]


def from_bucket(args: list[str], source: str) -> list[str]:
    """A build's command line (:func:`twitter`) reading ``source`` instead of the archive."""
    return [*args[:2], source, *args[3:]]


def _has_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def test_a_beam_build_reads_gs_inputs_and_writes_its_draft_in_the_bucket(
    gcs: GcsServer, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's command, ``twitter build gs://…zip --out gs://…``, on the Beam engine
    (a remote input chooses it), first with a local draft, then with the draft in the
    bucket as a distributed runner has it (``CORPUSFORGE_S3_DRAFT=bucket``): Beam's
    ``gcsio`` then writes, copies and deletes on the emulator in batch requests, which
    fake-gcs-server answers only when each part has a Content-ID (gcs.number_batch_parts)."""
    inputs = gcs.bucket("inputs")
    blob = gcs.client().bucket("inputs").blob(archive.name)
    blob.upload_from_filename(str(archive))
    local = tmp_path / "rel"
    assert cli(*twitter(archive, str(local))).returncode == 0
    expected = files(local)

    uri = gcs.bucket("beam") + "/rel"
    done = cli(*from_bucket(twitter(archive, uri), f"{inputs}/{archive.name}"))
    assert done.returncode == 0, done.stderr[-3000:]
    published = files(Path(reading.local_copy(uri)))
    manifest, local_manifest = (json.loads(f.pop("manifest.json")) for f in (published, expected))
    assert published == expected  # byte for byte: the pairs, the benchmarks, the card
    assert manifest["counts"] == local_manifest["counts"]

    monkeypatch.setenv("CORPUSFORGE_S3_DRAFT", "bucket")
    uri = gcs.bucket("beam-in-bucket") + "/rel"
    done = cli(*from_bucket(twitter(archive, uri), f"{inputs}/{archive.name}"))
    assert done.returncode == 0, done.stderr[-3000:]
    published = files(Path(reading.local_copy(uri)))
    published.pop("manifest.json")
    assert published == {
        k: v for k, v in expected.items() if k != "README.md" and not k.startswith("card/")
    }
    assert cli("validate", uri).returncode == 0
