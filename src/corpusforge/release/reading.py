"""A path a command reads a release from -> a local folder: as given, or the current version
of an ``s3://`` or ``gs://`` release; and the readers' half of the store on object storage.

    corpusforge train --data s3://bucket/releases/en/pairs/all --out models/fast
    corpusforge eval ranking --benchmarks gs://bucket/releases/en/benchmarks --model lexical

A release on a bucket is read through its commit (:mod:`corpusforge.release.objectstore`
writes it): the pointer ``_current.json`` names the current version, which is downloaded
once into a local cache (a version never changes, so the copy is reused) and read from
there, so a reader never sees a version half written or one that lost a race. Nothing a
bucket says is trusted: the pointer's names and every key under a version are checked
(:mod:`corpusforge.release.bucketnames`) before anything is downloaded. Every call goes
through :class:`corpusforge.release.buckets.Bucket`, the same for both stores. The path may
name the release itself or a folder inside it (``pairs/all``, ``benchmarks``): the release
is the nearest folder at or above it that holds a pointer. A local path is the folder it
names, or for a release being swapped in by the two-rename fallback, the old release
(:func:`corpusforge.release.publish.current_release`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from corpusforge.release.bucketnames import (
    VERSIONS,
    Location,
    check_pointer,
    is_bucket_uri,
    is_version_id,
    relative_key,
)
from corpusforge.release.buckets import Bucket, open_bucket
from corpusforge.release.errors import ReleaseError
from corpusforge.release.private import private_folder
from corpusforge.sources.uris import is_uri

POINTER = "_current.json"
POINTER_FORMAT = "corpusforge.release-pointer.v1"


def local_release_path(spec: str) -> Path:
    """The local folder to read for ``spec``, a release or a folder inside one.

    Args:
        spec: a local path, or ``s3://BUCKET/RELEASE[/SUB/FOLDER]`` (the endpoint and
            credentials boto3's, from the standard environment: ``AWS_ENDPOINT_URL``, …) or
            ``gs://…`` (Google's application default credentials, or
            ``STORAGE_EMULATOR_HOST``).

    Raises:
        FileNotFoundError: no committed release holds ``spec``, or the local folder does not
            exist.
    """
    if is_bucket_uri(spec):
        return _current_version_path(spec)
    if is_uri(spec):
        raise FileNotFoundError(f"{spec}: only local paths, s3:// and gs:// releases can be read")
    from corpusforge.release.publish import current_release

    path = Path(current_release(spec))
    if not path.is_dir():
        raise FileNotFoundError(f"{spec}: no such folder")
    return path


def _current_version_path(uri: str) -> Path:
    where = Location.parse(uri.rstrip("/"))
    client = open_bucket(where).client
    parts = [p for p in where.prefix.split("/") if p]
    for cut in range(len(parts), -1, -1):
        root = Location(where.scheme, where.bucket, "/".join(parts[:cut]))
        if open_bucket(root, client).get(root.key(POINTER)) is None:
            continue
        inside = Path(local_copy(root.uri(), client), *parts[cut:])
        if not inside.is_dir():
            raise FileNotFoundError(
                f"{uri}: the current version of {root.uri()} has no folder {'/'.join(parts[cut:])}"
            )
        return inside
    raise FileNotFoundError(f"{uri}: no release at or above it (no _current.json)")


def read_pointer(bucket: Bucket) -> tuple[dict[str, Any], str] | None:
    """The release's pointer document and its token (what a conditional write of the next
    pointer expects: an ETag, a generation); None for a release with no version.

    Raises:
        ReleaseError: the pointer is not one this project writes (:func:`check_pointer`).
    """
    got = bucket.get(bucket.where.key(POINTER))
    if got is None:
        return None
    data, token = got
    try:
        doc = json.loads(data)
    except ValueError:
        raise ReleaseError(f"{bucket.where.uri(POINTER)}: not a release pointer") from None
    if not isinstance(doc, dict) or doc.get("format") != POINTER_FORMAT:
        raise ReleaseError(f"{bucket.where.uri(POINTER)}: not a release pointer")
    check_pointer(doc, bucket.where.uri(POINTER))
    return doc, token


def local_name(uri: str) -> str:
    """A folder name for ``uri`` on this machine: readable, and unique by its hash."""
    where = Location.parse(uri)
    tail = (where.prefix.rsplit("/", 1)[-1] or where.bucket)[:40]
    return f"{tail}-{hashlib.sha256(uri.rstrip('/').encode()).hexdigest()[:12]}"


def current_version(uri: str, client: Any = None) -> dict[str, Any]:
    """The pointer document of the release ``uri``.

    Args:
        uri: the release (``s3://…``, ``gs://…``).
        client: the store's client (default: made from the standard environment).

    Raises:
        FileNotFoundError: ``uri`` holds no committed release.
    """
    where = Location.parse(uri.rstrip("/"))
    found = read_pointer(open_bucket(where, client))
    if found is None:
        raise FileNotFoundError(f"{uri}: no release there (no {POINTER})")
    return found[0]


def current_uri(uri: str, client: Any = None) -> str:
    """``s3://…/versions/<current>``: the folder of the release's current version."""
    where = Location.parse(uri.rstrip("/"))
    return where.uri(current_version(uri, client)["prefix"])


def cache_root() -> str:
    """The readers' copies of current versions: private to this user
    (:mod:`corpusforge.release.private`; ``$CORPUSFORGE_CACHE`` moves it)."""
    return private_folder("CORPUSFORGE_CACHE", "releases")


def local_copy(uri: str, client: Any = None) -> str:
    """A local folder holding the current version of the release ``uri``, downloaded once
    (a version never changes); the manifest is checked against the pointer's sha256.

    Args:
        uri: the release (``s3://…``, ``gs://…``).
        client: the store's client (default: made from the standard environment).

    Raises:
        FileNotFoundError: ``uri`` holds no committed release.
        ReleaseError: the downloaded manifest is not the one the pointer names.
    """
    where = Location.parse(uri.rstrip("/"))
    bucket = open_bucket(where, client)
    found = read_pointer(bucket)  # its names checked (check_pointer)
    if found is None:
        raise FileNotFoundError(f"{uri}: no release there (no {POINTER})")
    pointer = found[0]
    folder = os.path.join(cache_root(), local_name(uri), pointer["version"])
    if os.path.isfile(os.path.join(folder, ".complete")):
        return folder
    prefix = where.key(pointer["prefix"])
    rels = [relative_key(where, prefix, key) for key in bucket.keys(prefix + "/")]
    if "manifest.json" not in rels:
        raise ReleaseError(
            f"{where.uri(POINTER)}: names version {pointer['version']}, which is not in the "
            f"bucket (no {where.uri(pointer['manifest'])})"
        )
    partial = folder + ".part"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        _download(bucket, prefix, rels, partial)
        with open(os.path.join(partial, "manifest.json"), "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != pointer["manifest_sha256"]:
                raise ReleaseError(
                    f"{where.uri(pointer['manifest'])}: not the manifest {where.uri(POINTER)} "
                    "names (its sha256 differs)"
                )
        with open(os.path.join(partial, ".complete"), "w") as f:
            f.write(pointer["version"] + "\n")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(partial, folder)
    return folder


def _download(bucket: Bucket, prefix: str, rels: Sequence[str], folder: str) -> None:
    """The objects ``prefix/REL`` -> ``folder/REL`` (each ``REL`` checked by
    :func:`relative_key`).

    Raises:
        ReleaseError: a file cannot be written (a key that is also a folder, a full disk).
    """
    for rel in rels:
        path = os.path.join(folder, *rel.split("/"))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            bucket.download(f"{prefix}/{rel}", path)
        except OSError as exc:
            raise ReleaseError(
                f"{bucket.where.object_uri(prefix + '/' + rel)}: cannot copy it to "
                f"{folder}: {exc.strerror or exc}"
            ) from None


def versions(uri: str, client: Any = None) -> list[dict[str, Any]]:
    """Every version folder of the release, oldest first: ``version``, ``committed`` (it was
    the current version once, as far as the pointer remembers) and ``current``. A folder
    under ``versions/`` whose name is not a version id is not a version: it is left out.

    Args:
        uri: the release (``s3://…``, ``gs://…``).
        client: the store's client (default: made from the standard environment).
    """
    where = Location.parse(uri.rstrip("/"))
    bucket = open_bucket(where, client)
    found = read_pointer(bucket)
    current = found[0]["version"] if found else None
    committed = set(found[0].get("history", [])) if found else set()
    return [
        {"version": name, "committed": name in committed, "current": name == current}
        for name in bucket.folders(where.key(VERSIONS))
        if is_version_id(name)
    ]
