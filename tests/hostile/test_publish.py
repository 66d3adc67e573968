"""Publishing: a release changes in one step, moves freely, and has one builder at a time.

Each test builds its inputs, runs the real command line (in a child process where it must be
killed) and checks the exit status, the message and that the release validates.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from corpusforge.inspect.validate import validate_release
from corpusforge.release import publish
from corpusforge.release.publish import LocalFolder, current_release
from tests.buckets import cli, small_archive

from .test_reruns import REPO

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
KILLED_AT = Path(__file__).with_name("killed_at.py")


def killed_cli(k: int, count: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``corpusforge ARGS`` killed after its ``k``-th step (``killed_at.py``; 0: not killed)."""
    return subprocess.run(
        [sys.executable, str(KILLED_AT), str(k), str(count), "--", *args],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=240,
    )


def manifest(release: Path) -> dict:
    return json.loads((release / "manifest.json").read_text())


def assert_valid(release: Path) -> None:
    report = validate_release(release)
    assert report.ok, report.to_json()["failures"][:5]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_archive(tmp_path_factory.mktemp("in"))


def twitter_args(archive: Path, out: Path, seed: int) -> list[str]:
    return [
        "twitter",
        "build",
        str(archive),
        "--out",
        str(out),
        "--benchmark-queries",
        "5",
        "--seed",
        str(seed),
        "--quiet",
    ]


def kill_points(n: int) -> list[int]:
    """Steps to kill a run of ``n`` steps at: three spread out, and each of the last six
    (the manifest, the card, the swap, the old release's removal)."""
    return sorted({*(n * i // 4 for i in range(1, 4)), *range(max(1, n - 5), n + 1)})


# ---------------------------------------------------------------------------------------
# 4. A rebuild killed at any moment leaves the old release or the new one


@pytest.mark.slow
@pytest.mark.parametrize("source", ["twitter", "paranmt"])
def test_rebuild_killed_at_any_step_leaves_the_old_or_the_new_release(
    source: str, archive: Path, tmp_path: Path
) -> None:
    if source == "twitter":
        old_args = twitter_args(archive, tmp_path / "old" / "release", seed=0)
        new_args = twitter_args(archive, tmp_path / "k" / "release", seed=1)
        version = ("seed",)
    else:
        from tests.bitext.test_build_paranmt import write_paranmt

        uri = write_paranmt(tmp_path / "in" / "para-nmt-sample.txt.gz")
        old_args = ["paranmt", "build", uri, "--out", str(tmp_path / "old" / "release")]
        new_args = ["paranmt", "build", uri, "--out", str(tmp_path / "k" / "release")]
        new_args += ["--min-score", "0.6"]
        version = ("filters", "min_score")
    old = tmp_path / "old" / "release"
    assert cli(*old_args, "--quiet").returncode == 0
    old_version = _get(manifest(old)["config"], version)

    count = tmp_path / "steps"
    out = tmp_path / "k" / "release"
    shutil.copytree(old, out)
    full = killed_cli(0, count, *new_args)
    assert full.returncode == 0, full.stderr[-2000:]
    new_version = _get(manifest(out)["config"], version)
    assert new_version != old_version
    steps = int(count.read_text())
    assert steps >= 6

    for k in kill_points(steps):
        shutil.rmtree(tmp_path / "k")
        shutil.copytree(old, out)
        proc = killed_cli(k, count, *new_args)
        assert proc.returncode in (-signal.SIGKILL, 0), proc.stderr[-2000:]
        seen = Path(current_release(str(out)))
        assert _get(manifest(seen)["config"], version) in (old_version, new_version), k
        assert_valid(seen)
        again = cli(*new_args)
        assert again.returncode == 0, (k, again.stderr[-2000:])
        assert _get(manifest(out)["config"], version) == new_version
        assert_valid(out)
        assert sorted(p.name for p in out.parent.iterdir()) == ["release"], k


def _get(doc: dict, keys: tuple[str, ...]) -> object:
    for key in keys:
        doc = doc[key]
    return doc


def test_the_two_rename_commit_is_recovered_from(tmp_path: Path, monkeypatch) -> None:
    """Without a swap call, the commit is two renames; killed between them, readers and the
    next build find the old release whole at ``.NAME.old``."""
    out = tmp_path / "release"
    out.mkdir()
    (out / "manifest.json").write_text('{"v": "old"}')
    store = LocalFolder(str(out))
    monkeypatch.setattr(publish, "exchange", lambda a, b: False)
    with store.locked():
        draft = Path(store.begin(rebuilt=("manifest.json",)))
        (draft / "manifest.json").write_text('{"v": "new"}')
        os.rename(out, store.old)  # the first rename, then a kill
    assert json.loads(Path(current_release(str(out)), "manifest.json").read_text()) == {"v": "old"}
    with store.locked():
        draft = Path(store.begin(rebuilt=("manifest.json",)))
        assert json.loads((out / "manifest.json").read_text()) == {"v": "old"}
        (draft / "manifest.json").write_text('{"v": "new"}')
        store.commit()
    assert json.loads((out / "manifest.json").read_text()) == {"v": "new"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


def test_exchange_swaps_two_folders(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "x").write_text("b")
    if not publish.exchange(str(a), str(b)):
        pytest.skip("no swap call on this system: the two-rename commit is used")
    assert ((a / "x").read_text(), (b / "x").read_text()) == ("b", "a")


# ---------------------------------------------------------------------------------------
# 5. A release holds no machine path: moved or copied, it validates and can be rebuilt into


@pytest.mark.slow  # two builds
def test_moved_release_validates_and_rebuilds_from_another_directory(
    archive: Path, tmp_path: Path
) -> None:
    first = tmp_path / "a" / "release"
    built = cli(*twitter_args(archive, first, seed=0))
    assert built.returncode == 0, built.stderr[-2000:]
    text = "\n".join(
        p.read_text() for p in first.rglob("*") if p.suffix == ".json" or p.name == "README.md"
    )
    for machine_path in (str(tmp_path), str(archive.parent), str(REPO)):
        assert machine_path not in text
    files_before = manifest(first)["files"]
    moved = tmp_path / "b" / "moved"
    moved.parent.mkdir()
    shutil.move(first, moved)
    assert_valid(moved)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    # relative paths, from a working directory the first build never saw
    rel_archive = os.path.relpath(archive, elsewhere)
    args = twitter_args(Path(rel_archive), Path("../b/moved"), seed=0)
    again = cli(*[a for a in args if a != "--quiet"], cwd=elsewhere)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "reusing 1" in again.stderr + again.stdout
    assert_valid(moved)
    assert manifest(moved)["files"] == files_before


# ---------------------------------------------------------------------------------------
# 7. One build at a time per release; a killed build's lock is taken over


@pytest.mark.slow  # a build held mid-way while a second one starts
def test_a_second_build_of_a_release_stops_at_once_naming_the_holder(
    archive: Path, tmp_path: Path
) -> None:
    out = tmp_path / "release"
    assert cli(*twitter_args(archive, out, seed=0)).returncode == 0
    before = manifest(out)
    with LocalFolder(str(out)).locked():  # another build holds the release
        second = cli(*twitter_args(archive, out, seed=1))
        beam = subprocess.run(
            [sys.executable, "-m", "pipelines.twitter_pairs", f"--input={archive}", f"--out={out}"],
            cwd=REPO,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=240,
        )
    for proc in (second, beam):
        assert proc.returncode == 2
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith(
            f"error: --out {out}: another build is writing it (pid {os.getpid()}"
        )
    assert manifest(out) == before
    assert_valid(out)
    third = cli(*twitter_args(archive, out, seed=1))
    assert third.returncode == 0, third.stderr[-2000:]
    assert manifest(out)["config"]["seed"] == 1
    assert_valid(out)


@pytest.mark.slow  # a build killed, then a second one
def test_the_lock_of_a_killed_build_is_taken_over(archive: Path, tmp_path: Path) -> None:
    out = tmp_path / "release"
    lock = tmp_path / ".release.lock"
    lock.write_text(json.dumps({"pid": 2**22 + 7, "host": "gone", "started": "2026-01-01"}))
    proc = cli(*twitter_args(archive, out, seed=0))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "taking over the lock" in proc.stderr and f"pid {2**22 + 7}" in proc.stderr
    assert_valid(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


@pytest.mark.slow  # two builds
def test_validate_reads_the_old_release_in_the_gap_of_a_two_rename_commit(
    archive: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from corpusforge.cli import app

    out = tmp_path / "release"
    assert cli(*twitter_args(archive, out, seed=0)).returncode == 0
    os.rename(out, tmp_path / ".release.old")  # killed between the two renames
    result = CliRunner().invoke(app, ["validate", str(out)])
    assert result.exit_code == 0 and "valid" in result.output, result.output
    again = cli(*twitter_args(archive, out, seed=1))
    assert again.returncode == 0, again.stderr[-2000:]
    assert manifest(out)["config"]["seed"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]
