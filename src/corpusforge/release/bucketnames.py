"""What a bucket says -> names this machine may follow: the pointer's fields and the keys
under a version, checked before anything is downloaded, copied or deleted.

A bucket is not trusted: anyone who can write it (or a server that lies) could name a
``version`` ``../../home/me`` or list a key ``versions/<id>/../../x``, and a reader joins
those names into local paths. A pointer is followed only when its names are exactly those
a build writes, and a key is read only when it stays under its version's prefix; anything
else is one line naming the object (:class:`~corpusforge.release.errors.ReleaseError`,
exit 2). The checks are pure, on strings, whatever the store
(:mod:`corpusforge.release.objectstore` calls them over its ``Bucket``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from corpusforge.release.errors import ReleaseError

SCHEMES = ("s3", "gs")
"""The URI schemes a release is versioned on (:mod:`corpusforge.release.buckets`)."""
VERSIONS = "versions"
"""The folder of a release's versions: ``OUT/versions/<version>/``."""
VERSION_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8}")
"""The form of a version id (``YYYYmmddTHHMMSSZ-<8 hex>``,
:func:`corpusforge.release.objectstore.new_version_id`): a bucket's names are checked against it."""


@dataclass(frozen=True)
class Location:
    """A release on object storage, ``s3://bucket/prefix`` or ``gs://bucket/prefix``, split;
    ``prefix`` has no slash at either end."""

    scheme: str
    bucket: str
    prefix: str

    @classmethod
    def parse(cls, uri: str) -> Location:
        scheme, sep, rest = uri.partition("://")
        bucket, _, prefix = rest.partition("/")
        if not sep or not bucket:
            raise ReleaseError(f"--out {uri}: not a bucket URI (s3://BUCKET/PATH or gs://…)")
        return cls(scheme, bucket, prefix.strip("/"))

    def key(self, *parts: str) -> str:
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p.strip("/"))

    def uri(self, *parts: str) -> str:
        return f"{self.scheme}://{self.bucket}/{self.key(*parts)}"

    def object_uri(self, key: str) -> str:
        """The URI of the object ``key`` (a whole key, the prefix included)."""
        return f"{self.scheme}://{self.bucket}/{key}"


def check_pointer(doc: dict[str, Any], uri: str) -> None:
    """Refuse a pointer whose names are not exactly those a build writes: a ``version`` of
    the form of :data:`VERSION_ID`, ``prefix`` ``versions/<version>/``, ``manifest``
    ``versions/<version>/manifest.json``, a sha256, and a history of version ids.

    Args:
        doc: the pointer document.
        uri: the pointer object, for the message.

    Raises:
        ReleaseError: one line naming ``uri`` and the field.
    """
    version = doc.get("version")
    if not is_version_id(version):
        raise ReleaseError(f"{uri}: version {version!r} is not a version id; not followed")
    expected = {
        "prefix": f"{VERSIONS}/{version}/",
        "manifest": f"{VERSIONS}/{version}/manifest.json",
    }
    for field, value in expected.items():
        if doc.get(field) != value:
            raise ReleaseError(f"{uri}: {field} {doc.get(field)!r} is not {value!r}; not followed")
    digest = doc.get("manifest_sha256")
    if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
        raise ReleaseError(f"{uri}: manifest_sha256 is not a sha256; not followed")
    history = doc.get("history", [])
    if not isinstance(history, list) or not all(is_version_id(v) for v in history):
        raise ReleaseError(f"{uri}: history holds a name that is not a version id; not followed")


def is_version_id(name: object) -> bool:
    """Whether ``name`` has the form of :data:`VERSION_ID`."""
    return isinstance(name, str) and VERSION_ID.fullmatch(name) is not None


def relative_key(where: Location, prefix: str, key: str) -> str:
    """The path of the object ``key`` under ``prefix``, checked to stay under it.

    Args:
        where: the release, for the message.
        prefix: a version's prefix (no slash at its end).
        key: a key the listing of ``prefix/`` returned.

    Returns:
        ``a/b.parquet``: segments that are neither empty, ``.`` nor ``..`` and hold no
        backslash and no NUL (``a..b`` is a name like any other).

    Raises:
        ReleaseError: one line naming the object.
    """
    rel = key[len(prefix) + 1 :] if key.startswith(prefix + "/") else ""
    parts = rel.split("/")
    if any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts):
        raise ReleaseError(
            f"{where.object_uri(key)}: a key that leaves its version's folder; not read"
        )
    return rel


def is_bucket_uri(uri: str) -> bool:
    """Whether ``uri`` names a release on a store that versions it (``s3://``, ``gs://``)."""
    scheme, sep, _ = uri.partition("://")
    return bool(sep) and scheme in SCHEMES
