"""A path a command reads a release from -> a local folder: as given, or the current version
of an ``s3://`` release.

    corpusforge train --data s3://bucket/releases/en/pairs/all --out models/fast
    corpusforge eval ranking --benchmarks s3://bucket/releases/en/benchmarks --model lexical

A release on ``s3://`` is read through its commit (:mod:`corpusforge.release.objectstore`):
the pointer ``_current.json`` names the current version, which is downloaded once into a
local cache (a version never changes) and read from there, so a reader never sees a
version half written or one that lost a race. The path may name the release itself or a
folder inside it (``pairs/all``, ``benchmarks``): the release is the nearest folder at or
above it that holds a pointer. A local path is the folder it names, or for a release being
swapped in by the two-rename fallback, the old release
(:func:`corpusforge.release.publish.current_release`).
"""

from __future__ import annotations

from pathlib import Path

from corpusforge.sources.uris import is_uri


def local_release_path(spec: str) -> Path:
    """The local folder to read for ``spec``, a release or a folder inside one.

    Args:
        spec: a local path, or ``s3://BUCKET/RELEASE[/SUB/FOLDER]``; the endpoint and
            credentials are boto3's, from the standard environment (``AWS_ENDPOINT_URL``,
            ``AWS_ACCESS_KEY_ID``, …).

    Raises:
        FileNotFoundError: no committed release holds ``spec``, or the local folder does not
            exist.
    """
    if spec.startswith("s3://"):
        return _current_version_path(spec)
    if is_uri(spec):
        raise FileNotFoundError(f"{spec}: only local paths and s3:// releases can be read")
    from corpusforge.release.publish import current_release

    path = Path(current_release(spec))
    if not path.is_dir():
        raise FileNotFoundError(f"{spec}: no such folder")
    return path


def _current_version_path(uri: str) -> Path:
    from corpusforge.release.objectstore import POINTER, Bucket, Location, local_copy, s3_client

    where = Location.parse(uri.rstrip("/"))
    client = s3_client()
    parts = [p for p in where.prefix.split("/") if p]
    for cut in range(len(parts), -1, -1):
        root = Location(where.scheme, where.bucket, "/".join(parts[:cut]))
        if Bucket(root, client).get(root.key(POINTER)) is None:
            continue
        inside = Path(local_copy(root.uri(), client), *parts[cut:])
        if not inside.is_dir():
            raise FileNotFoundError(
                f"{uri}: the current version of {root.uri()} has no folder {'/'.join(parts[cut:])}"
            )
        return inside
    raise FileNotFoundError(f"{uri}: no release at or above it (no _current.json)")
