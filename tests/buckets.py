"""What the bucket tests share whichever server they run against (versitygw for ``s3``,
fake-gcs-server for ``gcs``): finding the built server, starting and stopping it, pointing
this process at it, and running corpusforge in a child process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO


def tool_binary(name: str, script: str, require: str) -> Path:
    """``build/tools/NAME``; skips the test when it is not built, or fails it when the
    environment variable ``require`` is ``1`` (as ``.ci/run`` sets).

    Args:
        name: the file under ``build/tools``.
        script: the script under ``scripts/`` that builds it.
        require: the environment variable that turns the skip into a failure.
    """
    path = REPO / "build" / "tools" / name
    if path.is_file() and os.access(path, os.X_OK):
        return path
    message = f"{name} not built: run bash scripts/{script} (needs Go and the module proxy)"
    if os.environ.get(require) == "1":
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    argv: list[str], log: Path, ready: Callable[[], object]
) -> subprocess.Popen[bytes]:
    """``argv`` in the background, its output in ``log``, once ``ready()`` stops raising
    ``OSError`` (30 s at most).

    Args:
        argv: the server's command line.
        log: the file its output is appended to.
        ready: a probe that raises ``OSError`` until the server answers.
    """
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            ready()
            return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                tail = log.read_text()[-2000:]
                raise RuntimeError(f"{Path(argv[0]).name} did not start: {tail}") from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def point_at(env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sets a server's ``env`` in this process, with fresh local draft and cache folders.

    Args:
        env: the server's environment variables.
        tmp_path: the test's folder, where the drafts and the cache go.
        monkeypatch: undoes it all after the test.
    """
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CORPUSFORGE_DRAFTS", str(tmp_path / "drafts"))
    monkeypatch.setenv("CORPUSFORGE_CACHE", str(tmp_path / "cache"))


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path = REPO, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``corpusforge ARGS`` in a child process with ``env`` (default: this process's), in
    ``cwd``."""
    base = dict(os.environ if env is None else env)
    base["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO)])
    return subprocess.run(
        [sys.executable, "-c", "from corpusforge.cli import main; main()", *args],
        cwd=cwd,
        env=base,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def twitter(archive: Path, out: str, seed: int = 0) -> list[str]:
    """The command line of a small Twitter build of ``archive`` into ``out``."""
    return [
        "twitter", "build", str(archive), "--out", out,
        "--benchmark-queries", "5", "--seed", str(seed), "--quiet",
    ]  # fmt: skip


def killed_build(archive: Path, uri: str, k: int, count: Path) -> subprocess.CompletedProcess[str]:
    """The Twitter build of ``archive`` into ``uri``, killed at its ``k``-th object write
    (``tests/s3/killed_upload.py``; ``k`` 0 lets it finish and counts its writes in
    ``count``)."""
    return subprocess.run(
        [sys.executable, str(REPO / "tests" / "s3" / "killed_upload.py"), str(k), str(count),
         "--", *twitter(archive, uri, 2)],
        cwd=REPO, env=_child_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def racing_builds(archive: Path, uri: str, tmp_path: Path) -> list[tuple[int, str]]:
    """Two builds of ``archive`` into ``uri`` (seeds 1 and 2) from two draft folders, each
    held before its pointer write until both are there (``tests/s3/racing_build.py``).

    Returns:
        Each build's exit code and standard error, seed 1's first. Asserts that both raced.
    """
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(REPO / "tests" / "s3" / "racing_build.py"),
                str(barrier),
                str(seed),
                "2",
                "--",
                *twitter(archive, uri, seed),
            ],
            cwd=REPO,
            env={**_child_env(), "CORPUSFORGE_DRAFTS": str(tmp_path / f"machine{seed}")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert sorted(p.name for p in barrier.iterdir()) == ["1", "2"], results  # both raced
    return results


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}


def small_archive(folder: Path, tweets: int = 3_000) -> Path:
    """A synthetic day archive in ``folder`` (seed 3), as the publish tests build.

    Args:
        folder: where it goes, as ``twitter-stream-2021-01-01.zip``.
        tweets: its tweet lines.
    """
    from corpusforge.synth.twitter import write_synthetic_archive

    path = folder / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(path, tweets=tweets, layout="zip-2020", seed=3)
    return path


def files(folder: Path) -> dict[str, bytes]:
    """Each file of the release in ``folder`` (its path inside it) and its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".complete"
    }
