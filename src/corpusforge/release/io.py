"""Release I/O shared by every build: inputs, paths and URIs, atomic files, JSON side files.

A path may be local or a ``gs://`` / ``s3://`` URI. Local paths are handled with ``os`` and
``shutil``; a URI goes through Beam's ``FileSystems``, imported on its first use, so a build
on this machine never imports Beam. Every Parquet shard and JSON side file lands through
:func:`write_file_atomically` (a temporary name, then a rename). A release records no machine
path: file lists hold paths relative to the release, and the manifest names inputs and model
files by file name (:func:`release_config`).
"""

from __future__ import annotations

import glob
import json
import logging
import os
import platform
import re
import shutil
import stat
import threading
from collections.abc import Iterable
from importlib import metadata
from typing import TYPE_CHECKING, Any

import corpusforge
from corpusforge.sources.uris import is_uri, open_bytes

if TYPE_CHECKING:
    from apache_beam.io.filesystems import FileSystems

log = logging.getLogger(__name__)

_GLOB = re.compile(r"[*?\[]")
FILES = "_files.json"
COUNTS = "_counts.json"
PATH_SETTINGS = ("inputs", "decontaminate", "lid_model", "documents_root")
"""Configuration fields that name files: the manifest records their file names only."""


class InputError(ValueError):
    """An input the build cannot read: missing, not a regular file, or yielding nothing."""


def file_digest(uri: str) -> tuple[int, str]:
    """Size in bytes and sha256 of a local path or URI, read once, streaming."""
    import hashlib

    digest = hashlib.sha256()
    size = 0
    with open_bytes(uri) as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


class DigestsAhead:
    """:func:`file_digest` of local files, begun now on a thread: reading and hashing free the
    GIL, so the hashes are taken on another core while this one goes on (a build imports its
    modules meanwhile), where they would hold up the start of its work.

    Args:
        paths: the files to hash; those that are not regular local files (URIs, globs,
            folders), and any whose hashing fails, are left to :meth:`digest`.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = frozenset(p for p in paths if not is_uri(p) and os.path.isfile(p))
        self._done: dict[str, tuple[int, str]] = {}
        self._thread = threading.Thread(target=self._hash, name="input digests", daemon=True)
        self._thread.start()

    def _hash(self) -> None:
        for path in sorted(self._paths):
            try:
                self._done[path] = file_digest(path)
            except OSError:  # hashed again when asked, where the error reaches the user
                continue

    def digest(self, uri: str) -> tuple[int, str]:
        """:func:`file_digest` of ``uri``, once the thread has ended (so that no thread is
        left when the build forks its workers): the thread's hash, or one taken now."""
        self._thread.join()
        return self._done.get(uri) or file_digest(uri)


def expand_inputs(patterns: Iterable[str], *, exclude: Iterable[str] = ()) -> list[str]:
    """Paths, globs and URIs -> the sorted list of input files.

    A local path that exists is taken literally, glob characters and all (``day [1].zip``);
    otherwise a pattern with ``*``, ``?`` or ``[`` is a glob (``**`` spans folders). Only
    regular files are read: a named FIFO, device or socket is refused before anything opens
    it, a named folder is refused (give ``'DIR/*'``), and a folder a glob matches is
    skipped. Nothing under ``exclude`` (the release being built and its draft and lock) is
    ever an input.

    Args:
        patterns: as the user gave them.
        exclude: local paths never taken as inputs, nor anything below them.

    Raises:
        InputError: a path does not exist or is not a regular file, or a glob matched none.
    """
    skip = [os.path.abspath(p) for p in exclude if not is_uri(p)]
    uris: set[str] = set()
    for pattern in patterns:
        if is_uri(pattern):
            uris.update(_expand_uri(pattern))
            continue
        if os.path.lexists(pattern):
            _require_regular(pattern)
            if not _excluded(pattern, skip):
                uris.add(pattern)
            continue
        if not _GLOB.search(pattern):
            raise InputError(f"input {pattern} does not exist")
        matched = []
        for path in sorted(glob.glob(pattern, recursive=True)):
            if _excluded(path, skip):
                continue
            if os.path.isdir(path):
                log.info("input %s: %s is a folder, skipped", pattern, path)
                continue
            _require_regular(path)
            matched.append(path)
        if not matched:
            raise InputError(f"input {pattern}: matched no file")
        uris.update(matched)
    return sorted(uris)


def _expand_uri(pattern: str) -> list[str]:
    if pattern.startswith(("http://", "https://")):
        return [pattern]
    if _filesystems().exists(pattern):
        return [pattern]
    if _GLOB.search(pattern):
        matched = [m.path for m in _filesystems().match([pattern])[0].metadata_list]
        if matched:
            return matched
        raise InputError(f"input {pattern}: matched no file")
    raise InputError(f"input {pattern} does not exist")


def _require_regular(path: str) -> None:
    """Refuse, without opening it, anything but a regular file (or a link to one)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"input {path}: {exc.strerror}") from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise InputError(
            f"input {path}: is a folder; give the files in it, e.g. '{path.rstrip('/')}/*'"
        )
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise InputError(f"input {path}: is {kind}; only regular files are read")


def _excluded(path: str, skip: list[str]) -> bool:
    full = os.path.abspath(path)
    return any(full == s or full.startswith(s.rstrip("/") + "/") for s in skip)


def file_name(path: str) -> str:
    """The last component of a path or URI (``gs://b/x/day.zip`` -> ``day.zip``)."""
    return path.rstrip("/").rsplit("/", 1)[-1] if path else path


def release_config(doc: dict[str, Any]) -> dict[str, Any]:
    """A configuration as a manifest records it: no release path, file names for files.

    Args:
        doc: ``config.to_json()``.
    """
    doc = {k: v for k, v in doc.items() if k != "out"}
    for key in PATH_SETTINGS:
        value = doc.get(key)
        if isinstance(value, str):
            doc[key] = file_name(value)
        elif isinstance(value, list):
            doc[key] = [file_name(v) if isinstance(v, str) else v for v in value]
    return doc


_pending: dict[str, list[str] | None] = {"flags": None}
"""Flags :func:`use_filesystem_flags` named that ``FileSystems`` has not been given yet."""


def use_filesystem_flags(beam_args: list[str]) -> None:
    """The flags (``--s3_*``, …) this process's Beam ``FileSystems`` get (without them an
    ``s3://`` path fails with "Must provide one of client or options"): at once when there
    are some, else when a URI is first used, so a local build never imports Beam. A process
    that never calls this (a Beam worker: its harness sets them) keeps what it has."""
    _pending["flags"] = list(beam_args)
    if beam_args:
        _filesystems()


def _filesystems() -> type[FileSystems]:
    """Beam's ``FileSystems``, for URIs only (importing Beam takes about a second), with the
    build's flags once :func:`use_filesystem_flags` has named them."""
    from apache_beam.io.filesystems import FileSystems

    flags, _pending["flags"] = _pending["flags"], None
    if flags is not None:
        from apache_beam.options.pipeline_options import PipelineOptions

        FileSystems.set_options(PipelineOptions(flags))
    return FileSystems


def join(*parts: str) -> str:
    return _filesystems().join(*parts) if is_uri(parts[0]) else os.path.join(*parts)


def exists(path: str) -> bool:
    return _filesystems().exists(path) if is_uri(path) else os.path.exists(path)


def delete(paths: list[str]) -> None:
    """Delete files and folders (a folder with everything in it); each must exist."""
    remote = [p for p in paths if is_uri(p)]
    if remote:
        _filesystems().delete(remote)
    for path in (p for p in paths if not is_uri(p)):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def rename(source: str, target: str) -> None:
    """Move a file; ``target`` must not exist on object stores."""
    if is_uri(source) or is_uri(target):
        _filesystems().rename([source], [target])
    else:
        os.replace(source, target)


def files_under(folder: str) -> list[str]:
    """Every file below ``folder``, at any depth; none if it does not exist (on an object
    store, where a folder is only a key prefix, none if no key starts with it)."""
    if is_uri(folder):
        from apache_beam.io.filesystem import BeamIOError

        try:
            matched = _filesystems().match([join(folder.rstrip("/"), "**")])[0]
        except BeamIOError:
            return []
        return [m.path for m in matched.metadata_list]
    return [os.path.join(root, f) for root, _, names in os.walk(folder) for f in names]


def write_file_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (local or URI) through a temporary name and a rename; a
    local file's folder is made if it is missing."""
    tmp = f"{path}.tmp"
    if is_uri(path):
        from apache_beam.io.filesystem import CompressionTypes

        fs = _filesystems()
        with fs.create(tmp, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            f.write(data)
        if fs.exists(path):
            fs.delete([path])
        fs.rename([tmp], [path])
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def read_json(path: str) -> Any:
    with _filesystems().open(path) if is_uri(path) else open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def write_json(path: str, doc: Any) -> None:
    data = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
    write_file_atomically(path, data)


def delete_tree(path: str) -> None:
    if path.startswith(("s3://", "gs://")):  # no folders there: every key under it goes
        _filesystems().delete([path.rstrip("/") + "/"])
        return
    if exists(path):
        delete([path])


def ensure_dir(path: str) -> None:
    if is_uri(path):
        if not exists(path):
            _filesystems().mkdirs(path)
    else:
        os.makedirs(path, exist_ok=True)


def file_list(infos: Iterable[dict[str, Any]], root: str | None = None) -> list[dict[str, Any]]:
    """Shard descriptions sorted by path; with ``root``, their paths made relative to it."""
    if root is not None:
        infos = [{**i, "path": relative(i["path"], root)} for i in infos]
    return sorted(infos, key=lambda i: i["path"])


def relative(path: str, root: str) -> str:
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def software() -> dict[str, str]:
    versions = {"python": platform.python_version(), "corpusforge": corpusforge.__version__}
    for dist in ("apache-beam", "pyarrow", "orjson", "ftfy", "emoji"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions
