"""A real S3 server for the tests marked ``s3``: versitygw on a free localhost port, serving
a temporary folder (each sub-folder a bucket). ``scripts/versitygw.sh`` builds it; the tests
skip without it, unless ``CORPUSFORGE_REQUIRE_S3=1`` (``.ci/run``) makes that a failure."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

ACCESS = "corpusforge-test-access"
SECRET = "corpusforge-test-secret-0b5e1f"  # a test server's, never a real one


@dataclass(frozen=True)
class S3Server:
    """A running versitygw: its endpoint, the folder behind its buckets, its credentials."""

    endpoint: str
    root: Path
    log: Path

    @property
    def env(self) -> dict[str, str]:
        """The standard environment variables boto3 (and so corpusforge) reads."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    @property
    def storage_options(self) -> dict[str, str]:
        """The same, as polars' ``storage_options``."""
        return {
            "aws_endpoint_url": self.endpoint,
            "aws_access_key_id": ACCESS,
            "aws_secret_access_key": SECRET,
            "aws_region": "us-east-1",
            "aws_allow_http": "true",
        }

    def bucket(self, name: str) -> str:
        """A new empty bucket: ``s3://NAME``."""
        (self.root / name).mkdir()
        return f"s3://{name}"

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS,
            aws_secret_access_key=SECRET,
            region_name="us-east-1",
        )


def versitygw_binary() -> Path:
    path = REPO / "build" / "tools" / "versitygw"
    if path.is_file() and os.access(path, os.X_OK):
        return path
    message = "versitygw not built: run bash scripts/versitygw.sh (needs Go and the module proxy)"
    if os.environ.get("CORPUSFORGE_REQUIRE_S3") == "1":
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_versitygw(root: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """versitygw serving ``root`` on ``127.0.0.1:port``, once it accepts connections."""
    binary = versitygw_binary()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [str(binary), "--port", f"127.0.0.1:{port}", "--access", ACCESS, "--secret", SECRET,
             "posix", str(root)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                tail = log.read_text()[-2000:]
                raise RuntimeError(f"versitygw did not start: {tail}") from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    root = tmp_path_factory.mktemp("s3") / "buckets"
    root.mkdir()
    log = root.parent / "versitygw.log"
    port = free_port()
    proc = start_versitygw(root, port, log)
    try:
        yield S3Server(f"http://127.0.0.1:{port}", root, log)
    finally:
        stop(proc)


@pytest.fixture
def s3(s3_server: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The server, with its settings in this process's environment, and fresh local draft
    and cache folders."""
    for key, value in s3_server.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CORPUSFORGE_DRAFTS", str(tmp_path / "drafts"))
    monkeypatch.setenv("CORPUSFORGE_CACHE", str(tmp_path / "cache"))
    return s3_server


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> Any:
    """``corpusforge ARGS`` in a child process with ``env`` (default: this process's)."""
    base = dict(os.environ if env is None else env)
    base["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO)])
    return subprocess.run(
        [sys.executable, "-c", "from corpusforge.cli import main; main()", *args],
        cwd=REPO,
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
