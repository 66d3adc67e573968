"""Local paths and URIs -> seekable byte streams, for every reader and the input digests.

A local path is opened with ``open``; a ``gs://``, ``s3://`` or ``http(s)://`` URI through
smart_open, imported only then (its cloud clients take half a second to import).
"""

from __future__ import annotations

from typing import IO


def is_uri(path: str) -> bool:
    """Whether ``path`` names a URI (``scheme://…``) rather than a local path."""
    return "://" in path


def open_bytes(uri: str) -> IO[bytes]:
    """Open a local path or a URI for seekable reading of its raw bytes."""
    if not is_uri(uri):
        return open(uri, "rb")
    import smart_open

    stream: IO[bytes] = smart_open.open(uri, "rb", compression="disable")
    return stream
