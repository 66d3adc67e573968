"""A GCS emulator for the tests marked ``gcs``: fake-gcs-server on a free localhost port,
keeping its objects in a temporary folder. ``scripts/fake-gcs-server.sh`` builds it; the tests
skip without it, unless ``CORPUSFORGE_REQUIRE_GCS=1`` (``.ci/run``) makes that a failure.

``google-cloud-storage`` (and so corpusforge, Beam's ``gcsio`` and ``gcsfs``) talk to it when
``STORAGE_EMULATOR_HOST`` names it; no credentials are needed there.
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.buckets import cli, free_port, point_at, start_server, stop, tool_binary, twitter

__all__ = ["PROJECT", "GcsServer", "cli", "twitter"]

PROJECT = "corpusforge-test"


@dataclass(frozen=True)
class GcsServer:
    """A running fake-gcs-server: its endpoint, the folder behind it, its log."""

    endpoint: str
    root: Path
    log: Path

    @property
    def env(self) -> dict[str, str]:
        """The environment variables that point ``google-cloud-storage`` at the emulator."""
        return {"STORAGE_EMULATOR_HOST": self.endpoint, "GOOGLE_CLOUD_PROJECT": PROJECT}

    def bucket(self, name: str) -> str:
        """A new empty bucket, made through the JSON API: ``gs://NAME``."""
        request = urllib.request.Request(
            f"{self.endpoint}/storage/v1/b?project={PROJECT}",
            data=json.dumps({"name": name}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200, response.read()
        return f"gs://{name}"

    def client(self) -> Any:
        """A ``google.cloud.storage.Client`` talking to the emulator."""
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        return storage.Client(
            project=PROJECT,
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            client_options={"api_endpoint": self.endpoint},
        )


def start_fake_gcs_server(root: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """fake-gcs-server keeping its objects in ``root``, on ``127.0.0.1:port``, once it
    answers the JSON API."""
    binary = tool_binary("fake-gcs-server", "fake-gcs-server.sh", "CORPUSFORGE_REQUIRE_GCS")
    url = f"http://127.0.0.1:{port}/storage/v1/b?project={PROJECT}"
    return start_server(
        [str(binary), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
         "-backend", "filesystem", "-filesystem-root", str(root),
         "-public-host", f"127.0.0.1:{port}", "-log-level", "warn"],
        log,
        lambda: urllib.request.urlopen(url, timeout=1).close(),
    )  # fmt: skip


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsServer]:
    root = tmp_path_factory.mktemp("gcs") / "objects"
    root.mkdir()
    log = root.parent / "fake-gcs-server.log"
    port = free_port()
    proc = start_fake_gcs_server(root, port, log)
    try:
        yield GcsServer(f"http://127.0.0.1:{port}", root, log)
    finally:
        stop(proc)


@pytest.fixture
def gcs(gcs_server: GcsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GcsServer:
    """The server, with its settings in this process's environment, and fresh local draft
    and cache folders."""
    point_at(gcs_server.env, tmp_path, monkeypatch)
    return gcs_server
