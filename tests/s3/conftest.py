"""A real S3 server for the tests marked ``s3``: versitygw on a free localhost port, serving
a temporary folder (each sub-folder a bucket). ``scripts/versitygw.sh`` builds it; the tests
skip without it, unless ``CORPUSFORGE_REQUIRE_S3=1`` (``.ci/run``) makes that a failure."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.buckets import cli, free_port, point_at, start_server, stop, tool_binary, twitter
from tests.conftest import REPO

__all__ = ["REPO", "S3Server", "cli", "free_port", "start_versitygw", "stop", "twitter"]

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


def start_versitygw(root: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """versitygw serving ``root`` on ``127.0.0.1:port``, once it accepts connections."""
    binary = tool_binary("versitygw", "versitygw.sh", "CORPUSFORGE_REQUIRE_S3")
    return start_server(
        [str(binary), "--port", f"127.0.0.1:{port}", "--access", ACCESS, "--secret", SECRET,
         "posix", str(root)],
        log,
        lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close(),
    )  # fmt: skip


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
    point_at(s3_server.env, tmp_path, monkeypatch)
    return s3_server
