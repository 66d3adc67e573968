"""Checks of a release -> their stable names and the failures found, and the release folder
they read.

:class:`Check` names every way a release can depart from its manifest (the list is in
:mod:`corpusforge.inspect.validate`); :class:`Failures` collects them as
:mod:`~corpusforge.inspect.validate` and :mod:`~corpusforge.inspect.content` find them
(row-level ones summed per check and file, with a few examples); :class:`ReleaseDir` reads
files relative to a release root on whatever filesystem pyarrow opens it with.
"""

from __future__ import annotations

import enum
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from corpusforge.sources.uris import is_uri

EXAMPLES = 3
"""Examples kept per failure (rows of one file, or items of one check)."""
_CHUNK = 1 << 22


class Check(enum.StrEnum):
    """The stable name of each check a release can fail."""

    MANIFEST_MISSING = "manifest_missing"
    MANIFEST_INVALID = "manifest_invalid"
    MANIFEST_INCONSISTENT = "manifest_inconsistent"
    FILE_MISSING = "file_missing"
    FILE_BYTES_MISMATCH = "file_bytes_mismatch"
    FILE_SHA256_MISMATCH = "file_sha256_mismatch"
    FILE_ROWS_MISMATCH = "file_rows_mismatch"
    FILE_UNREADABLE = "file_unreadable"
    UNLISTED_FILE = "unlisted_file"
    SCHEMA_MISMATCH = "schema_mismatch"
    EMPTY_TEXT = "empty_text"
    BENCHMARK_MISALIGNED = "benchmark_misaligned"
    DUPLICATE_PAIR = "duplicate_pair"
    MIX_MISMATCH = "mix_mismatch"
    BENCHMARK_LEAK_ID = "benchmark_leak_id"
    BENCHMARK_LEAK_TEXT = "benchmark_leak_text"
    HELDOUT_LEAK = "heldout_leak"
    ACCOUNTING_UNBALANCED = "accounting_unbalanced"
    ACCOUNTING_STALE = "accounting_stale"


@dataclass(frozen=True)
class Failure:
    """One failed check.

    Attributes:
        check: which check failed.
        path: where, relative to the release (a file, a ``pairs/<d>/`` folder, or
            ``manifest.json``).
        detail: what differs, with up to ``EXAMPLES`` examples.
        count: how many rows or items fail (1 for a file-level failure).
    """

    check: Check
    path: str
    detail: str
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "check": str(self.check),
            "path": self.path,
            "count": self.count,
            "detail": self.detail,
        }


# ---------------------------------------------------------------------------------------
# Collecting failures


class Failures:
    """File-level failures as they come; row-level ones summed per (check, path)."""

    def __init__(self) -> None:
        self._items: list[Failure | tuple[Check, str]] = []
        self._rows: dict[tuple[Check, str], tuple[list[int], list[str]]] = {}

    def add(self, check: Check, path: str, detail: str) -> None:
        self._items.append(Failure(check, path, detail))

    def rows(self, check: Check, path: str, n: int, examples: Iterator[str] | list[str]) -> None:
        if n <= 0:
            return
        key = (check, path)
        if key not in self._rows:
            self._rows[key] = ([0], [])
            self._items.append(key)
        total, kept = self._rows[key]
        total[0] += n
        for example in examples:
            if len(kept) >= EXAMPLES:
                break
            kept.append(example)

    def paths(self, *checks: Check) -> set[str]:
        """Paths with a file-level failure of one of ``checks``."""
        return {i.path for i in self._items if isinstance(i, Failure) and i.check in checks}

    def finish(self) -> tuple[Failure, ...]:
        done = []
        for item in self._items:
            if isinstance(item, Failure):
                done.append(item)
            else:
                (n,), examples = self._rows[item]
                detail = f"{n:,} rows, e.g. " + "; ".join(examples)
                done.append(Failure(item[0], item[1], detail, n))
        return tuple(done)


# ---------------------------------------------------------------------------------------
# The release directory


class ReleaseDir:
    """Paths relative to a release root, on whatever filesystem pyarrow opens it with."""

    def __init__(self, release_dir: str) -> None:
        fs: pafs.FileSystem
        if is_uri(release_dir):
            fs, root = pafs.FileSystem.from_uri(release_dir)
        else:
            fs, root = pafs.LocalFileSystem(), os.path.abspath(release_dir)
        self.fs = fs
        self.root = root.rstrip("/")

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def size(self, rel: str) -> int | None:
        """Size of a regular file, or ``None`` when there is none."""
        info = self.fs.get_file_info(self.path(rel))
        return info.size if info.type == pafs.FileType.File else None

    def read_bytes(self, rel: str) -> bytes:
        with self.fs.open_input_stream(self.path(rel)) as f:
            data: bytes = f.read()
        return data

    def sha256(self, rel: str) -> str:
        digest = hashlib.sha256()
        with self.fs.open_input_stream(self.path(rel)) as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
        return digest.hexdigest()

    def files_under(self, folder: str) -> list[str]:
        selector = pafs.FileSelector(self.path(folder), recursive=True, allow_not_found=True)
        prefix = self.root + "/"
        return sorted(
            info.path[len(prefix) :]
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.File
        )

    def batches(self, rel: str, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
        with self.fs.open_input_file(self.path(rel)) as f:
            yield from pq.ParquetFile(f).iter_batches(batch_size=batch_rows, columns=columns)
