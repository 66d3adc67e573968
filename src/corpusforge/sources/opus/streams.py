"""Bytes in: open local paths or URIs, undo gzip/bz2/xz, split lines, decode one line.

Lines are split on ``\\n`` only, in binary, never with ``str.splitlines`` or text mode:
those also split on ``\\r``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which occur
inside real sentences and would shift one side of a line-aligned corpus against the other.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import posixpath
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, cast

from corpusforge.sources.uris import open_bytes

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
COMPRESSED_SUFFIX = re.compile(r"\.(gz|bz2|xz)$")
# errors that a damaged or truncated compressed stream raises part-way through
STREAM_ERRORS: tuple[type[Exception], ...] = (OSError, EOFError, zlib.error, lzma.LZMAError)
# ... and those of a damaged zip archive
ZIP_ERRORS: tuple[type[Exception], ...] = (*STREAM_ERRORS, zipfile.BadZipFile)


def is_compressed(head: bytes) -> bool:
    """Whether a stream starting with ``head`` (its first 6 bytes) is gzip, bz2 or xz."""
    return head.startswith((GZIP_MAGIC, BZ2_MAGIC, XZ_MAGIC))


EXPANSION = 10
"""Decompressed bytes assumed per byte of a gzip, bz2 or xz file (:func:`decompressed_bytes`):
more than text usually reaches (3-6), so what is sized from it errs small."""


def decompressed_bytes(uri: str) -> int:
    """About how many bytes ``uri`` holds once decompressed, to size the work it makes: a
    plain file's size; a zip's members' recorded sizes; a gzip, bz2 or xz file's size times
    :data:`EXPANSION` (their own records of it are partial: a gzip's is of its last member,
    modulo 4 GiB). 0 when it cannot be read (its reader then says why)."""
    try:
        with open_bytes(uri) as raw:
            head = raw.read(6)
            size = raw.seek(0, 2)
            if is_compressed(head):
                return size * EXPANSION
            if not head.startswith(b"PK"):
                return size
            raw.seek(0)
            try:
                with zipfile.ZipFile(raw) as zf:
                    return sum(member.file_size for member in zf.infolist())
            except zipfile.BadZipFile:
                return size
    except STREAM_ERRORS:
        return 0


def file_name(uri: str) -> str:
    """The last path component of a local path or URI, used in origins."""
    return posixpath.basename(uri.replace("\\", "/").rstrip("/")) or uri


def decompressed(raw: IO[bytes]) -> IO[bytes]:
    """Wrap ``raw`` in the decompressor its magic bytes call for (gzip, bz2, xz) or none.

    Args:
        raw: a seekable binary stream positioned at its start.
    """
    head = raw.read(6)
    raw.seek(0)
    if head.startswith(GZIP_MAGIC):
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    if head.startswith(BZ2_MAGIC):
        return cast(IO[bytes], bz2.BZ2File(raw, mode="rb"))
    if head.startswith(XZ_MAGIC):
        return cast(IO[bytes], lzma.LZMAFile(raw, mode="rb"))
    return raw


@contextlib.contextmanager
def open_decompressed(uri: str) -> Iterator[IO[bytes]]:
    """:func:`open_bytes` then :func:`decompressed`, as a context manager that closes both."""
    with open_bytes(uri) as raw:
        stream = decompressed(raw)
        try:
            yield stream
        finally:
            if stream is not raw:
                stream.close()


def strip_compression(name: str) -> str:
    """``name`` without a trailing ``.gz``, ``.bz2`` or ``.xz``."""
    return COMPRESSED_SUFFIX.sub("", name)


MAX_LINE_BYTES = 1 << 20
"""The longest line read (1 MiB, as for Twitter archives); a longer one is never held whole."""


@dataclass(frozen=True, slots=True)
class LineTooLong:
    """Stands for a line longer than the limit: it was skipped, only its start is kept.

    Attributes:
        head: its first bytes, for the dead letter's excerpt.
        limit: the limit it exceeded, in bytes.
    """

    head: bytes
    limit: int


def iter_lines(stream: IO[bytes], max_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes | LineTooLong]:
    """The lines of ``stream`` without their ``\\n`` or ``\\r\\n`` ending, split on ``\\n`` only.

    A line longer than ``max_bytes`` is read past in pieces, never held whole, and yielded
    as a :class:`LineTooLong` in its place, so line numbers (and alignment) stay right.

    Args:
        stream: decompressed bytes.
        max_bytes: the longest line yielded as bytes.
    """
    while raw := stream.readline(max_bytes + 1):
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            head = raw[:1024]
            while (rest := stream.readline(1 << 16)) and not rest.endswith(b"\n"):
                pass
            yield LineTooLong(head, max_bytes)
            continue
        if raw.endswith(b"\n"):
            raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
        yield raw


def count_lines(stream: IO[bytes], chunk_size: int = 1 << 20) -> int:
    """How many lines :func:`iter_lines` would yield from ``stream``, read in binary chunks.

    Counts ``\\n`` bytes, plus one for a last line without a ``\\n``; reads the whole stream.

    Raises:
        OSError, EOFError, zlib.error, lzma.LZMAError: when the stream breaks part-way.
    """
    lines, last = 0, b"\n"
    while chunk := stream.read(chunk_size):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    return lines + (last != b"\n")


def decode_line(raw: bytes, line_no: int) -> str:
    """Decode one line as strict UTF-8, dropping a byte-order mark on line 1.

    Raises:
        UnicodeDecodeError: for invalid UTF-8; callers dead-letter the line and go on.
    """
    text = raw.decode("utf-8")
    if line_no == 1:
        text = text.removeprefix("\ufeff")
    return text
