"""Release I/O shared by every build: paths and URIs, JSON side files, staged publishing.

Everything goes through Beam's ``FileSystems``, so a release directory may be a local path
or a ``gs://`` / ``s3://`` URI; small JSON side files are written atomically.
"""

from __future__ import annotations

import json
import platform
import re
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.parquetio import ReadAllFromParquet
from apache_beam.options.pipeline_options import PipelineOptions

import corpusforge
from corpusforge.options import with_default_runner
from corpusforge.sinks.parquet import write_file_atomically

_GLOB = re.compile(r"[*?\[]")
FILES = "_files.json"
COUNTS = "_counts.json"


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


def expand_inputs(patterns: Iterable[str]) -> list[str]:
    """Paths, globs and URIs -> the sorted list of archive URIs; an empty match is an error."""
    uris: set[str] = set()
    for pattern in patterns:
        if pattern.startswith(("http://", "https://")):
            uris.add(pattern)
            continue
        if _GLOB.search(pattern):
            matched = [m.path for m in FileSystems.match([pattern])[0].metadata_list]
            if not matched:
                raise FileNotFoundError(f"input pattern {pattern!r} matched no file")
            uris.update(matched)
        elif FileSystems.exists(pattern):
            uris.add(pattern)
        else:
            raise FileNotFoundError(f"input {pattern!r} does not exist")
    return sorted(uris)


def join(*parts: str) -> str:
    return FileSystems.join(*parts)


def read_json(path: str) -> Any:
    with FileSystems.open(path) as f:
        return json.loads(f.read().decode("utf-8"))


def write_json(path: str, doc: Any) -> None:
    data = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
    write_file_atomically(path, data)


def delete_tree(path: str) -> None:
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


def file_list(infos: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
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
