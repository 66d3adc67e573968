"""A release URI -> the small bucket interface the commit, prune, carry-over and readers are
written on once, whatever the store: :class:`Bucket`, which ``s3://``
(:class:`corpusforge.release.s3.S3Bucket`, boto3) and ``gs://``
(:class:`corpusforge.release.gcs.GcsBucket`, google-cloud-storage) implement.

    bucket = open_bucket(Location.parse("gs://bucket/releases/en"))
    got = bucket.get(bucket.where.key("_current.json"))    # (bytes, token) or None
    bucket.put(key, data, expect=token)                     # ConditionFailed if it moved

The one call the commit protocol leans on is the conditional :meth:`Bucket.put`: written
only if the object is absent (``expect=None``) or still the one read (``expect`` the token
:meth:`Bucket.get` gave: S3's ETag, sent as ``If-None-Match: *`` / ``If-Match``; GCS's
generation, sent as ``ifGenerationMatch`` 0 / the generation). Everything else is
unconditional: a version's objects are written once under a fresh id, and copies and
deletes never touch a committed version's pointer (deploy/object-storage.md).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any, Protocol

from corpusforge.release.bucketnames import Location
from corpusforge.release.errors import ReleaseError
from corpusforge.release.gcs import GcsBucket, gcs_client
from corpusforge.release.s3 import S3Bucket, s3_client


class Bucket(Protocol):
    """The calls the store needs, on one release's bucket. Every failure a user can meet (the
    endpoint, the credentials, no such bucket) is a
    :class:`~corpusforge.release.errors.BucketError` naming the object.

    Attributes:
        where: the release (bucket and prefix); keys are whole keys, the prefix included.
        client: the backend's client (boto3's, google-cloud-storage's).
    """

    where: Location
    client: Any

    def get(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and its token (what :meth:`put`'s ``expect`` takes); None
        when it does not exist."""
        ...

    def put(self, key: str, data: bytes, expect: str | None) -> str:
        """Write ``data`` to ``key`` if it is absent (``expect`` None) or still the object
        whose token is ``expect``; its new token.

        Raises:
            ConditionFailed: the object is not what ``expect`` says.
        """
        ...

    def upload(self, path: str, key: str) -> None:
        """The local file ``path`` -> ``key``."""
        ...

    def download(self, key: str, path: str) -> None:
        """``key`` -> the local file ``path``."""
        ...

    def copy(self, source: str, key: str) -> None:
        """Copy the object ``source`` to ``key`` on the server."""
        ...

    def objects(self, prefix: str) -> Iterator[tuple[str, datetime.datetime]]:
        """Every object whose key starts with ``prefix``: its key and when the server last
        wrote it (the server's clock)."""
        ...

    def keys(self, prefix: str) -> Iterator[str]:
        """The keys of :meth:`objects`."""
        ...

    def folders(self, prefix: str) -> list[str]:
        """The names directly under ``prefix/``, sorted."""
        ...

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object under ``prefix/``; how many."""
        ...

    def now(self) -> datetime.datetime:
        """The server's clock (the ``Date`` of one of its answers)."""
        ...


def open_bucket(
    where: Location, client: Any = None, settings: dict[str, Any] | None = None
) -> Bucket:
    """The :class:`Bucket` of ``where``, by its scheme.

    Args:
        where: the release.
        client: the backend's client (default: made from the standard environment:
            boto3's for ``s3://``, google-cloud-storage's for ``gs://``).
        settings: boto3 client arguments from Beam's ``--s3_*`` flags (``s3://`` only).

    Raises:
        ReleaseError: another scheme.
    """
    if where.scheme == "s3":
        return S3Bucket(where, client or s3_client(settings))
    if where.scheme == "gs":
        return GcsBucket(where, client or gcs_client())
    raise ReleaseError(f"{where.uri()}: releases are versioned on s3:// and gs:// only")
