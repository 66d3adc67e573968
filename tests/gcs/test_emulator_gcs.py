"""What the pinned fake-gcs-server honours of GCS's preconditions, which the commit protocol
leans on: ``ifGenerationMatch`` on uploads (simple and resumable) is honoured; on copy,
rewrite, delete and metadata patch it is ignored (v1.56.1), so the store never relies on
those there."""

from __future__ import annotations

import pytest

from .conftest import GcsServer

pytestmark = pytest.mark.gcs


def test_uploads_honour_if_generation_match(gcs: GcsServer) -> None:
    from google.api_core.exceptions import PreconditionFailed

    bucket = gcs.client().bucket(gcs.bucket("preconditions").removeprefix("gs://"))
    blob = bucket.blob("pointer.json")
    blob.upload_from_string(b"one", if_generation_match=0)  # create only if absent
    with pytest.raises(PreconditionFailed):
        bucket.blob("pointer.json").upload_from_string(b"two", if_generation_match=0)
    with pytest.raises(PreconditionFailed):
        bucket.blob("pointer.json").upload_from_string(
            b"two", if_generation_match=blob.generation + 1
        )
    bucket.blob("pointer.json").upload_from_string(b"two", if_generation_match=blob.generation)
    assert bucket.blob("pointer.json").download_as_bytes() == b"two"
    big = b"x" * (9 << 20)  # past the client's resumable threshold
    bucket.blob("big").upload_from_string(big, if_generation_match=0)
    with pytest.raises(PreconditionFailed):
        bucket.blob("big").upload_from_string(big, if_generation_match=0)
