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
decodes one member into ``(line_number, bytes)``. A ``.tar.gz`` has no index that allows
random access, so it is listed as a single reference that :func:`read_member_lines` walks
member by member. Problems never raise: they come back as :class:`ReadProblem` items with a
reason code, and every line decoded before the problem is kept.
"""

from __future__ import annotations

import bz2
import enum
import io
import posixpath
import re
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Protocol

import smart_open

BZ2_MAGIC = b"BZh"
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_CHUNK = 1 << 20
_OUT = 4 << 20
_FAST_MAX_COMPRESSED = 64 << 20  # larger members are streamed with the stdlib decoder

try:  # a faster bz2 decoder; the stdlib one is the fallback and the reference
    import indexed_bzip2 as _indexed_bzip2
except ImportError:  # pragma: no cover
    _indexed_bzip2 = None
_MEMBER_NAME = re.compile(r"\.json(\.bz2|\.gz)?$")


class ReadReason(enum.StrEnum):
    """Why an archive, a member or a line could not be read."""

    ARCHIVE_UNREADABLE = "read_archive_unreadable"
    ARCHIVE_NOT_AN_ARCHIVE = "read_archive_not_an_archive"
    MEMBER_BAD_MAGIC = "read_member_bad_magic"
    MEMBER_CORRUPT = "read_member_corrupt"
    MEMBER_TRUNCATED = "read_member_truncated"
    MEMBER_TOO_LARGE = "read_member_too_large"
    LINE_TOO_LONG = "read_line_too_long"
    LINE_TRUNCATED = "read_line_truncated"


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
class ReadProblem:
    """A dead-letter item from the read stage."""

    reason: ReadReason
    archive: str
    member: str | None
    line: int | None
    detail: str
    excerpt: bytes = b""


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


@dataclass(frozen=True)
class ReadLimits:
    """Caps that protect workers from hostile input.

    Attributes:
        max_line_bytes: a longer line is dead-lettered (``read_line_too_long``).
        max_member_bytes: decompressed bytes per member; past it the member stops with
            ``read_member_too_large`` (lines before it are kept).
        bz2_threads: threads of the fast bz2 decoder (``indexed_bzip2``) per member; 0 uses
            the stdlib decoder only. Decoding is the wall of the extract stage, and the
            in-process runner runs one worker, so the default 2 puts a laptop's second core
            to work; on a runner that already runs a worker per core, 1 avoids
            oversubscription. It changes speed, never output.
    """

    max_line_bytes: int = 1 << 20
    max_member_bytes: int = 4 << 30
    bz2_threads: int = 2

    def __post_init__(self) -> None:
        if self.bz2_threads < 0:
            raise ValueError(f"bz2_threads must be >= 0, got {self.bz2_threads}")
        if self.max_line_bytes < 1024:
            raise ValueError(f"max_line_bytes must be at least 1024, got {self.max_line_bytes}")
        if self.max_member_bytes < self.max_line_bytes:
            raise ValueError(
                f"max_member_bytes ({self.max_member_bytes}) must be >= max_line_bytes "
                f"({self.max_line_bytes})"
            )


def archive_name(uri: str) -> str:
    """The file name part of a path or URI."""
    return posixpath.basename(uri.rstrip("/")) or uri


def open_uri(uri: str) -> IO[bytes]:
    """Open a local path or a ``gs://``, ``s3://``, ``http(s)://`` URI for seekable reading."""
    stream: IO[bytes] = smart_open.open(uri, "rb", compression="disable")
    return stream


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
        with open_uri(uri) as f:
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
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, ValueError) as exc:
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
) -> Iterator[tuple[str, int, bytes] | ReadProblem | Skipped | MemberOpened]:
    """Decode one member into its lines.

    Args:
        ref: the member, from :func:`list_members`.
        limits: caps on line and member size.

    Yields:
        ``(member_name, line_number, line_bytes)`` with 1-based line numbers and no trailing
        newline; :class:`ReadProblem` items for what could not be decoded; for a ``.tar.gz``
        also a :class:`MemberOpened` before each member's lines and :class:`Skipped` items
        for its directory and stray entries.
    """
    limits = limits or ReadLimits()
    try:
        with open_uri(ref.uri) as f:
            if ref.container == "targz":
                yield from _read_targz(ref, f, limits)
                return
            raw: IO[bytes] | _Bounded
            if ref.container == "zip":
                zf = zipfile.ZipFile(f)
                raw = zf.open(zf.infolist()[ref.index])
            elif ref.container == "tar":
                f.seek(ref.offset)
                raw = _Bounded(f, ref.size)
            else:
                raw = f
            yield from _decode_member(ref.archive, ref.member, raw, limits)
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, ValueError) as exc:
        yield ReadProblem(
            ReadReason.ARCHIVE_UNREADABLE, ref.archive, ref.member, None, _describe(exc)
        )


def _read_targz(
    ref: MemberRef, f: IO[bytes], limits: ReadLimits
) -> Iterator[tuple[str, int, bytes] | ReadProblem | Skipped | MemberOpened]:
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
            yield from _decode_member(ref.archive, info.name, member, limits)


class _Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


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


def _sniff(head: bytes) -> str | None:
    if head.startswith(BZ2_MAGIC):
        return "bz2"
    if head.startswith(GZIP_MAGIC):
        return "gz"
    if head.lstrip()[:1] in (b"{", b"[") or not head.strip():
        return "plain"
    return None


def _decode_member(
    archive: str, member: str, raw: _Readable, limits: ReadLimits
) -> Iterator[tuple[str, int, bytes] | ReadProblem]:
    """Decompress ``raw`` chunk by chunk and split it into lines, within ``limits``."""
    try:
        first = raw.read(_CHUNK)
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        yield ReadProblem(ReadReason.MEMBER_CORRUPT, archive, member, None, _describe(exc))
        return
    kind = _sniff(first)
    if kind is None:
        yield ReadProblem(
            ReadReason.MEMBER_BAD_MAGIC,
            archive,
            member,
            None,
            "member is neither bz2, gzip nor JSON text",
            first[:64],
        )
        return
    splitter = _LineSplitter(archive, member, limits)
    if kind == "bz2" and limits.bz2_threads > 0 and _indexed_bzip2 is not None:
        data = first + raw.read(_FAST_MAX_COMPRESSED + 1 - len(first))
        decoded = _fast_bz2(data, limits) if len(data) <= _FAST_MAX_COMPRESSED else None
        if decoded is not None:
            yield from splitter.feed(decoded)
            yield from splitter.finish(truncated=False)
            return
        # damaged, too large or too big to hold: the streaming decoder reports it exactly
        raw = _Chain(io.BytesIO(data), raw)
        first = raw.read(_CHUNK)
    decompressor = _StreamDecompressor(kind)
    total = 0
    chunk = first
    try:
        while chunk:
            for data in decompressor.feed(chunk):
                total += len(data)
                if total > limits.max_member_bytes:
                    yield ReadProblem(
                        ReadReason.MEMBER_TOO_LARGE,
                        archive,
                        member,
                        None,
                        f"more than {limits.max_member_bytes} decompressed bytes",
                    )
                    return
                yield from splitter.feed(data)
            chunk = raw.read(_CHUNK)
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        yield from splitter.finish(truncated=True)
        yield ReadProblem(ReadReason.MEMBER_CORRUPT, archive, member, None, _describe(exc))
        return
    if not decompressor.at_stream_end:
        yield from splitter.finish(truncated=True)
        yield ReadProblem(
            ReadReason.MEMBER_TRUNCATED,
            archive,
            member,
            None,
            f"{kind} stream ended before its end-of-stream marker",
        )
        return
    yield from splitter.finish(truncated=False)


def _fast_bz2(data: bytes, limits: ReadLimits) -> bytes | None:
    """The whole member decoded by ``indexed_bzip2``, or ``None`` on any problem.

    ``indexed_bzip2`` stops at the first damaged block without handing out what came
    before it, so on damage (or past the size cap) the caller decodes again with the stdlib
    streaming decoder, which keeps every line before the damage.
    """
    assert _indexed_bzip2 is not None
    parts: list[bytes] = []
    total = 0
    source = io.BytesIO(data)
    try:
        with _indexed_bzip2.IndexedBzip2File(source, parallelization=limits.bz2_threads) as f:
            while chunk := f.read(_OUT):
                total += len(chunk)
                if total > limits.max_member_bytes:
                    return None
                parts.append(chunk)
    except Exception:  # any decoder failure falls back to the stdlib decoder
        return None
    finally:
        # indexed_bzip2 (1.7.0) never releases the file object it reads from: closing it
        # frees the member's bytes, which would otherwise stay in memory for good (about
        # 0.5 KB per archive line, found by tracemalloc on a 1M-tweet archive).
        source.close()
    return b"".join(parts)


class _Chain(io.RawIOBase):
    """Read ``a`` then ``b``."""

    def __init__(self, a: _Readable, b: _Readable) -> None:
        self._parts = [a, b]

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        while self._parts:
            data = self._parts[0].read(n)
            if data:
                return data
            self._parts.pop(0)
        return b""


class _StreamDecompressor:
    """Decompress bz2 (multi-stream), gzip (multi-member) or plain bytes incrementally."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._magic = BZ2_MAGIC if kind == "bz2" else GZIP_MAGIC
        self._d: bz2.BZ2Decompressor | zlib._Decompress | None = self._new()
        self._between_streams = False

    def _new(self) -> bz2.BZ2Decompressor | zlib._Decompress | None:
        if self.kind == "bz2":
            return bz2.BZ2Decompressor()
        if self.kind == "gz":
            return zlib.decompressobj(wbits=31)
        return None

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decompress ``data``, yielding output in pieces of at most ``_OUT`` bytes.

        Bounded pieces keep a decompression bomb from materialising in memory before the
        caller's size cap can stop it.
        """
        if self._d is None:
            yield data
            return
        while True:
            if self._between_streams:
                if not data:
                    return
                if not data.startswith(self._magic[: len(data)]):
                    raise OSError(f"{len(data)} bytes of unexpected data after a complete stream")
                self._d = self._new()
                self._between_streams = False
            d = self._d
            assert d is not None
            out = d.decompress(data, _OUT)
            if isinstance(d, bz2.BZ2Decompressor):
                data = b""
                more = not d.needs_input
            else:
                data = d.unconsumed_tail
                more = bool(data) or len(out) == _OUT
            if out:
                yield out
            if d.eof:
                data = d.unused_data
                self._between_streams = True
                continue
            if not more:
                return

    @property
    def at_stream_end(self) -> bool:
        """True when the input so far ends exactly after a complete stream."""
        return self._d is None or self._between_streams


class _LineSplitter:
    """Split decompressed bytes into numbered lines, dead-lettering over-long ones."""

    def __init__(self, archive: str, member: str, limits: ReadLimits) -> None:
        self.archive = archive
        self.member = member
        self.max_line = limits.max_line_bytes
        self.buffer = bytearray()
        self.line_no = 0
        self.discarding = False  # inside an over-long line, waiting for its newline

    def feed(self, data: bytes) -> Iterator[tuple[str, int, bytes] | ReadProblem]:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            piece = data[start:end]
            start = end + 1
            if self.discarding:
                self.discarding = False
                self.buffer.clear()
                continue
            if self.buffer:
                self.buffer += piece
                line = bytes(self.buffer)
                self.buffer.clear()
            else:
                line = piece
            self.line_no += 1
            if len(line) > self.max_line:
                yield self._too_long(line)
            else:
                yield self.member, self.line_no, line
        if not self.discarding:
            self.buffer += data[start:]
            if len(self.buffer) > self.max_line:
                self.line_no += 1
                yield self._too_long(bytes(self.buffer))
                self.buffer.clear()
                self.discarding = True

    def _too_long(self, line: bytes) -> ReadProblem:
        return ReadProblem(
            ReadReason.LINE_TOO_LONG,
            self.archive,
            self.member,
            self.line_no,
            f"line longer than {self.max_line} bytes",
            line[:200],
        )

    def finish(self, *, truncated: bool) -> Iterator[tuple[str, int, bytes] | ReadProblem]:
        if self.discarding or not self.buffer:
            return
        tail = bytes(self.buffer)
        self.buffer.clear()
        self.line_no += 1
        if truncated:
            yield ReadProblem(
                ReadReason.LINE_TRUNCATED,
                self.archive,
                self.member,
                self.line_no,
                "last line cut off by a damaged member",
                tail[:200],
            )
        else:
            yield self.member, self.line_no, tail


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def iter_lines(
    items: Iterable[tuple[str, int, bytes] | ReadProblem | Skipped | MemberOpened],
) -> Iterator[bytes]:
    """Only the line bytes of :func:`read_member_lines` output (for tests and benchmarks)."""
    for item in items:
        if isinstance(item, tuple):
            yield item[2]
