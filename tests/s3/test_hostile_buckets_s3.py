"""Hostile buckets and failing stores on a real S3 server (versitygw): every reader refuses
a crafted pointer without touching anything outside its cache; wrong credentials, a missing
bucket, an endpoint down and a server gone mid-upload end in one line; prune never breaks
the current release, whatever the builders' clocks; ``card s3://`` commits a new version.

(versitygw resolves ``..`` and ``//`` in the keys it is given, so keys that leave their
version are tested on an in-memory bucket: ``tests/hostile/test_buckets.py``.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from corpusforge.release import objectstore, reading
from corpusforge.release.bucketnames import Location
from corpusforge.release.publish import RELEASE_ENTRIES, ReleaseError
from corpusforge.release.s3 import S3Bucket
from tests.buckets import small_archive

from .conftest import REPO, SECRET, S3Server, cli, free_port, start_versitygw, stop, twitter

pytestmark = pytest.mark.s3

HERE = Path(__file__).parent
V = "20260101T000000Z-0123abcd"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_archive(tmp_path_factory.mktemp("in"), tweets=2_000)


def readers(uri: str, tmp_path: Path) -> list[tuple[str, ...]]:
    """Every command that reads a release from a bucket."""
    return [
        ("validate", uri),
        ("stats", uri),
        ("card", uri),
        ("train", "--data", f"{uri}/pairs/all", "--out", str(tmp_path / "model")),
        ("eval", "ranking", "--benchmarks", f"{uri}/benchmarks", "--model", "lexical"),
        ("versions", uri),
        ("versions", uri, "--local"),
        ("versions", uri, "--keep", "1"),
    ]


def run_all(commands: list[tuple[str, ...]], env: dict[str, str] | None = None) -> list[Any]:
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda args: cli(*args, env=env, timeout=120), commands))


def one_error_line(done: Any) -> str:
    """The one ``error:`` line a failed command printed on stderr, its last (a build's
    warnings may come before it), and no traceback."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return str(errors[0])


def pointer_doc(version: str) -> dict[str, Any]:
    return {
        "format": reading.POINTER_FORMAT,
        "version": version,
        "prefix": f"versions/{version}/",
        "manifest": f"versions/{version}/manifest.json",
        "manifest_sha256": "0" * 64,
        "history": [version],
    }


def current(s3: S3Server, uri: str) -> dict[str, Any]:
    return reading.current_version(uri, client=s3.client())


@pytest.mark.parametrize("aim", ["relative", "absolute"])
def test_every_reader_refuses_a_crafted_pointer_and_touches_nothing(
    s3: S3Server, tmp_path: Path, aim: str
) -> None:
    """A pointer whose ``version`` names a folder outside the reader's cache (``../../x``
    from the cache's release folder, or an absolute path): every reader stops in one line
    naming the pointer, exit 2, and the folder survives as it was."""
    uri = s3.bucket(f"crafted-{aim}") + "/rel"
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("mine")
    version = "../../sentinel" if aim == "relative" else str(sentinel)
    doc = pointer_doc(version)
    s3.client().put_object(
        Bucket=f"crafted-{aim}", Key="rel/_current.json", Body=json.dumps(doc).encode()
    )
    for args, done in zip(readers(uri, tmp_path), run_all(readers(uri, tmp_path)), strict=True):
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        line = one_error_line(done)
        assert f"{uri}/_current.json: version {version!r} is not a version id" in line, line
    assert sorted(p.name for p in sentinel.iterdir()) == ["keep.txt"]
    assert (sentinel / "keep.txt").read_text() == "mine"
    assert not (tmp_path / "model").exists()


def test_a_build_refuses_a_crafted_pointer(s3: S3Server, archive: Path, tmp_path: Path) -> None:
    uri = s3.bucket("crafted-build") + "/rel"
    doc = pointer_doc(V)
    doc["prefix"] = "versions/../../other/"
    s3.client().put_object(
        Bucket="crafted-build", Key="rel/_current.json", Body=json.dumps(doc).encode()
    )
    done = cli(*twitter(archive, uri))
    assert done.returncode == 2, done.stderr
    assert "prefix 'versions/../../other/' is not" in one_error_line(done)
    assert [p.name for p in (s3.root / "crafted-build" / "rel").iterdir()] == ["_current.json"]


# -- a store that fails ------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["wrong secret", "missing bucket", "endpoint down"])
def test_a_failing_store_is_one_line_for_every_reader_and_a_build(
    s3: S3Server, archive: Path, tmp_path: Path, failure: str
) -> None:
    uri = s3.bucket(f"fail-{failure.split()[0]}") + "/rel"
    env = dict(os.environ)
    expected = {
        "wrong secret": "access denied (check the credentials)",
        "missing bucket": "no bucket named no-such-bucket",
        "endpoint down": "refused the connection",
    }[failure]
    if failure == "wrong secret":
        env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-4f1c"
    elif failure == "missing bucket":
        uri = "s3://no-such-bucket/rel"
    else:
        env["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        env["AWS_MAX_ATTEMPTS"] = "2"  # boto3's retries, fewer: the test waits less
    commands = [*readers(uri, tmp_path), tuple(twitter(archive, uri))]
    for args, done in zip(commands, run_all(commands, env), strict=True):
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        line = one_error_line(done)
        assert expected in line and "s3://" in line, (args, line)
        assert SECRET not in line and "not-the-secret" not in line
    assert not any((s3.root / f"fail-{failure.split()[0]}").iterdir())


def test_a_server_gone_mid_upload_is_one_line_and_the_previous_version_stays(
    archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The S3 server is killed while a build uploads its version: the build ends in one
    line (exit 2) and removes its draft; with the server back, the previous version is
    current and valid, and the half-uploaded version is never committed."""
    root, port = tmp_path / "buckets", free_port()
    (root / "gone").mkdir(parents=True)
    server = S3Server(f"http://127.0.0.1:{port}", root, tmp_path / "versitygw.log")
    for key, value in server.env.items():
        monkeypatch.setenv(key, value)
    drafts = tmp_path / "drafts"
    monkeypatch.setenv("CORPUSFORGE_DRAFTS", str(drafts))
    monkeypatch.setenv("CORPUSFORGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    uri = "s3://gone/rel"
    proc = start_versitygw(root, port, server.log)
    try:
        assert cli(*twitter(archive, uri, seed=1)).returncode == 0
        first = current(server, uri)["version"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
        done = subprocess.run(
            [sys.executable, str(HERE / "server_gone.py"), str(proc.pid), "5", "--",
             *twitter(archive, uri, seed=2)],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        line = one_error_line(done)
        assert line.startswith("error: s3://gone/rel/versions/"), line
        assert "refused the connection" in line or "closed the connection" in line, line
        assert not list(drafts.rglob("*.draft")), "the draft was left behind"
    finally:
        stop(proc)
    proc = start_versitygw(root, port, server.log)
    try:
        assert current(server, uri)["version"] == first
        assert cli("validate", uri).returncode == 0
    finally:
        stop(proc)


# -- prune and the commit, whatever the clocks -----------------------------------------


def _draft_of(store: objectstore.ObjectStore, local: Path) -> None:
    """Make the store's draft the release built at ``local`` (what a build would write)."""
    draft = Path(store.begin(rebuilt=RELEASE_ENTRIES))
    shutil.copytree(local, draft, dirs_exist_ok=True)


@pytest.mark.parametrize("grace_hours", [24.0, 0.0])
def test_prune_spares_a_version_uploading_from_a_machine_behind_and_the_commit_checks(
    s3: S3Server,
    archive: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    grace_hours: float,
) -> None:
    """A build whose id sorts before the current version (its machine's clock is behind)
    has uploaded its files when ``versions --keep 1`` runs. With the grace period, prune
    leaves it (the server wrote it a moment ago), the build commits, the release is valid.
    Without one, prune deletes it and the commit sees the files missing: nothing committed,
    one line, the current version still valid."""
    bucket = f"behind-{int(grace_hours)}"
    uri = s3.bucket(bucket) + "/rel"
    local = tmp_path / "local"
    assert cli(*twitter(archive, str(local), seed=2)).returncode == 0
    assert cli(*twitter(archive, uri, seed=1)).returncode == 0
    now = current(s3, uri)["version"]
    behind = "20000101T000000Z-0000beef"
    monkeypatch.setattr(objectstore, "new_version_id", lambda: behind)
    upload = S3Bucket.upload

    def then_prune(self: S3Bucket, path: str, key: str) -> None:
        upload(self, path, key)
        if key.endswith(f"{behind}/manifest.json"):  # all uploaded, the pointer not yet
            objectstore.prune(uri, 1, client=s3.client(), grace_hours=grace_hours)

    monkeypatch.setattr(S3Bucket, "upload", then_prune)
    store = objectstore.ObjectStore(uri, client=s3.client())
    with store.locked():
        _draft_of(store, local)
        if grace_hours:
            store.commit()
        else:
            with pytest.raises(ReleaseError) as refused:
                store.commit()
            message = str(refused.value)
            assert message.startswith(f"{uri}/versions/{behind}: "), message
            assert message.endswith("; nothing committed"), message
    listed = [v["version"] for v in reading.versions(uri, client=s3.client())]
    if grace_hours:
        assert current(s3, uri)["version"] == behind
        assert listed == [behind, now]
    else:
        assert current(s3, uri)["version"] == now
        assert listed == [now]
    assert cli("validate", uri).returncode == 0


def faketime() -> str:
    """Debian's ``faketime``; the test skips without it unless ``CORPUSFORGE_REQUIRE_FAKETIME=1``
    (``.ci/run``, which installs it) makes that a failure."""
    found = shutil.which("faketime")
    if found:
        return found
    message = "needs faketime (apt-get install faketime)"
    if os.environ.get("CORPUSFORGE_REQUIRE_FAKETIME") == "1":
        pytest.fail(message)
    pytest.skip(message)


def test_the_skewed_clock_race_of_issue_36(s3: S3Server, archive: Path, tmp_path: Path) -> None:
    """The race of the issue, as it happened: a build from a machine 10 minutes behind is
    uploading while ``versions --keep 1`` runs; its version is not deleted, it commits,
    and ``validate`` passes."""
    skewed = faketime()
    uri = s3.bucket("skewed") + "/rel"
    assert cli(*twitter(archive, uri, seed=1)).returncode == 0
    first = current(s3, uri)["version"]
    time.sleep(1)  # the ids' seconds: the behind build's id must sort first anyway
    paused, go = tmp_path / "paused", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    build = subprocess.Popen(
        [skewed, "-f", "-10m", sys.executable, str(HERE / "paused_upload.py"), "4",
         str(paused), str(go), "--", *twitter(archive, uri, seed=2)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not paused.exists():
            assert build.poll() is None, build.communicate()
            assert time.monotonic() < deadline, "the build never reached its uploads"
            time.sleep(0.1)
        in_flight = [v["version"] for v in reading.versions(uri, client=s3.client())]
        behind = next(v for v in in_flight if v != first)
        assert behind < first  # its id sorts before the current one
        pruned = cli("versions", uri, "--keep", "1", "--json")
        assert pruned.returncode == 0, pruned.stderr
        assert json.loads(pruned.stdout)["deleted"] == []
    finally:
        go.touch()
        _, err = build.communicate(timeout=240)
    assert build.returncode == 0, err
    assert current(s3, uri)["version"] == behind
    assert cli("validate", uri).returncode == 0


# -- point 7 -----------------------------------------------------------------------------


def test_a_pointer_naming_a_missing_version_names_the_pointer(s3: S3Server, archive: Path) -> None:
    uri = s3.bucket("missing") + "/rel"
    assert cli(*twitter(archive, uri)).returncode == 0
    version = current(s3, uri)["version"]
    S3Bucket(Location.parse(uri), s3.client()).delete_prefix(f"rel/versions/{version}")
    done = cli("validate", uri)
    assert done.returncode == 2
    line = one_error_line(done)
    assert line == (
        f"error: {uri}/_current.json: names version {version}, which is not in the bucket "
        f"(no {uri}/versions/{version}/manifest.json)"
    )


def test_a_build_racing_on_the_same_machine_names_the_release(s3: S3Server, archive: Path) -> None:
    uri = s3.bucket("samehost") + "/rel"
    store = objectstore.ObjectStore(uri, client=s3.client())
    with store.locked():
        done = cli(*twitter(archive, uri))
    assert done.returncode == 2
    line = one_error_line(done)
    assert line.startswith(f"error: --out {uri}: another build is writing it (pid {os.getpid()}")


def test_card_of_a_bucket_release_commits_a_new_version_with_the_card(
    s3: S3Server, archive: Path
) -> None:
    """``card s3://…`` writes the card into the bucket as a new committed version (the same
    manifest, the other files copied on the server); the reader's cache is not changed."""
    uri = s3.bucket("card") + "/team/rel"
    assert cli(*twitter(archive, uri)).returncode == 0
    before = current(s3, uri)
    cached = Path(reading.local_copy(uri, client=s3.client()))
    cached_files = {p: p.read_bytes() for p in cached.rglob("*") if p.is_file()}
    done = cli("card", uri)
    assert done.returncode == 0, done.stderr
    after = current(s3, uri)
    assert after["version"] != before["version"]
    assert after["previous"] == before["version"]
    assert done.stdout.strip() == f"{uri}/versions/{after['version']}/README.md"
    assert after["manifest_sha256"] == before["manifest_sha256"]
    assert after["files"] == before["files"]
    assert {p: p.read_bytes() for p in cached.rglob("*") if p.is_file()} == cached_files
    copy = Path(reading.local_copy(uri, client=s3.client()))
    assert without_card(copy) == without_card(cached)  # the manifest, pairs, … unchanged
    assert (copy / "README.md").is_file() and any((copy / "card").iterdir())
    assert before["version"] in [v["version"] for v in reading.versions(uri, s3.client())]
    assert cli("validate", uri).returncode == 0


def without_card(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file()
        and p.name != ".complete"
        and p.relative_to(folder).parts[0] not in ("README.md", "card")
    }
