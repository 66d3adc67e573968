"""A release on object storage (``s3://``) -> immutable versions and one pointer written last.

    corpusforge twitter build day.zip --out s3://bucket/releases/en
    corpusforge release versions s3://bucket/releases/en            # list; --keep N prunes

Object stores have no rename, so the local backend's swap
(:class:`corpusforge.release.publish.LocalFolder`) cannot be atomic there. The release
``OUT`` is committed as Delta and Iceberg tables are, with no rename:

- ``OUT/versions/<version>/…``: each version is a whole release in today's layout
  (``manifest.json``, ``README.md``, ``pairs/``, …), written once and never changed.
  ``<version>`` is ``YYYYmmddTHHMMSSZ-<8 hex>``, so versions sort by the time they began;
  a version's ``manifest.json`` is uploaded after all its other files.
- ``OUT/_current.json``: the commit, a small JSON document naming the current version, its
  manifest and the manifest's sha256. It is written last, in one PUT, with an S3
  conditional write (``If-None-Match: *`` for a release's first version, else ``If-Match``
  the ETag of the pointer this build started from). A reader follows the pointer only; a
  build killed at any moment leaves the pointer, and so the previous version, untouched,
  and at worst an unreferenced partial version that ``--keep`` removes.
- Two builds racing for one release: on one machine the second stops at once on the local
  lock; on two machines both upload their versions and the pointer's condition lets exactly
  one commit: the other ends with :class:`ReleaseConflict` (exit 2), naming the version that
  won, and deletes its own objects. No lease object is needed: the store refuses the stale
  write. (versitygw, AWS S3 since 2024, MinIO and Ceph honour both conditions; GCS gives the
  same with ``ifGenerationMatch``: generation 0 for the first version, else the pointer's.)

The build itself writes into a local draft folder (under ``$CORPUSFORGE_DRAFTS``, default
the temporary folder, one per release URI), with the same lock, draft and carry-over as a
local release, so a build published to a bucket writes the same bytes as one published to
a folder, and a killed build's finished extracts are reused by the next one on the same
machine. A runner whose workers run elsewhere (Dataflow, Flink, ``PortableRunner``), or
``CORPUSFORGE_S3_DRAFT=bucket``, cannot share that folder: its draft is the new version's
prefix in the bucket, the extracts it reuses are copied there on the server, and the
commit is the same pointer. Readers (``validate``, ``stats``, ``card``) follow the pointer
and read the current version through a local copy that is downloaded once (a version never
changes).

Endpoint and credentials are boto3's (:mod:`corpusforge.release.s3`, the client and the few
S3 calls used here); none is ever written into a release or a log.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from corpusforge.release.publish import LocalFolder, ReleaseError, ReleaseLocked
from corpusforge.release.s3 import Bucket, Location, client_settings, error_code, s3_client

log = logging.getLogger(__name__)

POINTER = "_current.json"
VERSIONS = "versions"
POINTER_FORMAT = "corpusforge.release-pointer.v1"
HISTORY = 100
"""Committed versions the pointer remembers, newest first (what ``--keep`` may keep)."""


class ReleaseConflict(ReleaseLocked):
    """Another build committed a version of the release while this one ran."""


def new_version_id() -> str:
    now = datetime.datetime.now(datetime.UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def read_pointer(bucket: Bucket) -> tuple[dict[str, Any], str] | None:
    """The release's pointer document and its ETag; None for a release with no version."""
    got = bucket.get(bucket.where.key(POINTER))
    if got is None:
        return None
    data, etag = got
    try:
        doc = json.loads(data)
    except ValueError:
        raise ReleaseError(f"{bucket.where.uri(POINTER)}: not a release pointer") from None
    if not isinstance(doc, dict) or doc.get("format") != POINTER_FORMAT:
        raise ReleaseError(f"{bucket.where.uri(POINTER)}: not a release pointer")
    return doc, etag


# -- the store -------------------------------------------------------------------------


def drafts_root() -> str:
    return os.environ.get("CORPUSFORGE_DRAFTS") or os.path.join(
        tempfile.gettempdir(), "corpusforge-drafts"
    )


def _local_name(uri: str) -> str:
    """A folder name for ``uri`` on this machine: readable, and unique by its hash."""
    where = Location.parse(uri)
    tail = (where.prefix.rsplit("/", 1)[-1] or where.bucket)[:40]
    return f"{tail}-{hashlib.sha256(uri.rstrip('/').encode()).hexdigest()[:12]}"


class ObjectStore:
    """A release on ``s3://``: a local draft, uploaded as a new version, committed by the
    pointer (module docstring).

    Args:
        out: ``s3://BUCKET/PATH`` (``--out``).
        beam_args: the build's Beam flags; their ``--s3_*`` options set the client.
        client: an S3 client (default: boto3's, from the environment and ``beam_args``).
    """

    def __init__(self, out: str, beam_args: Sequence[str] = (), client: Any = None) -> None:
        self.target = out.rstrip("/")
        self.where = Location.parse(self.target)
        runner = _distributed_runner(beam_args)
        self.in_bucket = bool(runner) or os.environ.get("CORPUSFORGE_S3_DRAFT") == "bucket"
        """Whether the draft is the new version's prefix in the bucket (a runner whose
        workers run elsewhere, or ``CORPUSFORGE_S3_DRAFT=bucket``) rather than a local
        folder."""
        self._settings = client_settings(beam_args)
        self._client = client
        self._local = LocalFolder(os.path.join(drafts_root(), _local_name(self.target), "last"))
        self.draft = self._local.draft
        self.published = self._local.target
        """Where the version this build published can be read (after :meth:`commit`): a
        local copy, or the version's prefix in the bucket."""
        self._base: tuple[dict[str, Any], str] | None = None
        self.version = ""

    @property
    def bucket(self) -> Bucket:
        if self._client is None:
            self._client = s3_client(self._settings)
        return Bucket(self.where, self._client)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a pipeline's last step commits): the client is made again where needed."""
        return {**self.__dict__, "_client": None}

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """One build per release on this machine; across machines the commit's condition
        lets one of two racing builds win (:class:`ReleaseConflict` for the other)."""
        return self._local.locked()

    def begin(self, rebuilt: Collection[str]) -> str:
        try:
            self._base = read_pointer(self.bucket)
        except ReleaseError:
            raise
        except Exception as exc:
            raise ReleaseError(f"--out {self.target}: cannot read the release: {exc}") from None
        self.version = new_version_id()
        if not self.in_bucket:
            return self._local.begin(rebuilt)
        self.draft = self.published = self.where.uri(VERSIONS, self.version)
        if self._base is not None:  # what the build does not rebuild (extracts) carries over
            self._carry(self.where.key(self._base[0]["prefix"]), rebuilt)
        return self.draft

    def _carry(self, current: str, rebuilt: Collection[str]) -> None:
        """Copy the current version's objects outside ``rebuilt`` into the new version, on
        the server side."""
        bucket, to = self.bucket, self.where.key(VERSIONS, self.version)
        for key in bucket.keys(current.rstrip("/") + "/"):
            rel = key[len(current.rstrip("/")) + 1 :]
            if rel.split("/", 1)[0] not in rebuilt:
                bucket.client.copy_object(
                    Bucket=self.where.bucket,
                    Key=f"{to}/{rel}",
                    CopySource={"Bucket": self.where.bucket, "Key": key},
                )

    def commit(self) -> None:
        prefix = self.where.key(VERSIONS, self.version)
        if self.in_bucket:
            got = self.bucket.get(f"{prefix}/manifest.json")
            if got is None:
                raise ReleaseError(f"--out {self.target}: the new version has no manifest.json")
            digest = hashlib.sha256(got[0]).hexdigest()
            count = sum(1 for _ in self.bucket.keys(prefix + "/"))
        else:
            digest, count = self._upload(prefix)
        pointer = {
            "format": POINTER_FORMAT,
            "version": self.version,
            "prefix": f"{VERSIONS}/{self.version}/",
            "manifest": f"{VERSIONS}/{self.version}/manifest.json",
            "manifest_sha256": digest,
            "files": count,
            "previous": self._base[0]["version"] if self._base else None,
            "history": [self.version, *(self._base[0].get("history", []) if self._base else [])][
                :HISTORY
            ],
            "committed": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        condition = {"IfMatch": self._base[1]} if self._base else {"IfNoneMatch": "*"}
        data = json.dumps(pointer, indent=2, sort_keys=True).encode() + b"\n"
        try:
            self.bucket.put(self.where.key(POINTER), data, **condition)
        except Exception as exc:
            if error_code(exc) not in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                raise
            self.bucket.delete_prefix(prefix)
            winner = read_pointer(self.bucket)
            name = winner[0]["version"] if winner else "none"
            raise ReleaseConflict(
                f"--out {self.target}: another build committed version {name} while this "
                f"one ran; this build's version {self.version} was not published"
            ) from None
        log.info("committed %s: version %s", self.target, self.version)
        if not self.in_bucket:
            self._local.commit()  # the local copy of what was published feeds the next build

    def _upload(self, prefix: str) -> tuple[str, int]:
        """The local draft -> ``prefix``, its manifest last; the manifest's sha256 and the
        number of files."""
        manifest = os.path.join(self.draft, "manifest.json")
        if not os.path.isfile(manifest):
            raise ReleaseError(f"--out {self.target}: the draft has no manifest.json")
        files = sorted(_files_under(self.draft))
        log.info("publishing %d files to %s", len(files), self.where.uri(VERSIONS, self.version))
        for rel in files:
            if rel != "manifest.json":
                self.bucket.upload(os.path.join(self.draft, rel), f"{prefix}/{rel}")
        self.bucket.upload(manifest, f"{prefix}/manifest.json")
        with open(manifest, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest(), len(files)

    def abandon(self) -> None:
        if self.in_bucket:
            if self.version:
                self.bucket.delete_prefix(self.where.key(VERSIONS, self.version))
            return
        self._local.abandon()


LOCAL_RUNNERS = {
    "FnApiRunner",
    "DirectRunner",
    "BundleBasedDirectRunner",
    "SwitchingDirectRunner",
    "PrismRunner",
    "prism",
}
"""Runners whose workers run on this machine and so can write the local draft."""


def _distributed_runner(beam_args: Sequence[str]) -> str | None:
    """The runner named in ``beam_args`` when its workers may run elsewhere, else None."""
    runner = None
    for i, arg in enumerate(beam_args):
        if arg.startswith("--runner="):
            runner = arg.split("=", 1)[1]
        elif arg == "--runner" and i + 1 < len(beam_args):
            runner = beam_args[i + 1]
    name = (runner or "FnApiRunner").rsplit(".", 1)[-1]
    return None if name in LOCAL_RUNNERS else name


def _files_under(folder: str) -> Iterator[str]:
    for dirpath, _, names in os.walk(folder):
        for name in names:
            yield os.path.relpath(os.path.join(dirpath, name), folder).replace(os.sep, "/")


# -- readers and housekeeping ------------------------------------------------------------


def current_version(uri: str, client: Any = None) -> dict[str, Any]:
    """The pointer document of the release ``uri``.

    Raises:
        FileNotFoundError: ``uri`` holds no committed release.
    """
    where = Location.parse(uri.rstrip("/"))
    found = read_pointer(Bucket(where, client or s3_client()))
    if found is None:
        raise FileNotFoundError(f"{uri}: no release there (no {POINTER})")
    return found[0]


def current_uri(uri: str, client: Any = None) -> str:
    """``s3://…/versions/<current>``: the folder of the release's current version."""
    where = Location.parse(uri.rstrip("/"))
    return where.uri(current_version(uri, client)["prefix"])


def cache_root() -> str:
    return os.environ.get("CORPUSFORGE_CACHE") or os.path.join(
        tempfile.gettempdir(), "corpusforge-releases"
    )


def local_copy(uri: str, client: Any = None) -> str:
    """A local folder holding the current version of the release ``uri``, downloaded once
    (a version never changes); the manifest is checked against the pointer's sha256.

    Raises:
        FileNotFoundError: ``uri`` holds no committed release.
        ReleaseError: the downloaded manifest is not the one the pointer names.
    """
    where = Location.parse(uri.rstrip("/"))
    bucket = Bucket(where, client or s3_client())
    found = read_pointer(bucket)
    if found is None:
        raise FileNotFoundError(f"{uri}: no release there (no {POINTER})")
    pointer = found[0]
    folder = os.path.join(cache_root(), _local_name(uri), pointer["version"])
    if os.path.isfile(os.path.join(folder, ".complete")):
        return folder
    partial = folder + ".part"
    shutil.rmtree(partial, ignore_errors=True)
    prefix = where.key(pointer["prefix"])
    for key in bucket.keys(prefix + "/"):
        rel = key[len(prefix) + 1 :]
        path = os.path.join(partial, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        bucket.download(key, path)
    with open(os.path.join(partial, "manifest.json"), "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != pointer["manifest_sha256"]:
            raise ReleaseError(f"{uri}: version {pointer['version']}: manifest does not match")
    with open(os.path.join(partial, ".complete"), "w") as f:
        f.write(pointer["version"] + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(partial, folder)
    return folder


def versions(uri: str, client: Any = None) -> list[dict[str, Any]]:
    """Every version folder of the release, oldest first: ``version``, ``committed`` (it was
    the current version once, as far as the pointer remembers) and ``current``."""
    where = Location.parse(uri.rstrip("/"))
    bucket = Bucket(where, client or s3_client())
    found = read_pointer(bucket)
    current = found[0]["version"] if found else None
    committed = set(found[0].get("history", [])) if found else set()
    return [
        {"version": name, "committed": name in committed, "current": name == current}
        for name in bucket.folders(where.key(VERSIONS))
    ]


def prune(uri: str, keep: int, client: Any = None) -> list[str]:
    """Delete the versions older than the current one but the ``keep - 1`` newest committed
    ones (``keep`` counts the current version); versions newer than the current one (a
    build uploading now) are left alone. Returns the versions deleted.

    Raises:
        ValueError: ``keep`` < 1.
    """
    if keep < 1:
        raise ValueError(f"--keep must be >= 1 (the current version), got {keep}")
    where = Location.parse(uri.rstrip("/"))
    bucket = Bucket(where, client or s3_client())
    listed = versions(uri, client=bucket.client)
    current = next((v["version"] for v in listed if v["current"]), None)
    if current is None:
        return []
    older = [v for v in listed if v["version"] < current]
    kept = {v["version"] for v in older if v["committed"]}
    kept = set(sorted(kept)[len(kept) - (keep - 1) :]) if keep > 1 else set()
    deleted = []
    for v in older:
        if v["version"] not in kept:
            bucket.delete_prefix(where.key(VERSIONS, v["version"]))
            deleted.append(v["version"])
    return deleted
