"""Archive Team "twitterstream" archives -> member references -> decompressed lines.

Every historical layout is read in place, never unpacked to disk:

- containers: daily ZIPs (``twitter-stream-2020-11-01.zip``, 2011-12 zips), monthly and daily
  TARs (``archiveteam-twitter-stream-2013-02.tar``, ``twitter_stream_2019_06_01.tar``,
  ``twitter-stream-20220301.tar``), a ``.tar.gz``, or one bare member file;
- members, one per minute: ``MM/DD/HH/MM.json.bz2``, ``YYYY/MM/DD/HH/MM.json.bz2``,
  ``YYYYMMDD/YYYYMMDDHHMMSS.json.gz``; bz2 members may hold several streams, gz several
  members.

:func:`list_members` reads only a container's index and yields one :class:`MemberRef` per
member, so a pipeline can fan a daily archive out over workers; :func:`read_member_lines`
decodes one member into ``(line_number, bytes)`` with :mod:`.decode` (bounded chunks, caps,
one output whatever the decoder). A ``.tar.gz`` has no index that allows random access, so
it is listed as a single reference that :func:`read_member_lines` walks member by member.
Problems never raise: they come back as :class:`ReadProblem` items with a reason code, and
every line decoded before the problem is kept.
"""

from __future__ import annotations

import enum
import io
import posixpath
import re
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from corpusforge.sources.twitter.decode import (
    BZ2_MAGIC,
    GZIP_MAGIC,
    READ_ERRORS,
    Line,
    ReadLimits,
    ReadProblem,
    ReadReason,
    decode_member,
)
from corpusforge.sources.uris import open_bytes

__all__ = [
    "BZ2_MAGIC",
    "GZIP_MAGIC",
    "MemberOpened",
    "MemberRef",
    "ReadLimits",
    "ReadProblem",
    "ReadReason",
    "SkipReason",
    "Skipped",
    "archive_name",
    "classify_member_name",
    "iter_lines",
    "list_members",
    "read_member_lines",
]

ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_ZIP_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}
_ZIP_METHOD_NAMES = {9: "deflate64", 10: "pkware implode", 93: "zstandard", 95: "xz", 98: "ppmd"}
_MEMBER_NAME = re.compile(r"\.json(\.bz2|\.gz)?$")


class SkipReason(enum.StrEnum):
    """Why a container entry is not a member we read (counted, not dead-lettered)."""

    DIRECTORY = "member_directory"
    STRAY = "member_stray"


@dataclass(frozen=True, slots=True)
class MemberRef:
    """Where one member lives: enough to read it again on any worker.

    Attributes:
        uri: the archive's path or URI, as given to :func:`list_members`.
        archive: the archive's file name, used in origins.
        member: the member's name inside the container (``*`` for a whole ``.tar.gz``).
        container: ``zip``, ``tar``, ``targz`` or ``file``.
        index: the member's position in the container (zip central directory or tar order).
        offset: byte offset of the member's data in a tar; 0 otherwise.
        size: compressed size in bytes.
    """

    uri: str
    archive: str
    member: str
    container: str
    index: int
    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """A container entry that is not a member: a directory or a stray file."""

    reason: SkipReason
    archive: str
    member: str


@dataclass(frozen=True, slots=True)
class MemberOpened:
    """Marks the start of a member found while walking a ``.tar.gz`` (it has no index)."""

    archive: str
    member: str


def archive_name(uri: str) -> str:
    """The file name part of a path or URI."""
    return posixpath.basename(uri.rstrip("/")) or uri


def classify_member_name(name: str) -> SkipReason | None:
    """``None`` for a member we read, else why the entry is skipped.

    Directory entries, hidden files (``.nfs…``, ``._…``, rsync's ``.09.json.bz2.J1uA1l``) and
    names that are not ``*.json``, ``*.json.bz2`` or ``*.json.gz`` are skipped.
    """
    if name.endswith("/"):
        return SkipReason.DIRECTORY
    base = posixpath.basename(name)
    if not base or base.startswith(".") or not _MEMBER_NAME.search(base):
        return SkipReason.STRAY
    return None


def list_members(uri: str) -> Iterator[MemberRef | Skipped | ReadProblem]:
    """List the members of one archive from its index, without decoding them.

    Args:
        uri: path or URI of a zip, tar, tar.gz or bare member file.

    Yields:
        A :class:`MemberRef` per member, a :class:`Skipped` per directory or stray entry, or
        one :class:`ReadProblem` when the file cannot be read as an archive.
    """
    name = archive_name(uri)
    try:
        with open_bytes(uri) as f:
            head = f.read(512)
            if not head:
                yield ReadProblem(
                    ReadReason.ARCHIVE_NOT_AN_ARCHIVE, name, None, None, "zero-byte file"
                )
                return
            f.seek(0)
            if head.startswith(ZIP_MAGICS):
                yield from _list_zip(uri, name, f)
            elif len(head) >= 262 and head[257:262] == b"ustar":
                yield from _list_tar(uri, name, f)
            elif head.startswith(GZIP_MAGIC) and _is_gzipped_tar(f):
                size = f.seek(0, io.SEEK_END)
                yield MemberRef(uri, name, "*", "targz", 0, 0, size)
            elif head.startswith((BZ2_MAGIC, GZIP_MAGIC)) or head.lstrip()[:1] == b"{":
                size = f.seek(0, io.SEEK_END)
                yield MemberRef(uri, name, name, "file", 0, 0, size)
            else:
                yield ReadProblem(
                    ReadReason.ARCHIVE_NOT_AN_ARCHIVE,
                    name,
                    None,
                    None,
                    "not a zip, tar, tar.gz or json(.bz2|.gz) file",
                    head[:64],
                )
    except READ_ERRORS as exc:
        yield ReadProblem(ReadReason.ARCHIVE_UNREADABLE, name, None, None, _describe(exc))


def _is_gzipped_tar(f: IO[bytes]) -> bool:
    """A gzip file whose first decompressed block is a tar header (whatever its name)."""
    f.seek(0)
    try:
        block = zlib.decompressobj(wbits=31).decompress(f.read(64 << 10), 1024)
    except zlib.error:
        return False
    finally:
        f.seek(0)
    return len(block) >= 262 and block[257:262] == b"ustar"


def _list_zip(uri: str, name: str, f: IO[bytes]) -> Iterator[MemberRef | Skipped]:
    with zipfile.ZipFile(f) as zf:
        for index, info in enumerate(zf.infolist()):
            skip = classify_member_name(info.filename)
            if skip is not None:
                yield Skipped(skip, name, info.filename)
                continue
            yield MemberRef(uri, name, info.filename, "zip", index, 0, info.compress_size)


def _list_tar(uri: str, name: str, f: IO[bytes]) -> Iterator[MemberRef | Skipped]:
    with tarfile.open(fileobj=f, mode="r:") as tf:
        for index, info in enumerate(tf):
            if info.isdir():
                yield Skipped(SkipReason.DIRECTORY, name, info.name + "/")
                continue
            skip = classify_member_name(info.name) if info.isfile() else SkipReason.STRAY
            if skip is not None:
                yield Skipped(skip, name, info.name)
                continue
            yield MemberRef(uri, name, info.name, "tar", index, info.offset_data, info.size)


def read_member_lines(
    ref: MemberRef, limits: ReadLimits | None = None
) -> Iterator[Line | ReadProblem | Skipped | MemberOpened]:
    """Decode one member into its lines.

    A member that cannot be opened (a zip member compressed with Deflate64 or another method
    Python cannot decode, an encrypted one, a damaged local header) comes back as one
    :class:`ReadProblem` naming the archive and member; the archive's other members are
    unaffected.

    Args:
        ref: the member, from :func:`list_members`.
        limits: caps on line and member size, and the decoder setting.

    Yields:
        ``(member_name, line_number, line_bytes)`` with 1-based line numbers and no trailing
        newline; :class:`ReadProblem` items for what could not be decoded; for a ``.tar.gz``
        also a :class:`MemberOpened` before each member's lines and :class:`Skipped` items
        for its directory and stray entries.
    """
    limits = limits or ReadLimits()
    try:
        with open_bytes(ref.uri) as f:
            if ref.container == "targz":
                yield from _read_targz(ref, f, limits)
                return
            raw: IO[bytes] | _Bounded
            if ref.container == "zip":
                zf = zipfile.ZipFile(f)
                info = zf.infolist()[ref.index]
                problem = _zip_member_problem(ref, info)
                if problem is not None:
                    yield problem
                    return
                try:
                    raw = zf.open(info)
                except (NotImplementedError, RuntimeError, *READ_ERRORS) as exc:
                    yield _open_problem(ref, exc)
                    return
            elif ref.container == "tar":
                f.seek(ref.offset)
                raw = _Bounded(f, ref.size)
            else:
                raw = f
            yield from decode_member(ref.archive, ref.member, raw, ref.size, limits)
    except READ_ERRORS as exc:
        yield ReadProblem(
            ReadReason.ARCHIVE_UNREADABLE, ref.archive, ref.member, None, _describe(exc)
        )


def _zip_member_problem(ref: MemberRef, info: zipfile.ZipInfo) -> ReadProblem | None:
    """Why a zip member cannot be decoded at all (encrypted, unknown method), or ``None``."""
    if info.flag_bits & 0x1:
        return ReadProblem(
            ReadReason.MEMBER_ENCRYPTED,
            ref.archive,
            ref.member,
            None,
            "encrypted zip member (no password is ever tried)",
        )
    if info.compress_type not in _ZIP_METHODS:
        method = _ZIP_METHOD_NAMES.get(info.compress_type, "unknown")
        return ReadProblem(
            ReadReason.MEMBER_UNSUPPORTED_COMPRESSION,
            ref.archive,
            ref.member,
            None,
            f"zip compression method {info.compress_type} ({method}) is not supported",
        )
    return None


def _open_problem(ref: MemberRef, exc: BaseException) -> ReadProblem:
    """A member zipfile refused to open, by what it raised."""
    if isinstance(exc, NotImplementedError):
        reason = ReadReason.MEMBER_UNSUPPORTED_COMPRESSION
    elif isinstance(exc, RuntimeError):  # zipfile's "password required"
        reason = ReadReason.MEMBER_ENCRYPTED
    else:
        reason = ReadReason.MEMBER_CORRUPT
    return ReadProblem(reason, ref.archive, ref.member, None, _describe(exc))


def _read_targz(
    ref: MemberRef, f: IO[bytes], limits: ReadLimits
) -> Iterator[Line | ReadProblem | Skipped | MemberOpened]:
    with tarfile.open(fileobj=f, mode="r|gz") as tf:
        for info in tf:
            if info.isdir():
                yield Skipped(SkipReason.DIRECTORY, ref.archive, info.name + "/")
                continue
            skip = classify_member_name(info.name) if info.isfile() else SkipReason.STRAY
            member = tf.extractfile(info) if skip is None else None
            if member is None:
                yield Skipped(skip or SkipReason.STRAY, ref.archive, info.name)
                continue
            yield MemberOpened(ref.archive, info.name)
            yield from decode_member(ref.archive, info.name, member, info.size, limits)


class _Bounded(io.RawIOBase):
    """A read-only view of ``size`` bytes of ``f`` from its current position."""

    def __init__(self, f: IO[bytes], size: int) -> None:
        self._f = f
        self._left = size

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        n = self._left if n < 0 else min(n, self._left)
        data = self._f.read(n)
        self._left -= len(data)
        return data


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def iter_lines(
    items: Iterable[Line | ReadProblem | Skipped | MemberOpened],
) -> Iterator[bytes]:
    """Only the line bytes of :func:`read_member_lines` output (for tests and benchmarks)."""
    for item in items:
        if isinstance(item, tuple):
            yield item[2]
