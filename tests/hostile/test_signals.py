"""SIGTERM and SIGINT in the middle of a build: one line, exit 143/130, nothing left behind.

Each test builds a release, starts a second build of it as a real ``corpusforge`` process,
waits until that build has its draft beside the release and worker processes of its own, and
signals it: SIGTERM to the build alone (``kill``), SIGINT to its whole process group (what a
terminal's Ctrl-C does, workers included). The build must end with exit 128 + the signal and
one line saying it was interrupted; the draft and the lock are gone, the previous release is
byte for byte what it was, and no worker process outlives the build.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpusforge.synth.twitter import write_synthetic_archive

MAIN = "from corpusforge.cli import main; main()"
CASES = [
    pytest.param(signal.SIGTERM, False, id="SIGTERM-to-the-build"),
    pytest.param(signal.SIGINT, True, id="SIGINT-to-the-group"),
]


def command(*args: str) -> list[str]:
    """``corpusforge ARGS`` in a fresh interpreter, through the console script's ``main``."""
    return [sys.executable, "-c", MAIN, *args]


def digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (from ``/proc``)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def interrupt(args: list[str], out: Path, signum: int, group: bool) -> tuple[int, str, list[int]]:
    """Run the build ``args``, signal it once its draft and workers exist; its exit status,
    stderr and the worker processes it had."""
    draft = out.parent / f".{out.name}.draft"
    proc = subprocess.Popen(
        command(*args),
        cwd=out.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    kids: list[int] = []
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        kids = children(proc.pid)
        if draft.exists() and kids:
            break
        time.sleep(0.01)
    assert proc.poll() is None, f"the build ended before it could be signalled: {proc.stderr}"
    assert kids, "the build started no worker process"
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    return proc.returncode, stderr, kids


def assert_left_nothing(
    out: Path, before: dict[str, str], kids: list[int], stderr: str, signum: int
) -> None:
    name = signal.Signals(signum).name
    assert stderr.splitlines() == [f"error: interrupted ({name}); nothing published"], stderr
    leftovers = sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))
    assert leftovers == []  # no draft, no lock, no old release
    assert digests(out) == before
    deadline = time.monotonic() + 10  # Python's resource tracker ends when its pipe closes
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [k for k in kids if alive(k)] == []


@pytest.fixture(scope="module")
def twitter_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A release built from a small archive, and a larger archive whose extract needs workers."""
    root = tmp_path_factory.mktemp("twitter-signals")
    small, large = root / "small.zip", root / "large.zip"
    write_synthetic_archive(small, tweets=300, seed=1, truth=False)
    write_synthetic_archive(large, tweets=8000, seed=2, truth=False)
    out = root / "release"
    built = subprocess.run(
        command("twitter", "build", str(small), "--out", str(out), "--quiet"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    return out, large


@pytest.fixture(scope="module")
def bitext_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A release built from a few lines, and 40,000 lines that keep two workers busy."""
    root = tmp_path_factory.mktemp("bitext-signals")
    rng = random.Random(0)
    fr = [
        "le",
        "chat",
        "chien",
        "maison",
        "voiture",
        "jardin",
        "soleil",
        "pluie",
        "ville",
        "rue",
        "livre",
        "table",
        "porte",
    ]
    en = [
        "the",
        "cat",
        "dog",
        "house",
        "car",
        "garden",
        "sun",
        "rain",
        "city",
        "street",
        "book",
        "table",
        "door",
    ]
    rows = []
    for i in range(40_000):
        words = [rng.randrange(len(fr)) for _ in range(rng.randint(5, 12))]
        french = " ".join(fr[w] for w in words)
        english = " ".join(en[w] for w in words)
        rows.append(f"{french} numéro {i}.\t{english} number {i}.\n")
    large = root / "large.fr-en.tsv"
    large.write_text("".join(rows), encoding="utf-8")
    small = root / "small.fr-en.tsv"
    small.write_text("".join(rows[:50]), encoding="utf-8")
    out = root / "release"
    built = subprocess.run(
        command("bitext", "build", str(small), "--out", str(out), "--quiet"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    return out, large


@pytest.mark.parametrize(("signum", "group"), CASES)
def test_a_signalled_twitter_build_leaves_the_release_as_it_was(
    twitter_release: tuple[Path, Path], signum: int, group: bool
) -> None:
    out, large = twitter_release
    before = digests(out)
    args = ["twitter", "build", str(large), "--out", str(out), "--workers", "2", "--quiet"]
    status, stderr, kids = interrupt(args, out, signum, group)
    assert status == 128 + signum, stderr
    assert_left_nothing(out, before, kids, stderr, signum)


@pytest.mark.parametrize(("signum", "group"), CASES)
def test_a_signalled_bitext_build_leaves_the_release_as_it_was(
    bitext_release: tuple[Path, Path], signum: int, group: bool
) -> None:
    out, large = bitext_release
    before = digests(out)
    args = ["bitext", "build", str(large), "--out", str(out), "--workers", "2", "--quiet"]
    status, stderr, kids = interrupt(args, out, signum, group)
    assert status == 128 + signum, stderr
    assert_left_nothing(out, before, kids, stderr, signum)


COMMITTED_THEN_INTERRUPTED = """
import os, signal
from corpusforge.release import publish

commit = publish.LocalFolder.commit


def commit_then_interrupt(self):
    commit(self)
    os.kill(os.getpid(), signal.SIGINT)  # after the commit, before the build returns


publish.LocalFolder.commit = commit_then_interrupt
from corpusforge.cli import main

main()
"""
"""``corpusforge ARGS`` that sends itself SIGINT the instant its release is committed."""


def test_a_signal_after_the_commit_says_the_release_was_published(
    bitext_release: tuple[Path, Path], tmp_path: Path
) -> None:
    small = bitext_release[0].parent / "small.fr-en.tsv"
    out = tmp_path / "release"
    args = ["bitext", "build", str(small), "--out", str(out), "--quiet"]
    done = subprocess.run(
        [sys.executable, "-c", COMMITTED_THEN_INTERRUPTED, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 128 + signal.SIGINT, done.stderr
    assert done.stderr.splitlines() == [f"error: interrupted (SIGINT) after publishing {out}"]
    assert (out / "manifest.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]  # no draft, no lock
