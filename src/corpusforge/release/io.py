"""Release I/O shared by every build: inputs, paths and URIs, JSON side files.

Everything goes through Beam's ``FileSystems``, so a release directory may be a local path
or a ``gs://`` / ``s3://`` URI; small JSON side files are written atomically. A release
records no machine path: file lists hold paths relative to the release, and the manifest
names inputs and model files by file name (:func:`release_config`).
"""

from __future__ import annotations

import glob
import json
import logging
import os
import platform
import re
import stat
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.parquetio import ReadAllFromParquet
from apache_beam.options.pipeline_options import PipelineOptions

import corpusforge
from corpusforge.config.beam import with_default_runner
from corpusforge.sinks.parquet import write_file_atomically

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

    import smart_open

    digest = hashlib.sha256()
    size = 0
    with smart_open.open(uri, "rb", compression="disable") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


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
    skip = [os.path.abspath(p) for p in exclude if "://" not in p]
    uris: set[str] = set()
    for pattern in patterns:
        if "://" in pattern:
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
    if FileSystems.exists(pattern):
        return [pattern]
    if _GLOB.search(pattern):
        matched = [m.path for m in FileSystems.match([pattern])[0].metadata_list]
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


def join(*parts: str) -> str:
    return FileSystems.join(*parts)


def read_json(path: str) -> Any:
    with FileSystems.open(path) as f:
        return json.loads(f.read().decode("utf-8"))


def write_json(path: str, doc: Any) -> None:
    data = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
    write_file_atomically(path, data)


def delete_tree(path: str) -> None:
    if path.startswith("s3://"):  # no folders on S3: every key under the prefix goes
        FileSystems.delete([path.rstrip("/") + "/"])
        return
    if FileSystems.exists(path):
        FileSystems.delete([path])


def ensure_dir(path: str) -> None:
    if not FileSystems.exists(path):
        FileSystems.mkdirs(path)


def pipeline_options(beam_args: list[str]) -> PipelineOptions:
    return with_default_runner(PipelineOptions(beam_args))


class WriteJsonPerKeyFn(beam.DoFn):
    """(folder, items) -> folder/<name>, with items turned into a JSON document."""

    def __init__(self, name: str, to_doc: Callable[[Iterable[Any]], Any]) -> None:
        self._name = name
        self._to_doc = to_doc

    def process(self, element: tuple[str, Iterable[Any]]) -> None:
        folder, items = element
        write_json(join(folder, self._name), self._to_doc(items))


def file_list(infos: Iterable[dict[str, Any]], root: str | None = None) -> list[dict[str, Any]]:
    """Shard descriptions sorted by path; with ``root``, their paths made relative to it."""
    if root is not None:
        infos = [{**i, "path": relative(i["path"], root)} for i in infos]
    return sorted(infos, key=lambda i: i["path"])


def read_parquet(
    p: beam.Pipeline, label: str, files: list[str], columns: list[str] | None = None
) -> beam.PCollection:
    """Rows (dicts) of ``files``, or only ``columns`` of them; empty when there are none."""
    paths = p | f"{label}Files" >> beam.Create(files)
    if not files:
        return paths
    return paths | f"Read{label}" >> ReadAllFromParquet(columns=columns)


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
