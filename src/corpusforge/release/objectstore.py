"""A release on object storage (``s3://``, ``gs://``) -> immutable versions and one pointer
written last.

    corpusforge twitter build day.zip --out s3://bucket/releases/en
    corpusforge versions gs://bucket/releases/en                    # list; --keep N prunes

Object stores have no rename, so the local backend's swap
(:class:`corpusforge.release.publish.LocalFolder`) cannot be atomic there. The release
``OUT`` is committed as Delta and Iceberg tables are, with no rename:

- ``OUT/versions/<version>/…``: each version is a whole release in today's layout
  (``manifest.json``, ``README.md``, ``pairs/``, …), written once and never changed.
  ``<version>`` is ``YYYYmmddTHHMMSSZ-<8 hex>``, so versions sort by the time they began;
  a version's ``manifest.json`` is uploaded after all its other files.
- ``OUT/_current.json``: the commit, a small JSON document naming the current version, its
  manifest and the manifest's sha256. It is written last, in one PUT, with a conditional
  write (S3: ``If-None-Match: *`` for a release's first version, else ``If-Match`` the ETag
  of the pointer this build started from; GCS: ``ifGenerationMatch`` 0, else the pointer's
  generation). A reader follows the pointer only; a
  build killed at any moment leaves the pointer, and so the previous version, untouched,
  and at worst an unreferenced partial version that ``--keep`` removes. Before writing it,
  the build lists its version and checks that the manifest and every file it lists are
  there (a prune or a lost write cannot make a pointer to a broken version).
- ``--keep N`` (:func:`prune`) keeps the current version and the ``N - 1`` committed
  before it, in the order the pointer's history gives, and leaves alone any version never
  committed whose newest object the server wrote less than ``--grace-hours`` ago (24 by
  default): a build may be uploading it, and its id, from its own machine's clock, may sort
  anywhere. Ages are the server's (``LastModified`` against its ``Date``), never a clock
  of this machine's nor a version id's.
- Two builds racing for one release: on one machine the second stops at once on the local
  lock; on two machines both upload their versions and the pointer's condition lets exactly
  one commit: the other ends with :class:`ReleaseConflict` (exit 2), naming the version that
  won, and deletes its own objects. No lease object is needed: the store refuses the stale
  write. (versitygw, AWS S3 since 2024, MinIO and Ceph honour both conditions; GCS and
  fake-gcs-server honour ``ifGenerationMatch`` on uploads.)

The build itself writes into a local draft folder (under ``$CORPUSFORGE_DRAFTS``, default
``~/.cache/corpusforge/drafts``, a folder only this user can use:
:mod:`corpusforge.release.private`; one per release URI), with the same lock, draft and
carry-over as a local release, so a build published to a bucket writes the same bytes as one
published to a folder, and a killed build's finished extracts are reused by the next one on
the same machine. A runner whose workers run elsewhere (Dataflow, Flink,
``PortableRunner``), or ``CORPUSFORGE_S3_DRAFT=bucket``, cannot share that folder: its draft
is the new version's prefix in the bucket, the extracts it reuses are copied there on the
server, and the commit is the same pointer. Readers (``validate``, ``stats``, ``card``,
``train --data``, ``eval ranking``, ``versions --local``) follow the pointer and read the
current version through a local copy (:mod:`corpusforge.release.reading`, the readers'
half, into ``$CORPUSFORGE_CACHE``). Nothing a bucket says is trusted: the pointer's names and
every key under a version are checked (:mod:`corpusforge.release.bucketnames`) before
anything is downloaded, copied or deleted. ``corpusforge card s3://…`` commits a new version
holding the new card (:func:`new_version_with`).

All of it is written once, on :class:`corpusforge.release.buckets.Bucket`: S3
(:mod:`corpusforge.release.s3`, boto3's endpoint and credentials) and GCS
(:mod:`corpusforge.release.gcs`, Google's) implement it; no credential is ever written into
a release or a log.
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
from collections.abc import Callable, Collection, Iterator
from typing import Any, TypeVar

from corpusforge.config.runner import Runner
from corpusforge.release.bucketnames import VERSIONS, Location, relative_key
from corpusforge.release.buckets import Bucket, open_bucket
from corpusforge.release.errors import BucketError, ConditionFailed, ReleaseError, ReleaseLocked
from corpusforge.release.private import private_folder
from corpusforge.release.publish import LocalFolder
from corpusforge.release.reading import (
    POINTER,
    POINTER_FORMAT,
    local_copy,
    local_name,
    read_pointer,
    versions,
)
from corpusforge.release.s3 import client_settings

__all__ = [
    "ObjectStore",
    "ReleaseConflict",
    "drafts_root",
    "new_version_id",
    "new_version_with",
    "prune",
]

log = logging.getLogger(__name__)

HISTORY = 100
"""Committed versions the pointer remembers, newest first (what ``--keep`` may keep)."""
GRACE_HOURS = 24.0
"""How long ``--keep`` leaves a version that was never committed (a build may be uploading
it), counted from its newest object's time on the server (``--grace-hours``)."""


class ReleaseConflict(ReleaseLocked):
    """Another build committed a version of the release while this one ran."""


def new_version_id() -> str:
    now = datetime.datetime.now(datetime.UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


# -- the store -------------------------------------------------------------------------


def drafts_root() -> str:
    """The drafts of bucket builds on this machine: private to this user
    (:mod:`corpusforge.release.private`; ``$CORPUSFORGE_DRAFTS`` moves it)."""
    return private_folder("CORPUSFORGE_DRAFTS", "drafts")


class ObjectStore:
    """A release on ``s3://`` or ``gs://``: a local draft, uploaded as a new version,
    committed by the pointer (module docstring).

    Args:
        out: ``s3://BUCKET/PATH`` or ``gs://BUCKET/PATH`` (``--out``).
        runner: the build's runner (default: none named); its ``--s3_*`` options set an S3
            client.
        client: the store's client (default: boto3's or google-cloud-storage's, from the
            environment and ``runner``).
    """

    def __init__(self, out: str, runner: Runner | None = None, client: Any = None) -> None:
        self.target = out.rstrip("/")
        self.where = Location.parse(self.target)
        runner = runner or Runner()
        self.in_bucket = runner.distributed or os.environ.get("CORPUSFORGE_S3_DRAFT") == "bucket"
        """Whether the draft is the new version's prefix in the bucket (a runner whose
        workers run elsewhere, or ``CORPUSFORGE_S3_DRAFT=bucket``) rather than a local
        folder."""
        self._settings = client_settings(runner.beam_args())
        self._client = client
        last = os.path.join(drafts_root(), local_name(self.target), "last")
        self._local = _labelled(self.target, lambda: LocalFolder(last))
        self.draft = self._local.draft
        self.published = self._local.target
        """Where the version this build published can be read (after :meth:`commit`): a
        local copy, or the version's prefix in the bucket."""
        self._base: tuple[dict[str, Any], str] | None = None
        self.version = ""

    @property
    def bucket(self) -> Bucket:
        bucket = open_bucket(self.where, self._client, self._settings)
        self._client = bucket.client
        return bucket

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a pipeline's last step commits): the client is made again where needed."""
        return {**self.__dict__, "_client": None}

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One build per release on this machine; across machines the commit's condition
        lets one of two racing builds win (:class:`ReleaseConflict` for the other)."""
        with contextlib.ExitStack() as stack:
            _labelled(self.target, lambda: stack.enter_context(self._local.locked()))
            yield

    def begin(self, rebuilt: Collection[str]) -> str:
        try:
            self._base = read_pointer(self.bucket)
        except ReleaseError:
            raise
        except Exception as exc:
            raise ReleaseError(f"--out {self.target}: cannot read the release: {exc}") from None
        self.version = new_version_id()
        if not self.in_bucket:
            return _labelled(self.target, lambda: self._local.begin(rebuilt))
        self.draft = self.published = self.where.uri(VERSIONS, self.version)
        if self._base is not None:  # what the build does not rebuild (extracts) carries over
            self._carry(self.where.key(self._base[0]["prefix"]), rebuilt)
        return self.draft

    def _carry(self, current: str, rebuilt: Collection[str]) -> None:
        """Copy the current version's objects outside ``rebuilt`` into the new version, on
        the server side (every key checked to stay under its version first)."""
        bucket, to, current = (
            self.bucket,
            self.where.key(VERSIONS, self.version),
            current.rstrip("/"),
        )
        rels = [relative_key(self.where, current, key) for key in bucket.keys(current + "/")]
        for rel in rels:
            if rel.split("/", 1)[0] not in rebuilt:
                bucket.copy(f"{current}/{rel}", f"{to}/{rel}")

    def commit(self) -> None:
        """Upload the draft (a local one), check that the bucket holds the manifest and every
        file it lists, then write the pointer on its condition.

        Raises:
            ReleaseError: the version is not whole in the bucket; nothing is committed.
            BucketError: the store failed (the endpoint, the credentials); the version's
                objects and the local draft are removed where they can be.
            ReleaseConflict: another build committed first; this version's objects go.
        """
        prefix = self.where.key(VERSIONS, self.version)
        if self.in_bucket:
            digest, count = self._check_whole(prefix)
        else:
            try:
                uploaded = self._upload(prefix)
                digest, count = self._check_whole(prefix, uploaded)
            except ReleaseError:
                self._remove_uploaded(prefix)
                raise
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
        expect = self._base[1] if self._base else None  # absent, or still what we read
        data = json.dumps(pointer, indent=2, sort_keys=True).encode() + b"\n"
        try:
            self.bucket.put(self.where.key(POINTER), data, expect)
        except BucketError:
            self._remove_uploaded(prefix)
            raise
        except ConditionFailed:
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

    def _upload(self, prefix: str) -> list[str]:
        """The local draft -> ``prefix``, its manifest last; the files uploaded."""
        manifest = os.path.join(self.draft, "manifest.json")
        if not os.path.isfile(manifest):
            raise ReleaseError(f"--out {self.target}: the draft has no manifest.json")
        files = sorted(_files_under(self.draft))
        log.info("publishing %d files to %s", len(files), self.where.uri(VERSIONS, self.version))
        for rel in files:
            if rel != "manifest.json":
                self.bucket.upload(os.path.join(self.draft, rel), f"{prefix}/{rel}")
        self.bucket.upload(manifest, f"{prefix}/manifest.json")
        return files

    def _check_whole(self, prefix: str, uploaded: Collection[str] = ()) -> tuple[str, int]:
        """The sha256 of the version's manifest in the bucket and the number of its objects,
        once the bucket is seen to hold the manifest, every file it lists and ``uploaded``.

        Raises:
            ReleaseError: one of them is missing (a prune, a lifecycle rule, a lost write).
        """
        uri = self.where.uri(VERSIONS, self.version)
        got = self.bucket.get(f"{prefix}/manifest.json")
        if got is None:
            raise ReleaseError(f"{uri}: the new version has no manifest.json; nothing committed")
        try:
            listed = json.loads(got[0]).get("files", [])
            needed = {str(entry["path"]) for entry in listed} | set(uploaded)
        except (ValueError, TypeError, KeyError, AttributeError):
            raise ReleaseError(f"{uri}/manifest.json: not a manifest; nothing committed") from None
        held = {relative_key(self.where, prefix, key) for key in self.bucket.keys(prefix + "/")}
        missing = sorted(needed - held)
        if missing:
            raise ReleaseError(
                f"{uri}: {len(missing)} file(s) of the new version are not in the bucket "
                f"(first: {missing[0]}); nothing committed"
            )
        return hashlib.sha256(got[0]).hexdigest(), len(held)

    def _remove_uploaded(self, prefix: str) -> None:
        """After a failed upload: this version's objects and the local draft go, where they
        can (the store may be gone); the current version stays."""
        with contextlib.suppress(Exception):
            self.bucket.delete_prefix(prefix)
        if not self.in_bucket:
            self._local.abandon()

    def abandon(self) -> None:
        if self.in_bucket:
            if self.version:
                self.bucket.delete_prefix(self.where.key(VERSIONS, self.version))
            return
        self._local.abandon()


T = TypeVar("T")


def _labelled(target: str, call: Callable[[], T]) -> T:
    """``call()``, its :class:`ReleaseError` naming ``target`` (the bucket release) where
    the local draft's message named the draft folder."""
    try:
        return call()
    except ReleaseError as exc:
        _, _, detail = str(exc).partition(": ")
        raise type(exc)(f"--out {target}: {detail or exc}") from None


def _files_under(folder: str) -> Iterator[str]:
    for dirpath, _, names in os.walk(folder):
        for name in names:
            yield os.path.relpath(os.path.join(dirpath, name), folder).replace(os.sep, "/")


# -- a new version from the current one, and housekeeping ------------------------------


def new_version_with(
    uri: str, replaced: Collection[str], write: Callable[[str], object], client: Any = None
) -> str:
    """Commit a new version of the release ``uri``: the current version with its top-level
    entries ``replaced`` rewritten by ``write`` (``corpusforge card s3://…``: the card).

    The other objects are copied on the server; ``write`` gets a private local folder
    holding the current version (hard links to the reader's cache, without ``replaced``)
    and writes ``replaced`` there; those files are uploaded and the version is committed
    like a build's (the same checks, the pointer's condition, the same lock).

    Args:
        uri: the release.
        replaced: the top-level names ``write`` writes (``README.md``, ``card``).
        write: writes them into the folder it is given.
        client: the store's client (default: made from the environment).

    Returns:
        The new version's URI.

    Raises:
        FileNotFoundError: ``uri`` holds no committed release.
        ReleaseConflict: a build committed another version meanwhile (nothing committed).
    """
    store = ObjectStore(uri, client=client)
    store.in_bucket = True  # the new version is written in the bucket, as a runner's would
    with store.locked():
        current = local_copy(uri, client=store.bucket.client)
        work = tempfile.mkdtemp(prefix="new-version-", dir=drafts_root())
        try:
            for rel in _files_under(current):
                if rel.split("/", 1)[0] not in replaced and rel != ".complete":
                    path = os.path.join(work, *rel.split("/"))
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    os.link(os.path.join(current, *rel.split("/")), path)
            write(work)
            store.begin(rebuilt=replaced)
            if store._base is None or store._base[0]["version"] != os.path.basename(current):
                store.abandon()
                raise ReleaseConflict(
                    f"{uri}: a build committed a new version meanwhile; run again"
                )
            prefix = store.where.key(VERSIONS, store.version)
            try:
                for rel in _files_under(work):
                    if rel.split("/", 1)[0] in replaced:
                        store.bucket.upload(os.path.join(work, rel), f"{prefix}/{rel}")
                store.commit()
            except ReleaseConflict:
                raise
            except BaseException:
                with contextlib.suppress(Exception):
                    store.abandon()
                raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return store.where.uri(VERSIONS, store.version)


def prune(uri: str, keep: int, client: Any = None, grace_hours: float = GRACE_HOURS) -> list[str]:
    """Delete every version but the current one, the ``keep - 1`` committed before it (in
    the order they were committed) and those never committed whose newest object is
    younger than ``grace_hours`` on the server's clock (a build may be uploading one: its
    id, taken from its machine's clock, may sort anywhere). Returns the versions deleted.

    Args:
        uri: the release.
        keep: committed versions kept, the current one included.
        client: the store's client (default: made from the environment).
        grace_hours: the age below which an uncommitted version is left alone.

    Raises:
        ValueError: ``keep`` < 1 or ``grace_hours`` < 0.
    """
    if keep < 1:
        raise ValueError(f"--keep must be >= 1 (the current version), got {keep}")
    if grace_hours < 0:
        raise ValueError(f"--grace-hours must be >= 0, got {grace_hours}")
    where = Location.parse(uri.rstrip("/"))
    bucket = open_bucket(where, client)
    found = read_pointer(bucket)
    if found is None:
        return []
    current = found[0]["version"]
    history = [current, *(v for v in found[0].get("history", []) if v != current)]
    names = [v["version"] for v in versions(uri, client=bucket.client)]
    kept = {current, *[v for v in history if v in names][:keep]}
    now = bucket.now()
    deleted = []
    for name in names:
        if name in kept:
            continue
        if name not in history and _age_hours(bucket, where.key(VERSIONS, name), now) < grace_hours:
            log.info("leaving %s: never committed, younger than %g hours", name, grace_hours)
            continue
        bucket.delete_prefix(where.key(VERSIONS, name))
        deleted.append(name)
    return deleted


def _age_hours(bucket: Bucket, prefix: str, now: datetime.datetime) -> float:
    """Hours since the server last wrote an object under ``prefix/`` (its own clock), never
    below 0: the server's ``Date`` has whole seconds, so an object written in the same second
    can look a fraction of a second younger than now (then ``--grace-hours 0`` spared it)."""
    newest = max((when for _, when in bucket.objects(prefix + "/")), default=None)
    if newest is None:
        return float("inf")
    return max(0.0, (now - newest).total_seconds() / 3600)
