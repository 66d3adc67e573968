"""One member's compressed bytes -> numbered lines, in bounded memory, whatever the bytes.

:func:`decode_member` reads a member in chunks of ``_CHUNK`` compressed bytes and never holds
more than a few chunks of its output: a line longer than ``max_line_bytes`` is dead-lettered
without ever being held whole, and a member is cut once it has produced ``member_cap``
bytes (:meth:`ReadLimits.member_cap`: ``max_member_bytes``, and ``max_member_ratio`` times
its compressed size once it has produced more than ``RATIO_FLOOR`` bytes), so a
decompression bomb of a few KB stops after a few MB instead of taking the machine.

Two decoders, one output. The stdlib streaming decoder is the reference. For bz2 members
the parallel ``indexed_bzip2`` decoder is tried first (``bz2_threads > 0``); its output is
held (up to ``_SPOOL_MEMORY`` bytes, past which the reference streams the member instead)
and handed out only once the member decoded without a problem. On any problem (a damaged
block, a truncated stream, a bad CRC in the container) that output is thrown away and the
member is decoded again by the reference from the very chunks already read, so the lines kept
before the damage, the reasons and the cut never depend on the decoder setting
(``tests/hostile/test_decoders.py`` compares releases byte for byte).

One module past 500 lines on purpose: both decoders, the replay and the line splitter keep
one contract (the same lines, reasons and cut whatever the decoder), best read in one place.
"""

from __future__ import annotations

import bz2
import enum
import io
import lzma
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from corpusforge.config.flags import FlagError
from corpusforge.config.settings import setting

BZ2_MAGIC = b"BZh"
GZIP_MAGIC = b"\x1f\x8b"
_UNSUPPORTED_MAGICS = {
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"\x5d\x00\x00": "lzma",
    b"PK\x03\x04": "zip",
    b"7z\xbc\xaf\x27\x1c": "7z",
}
_CHUNK = 1 << 20  # compressed bytes per read
_OUT = 4 << 20  # decompressed bytes per piece
_FAST_MAX_COMPRESSED = 64 << 20  # larger members are streamed with the stdlib decoder
_SPOOL_MEMORY = 64 << 20  # decoded bytes the fast path may hold; past them, the reference
RATIO_FLOOR = 8 << 20
"""Decompressed bytes a member may always produce, whatever its compression ratio."""

READ_ERRORS = (
    OSError,
    EOFError,
    ValueError,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
    tarfile.TarError,
)
"""What reading a container or decompressing a member raises on damaged bytes."""

try:  # a faster bz2 decoder; the stdlib one is the fallback and the reference
    import indexed_bzip2 as _indexed_bzip2
except ImportError:  # pragma: no cover
    _indexed_bzip2 = None


class ReadReason(enum.StrEnum):
    """Why an archive, a member or a line could not be read."""

    ARCHIVE_UNREADABLE = "read_archive_unreadable"
    ARCHIVE_NOT_AN_ARCHIVE = "read_archive_not_an_archive"
    MEMBER_BAD_MAGIC = "read_member_bad_magic"
    MEMBER_UNSUPPORTED_COMPRESSION = "read_member_unsupported_compression"
    MEMBER_ENCRYPTED = "read_member_encrypted"
    MEMBER_CORRUPT = "read_member_corrupt"
    MEMBER_TRUNCATED = "read_member_truncated"
    MEMBER_TOO_LARGE = "read_member_too_large"
    MEMBER_RATIO_TOO_HIGH = "read_member_ratio_too_high"
    LINE_TOO_LONG = "read_line_too_long"
    LINE_TRUNCATED = "read_line_truncated"


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """A dead-letter item from the read stage."""

    reason: ReadReason
    archive: str
    member: str | None
    line: int | None
    detail: str
    excerpt: bytes = b""


@dataclass(frozen=True)
class ReadLimits:
    """Caps that protect workers from hostile input.

    Attributes:
        max_line_bytes: a longer line is dead-lettered (``read_line_too_long``) without
            being held whole.
        max_member_bytes: decompressed bytes per member; past it the member stops with
            ``read_member_too_large`` (lines before it are kept).
        bz2_threads: threads of the fast bz2 decoder (``indexed_bzip2``) per member; 0 uses
            the stdlib decoder only. Decoding is the wall of the extract stage, and the
            in-process runner runs one worker, so the default 2 puts a laptop's second core
            to work; on a runner that already runs a worker per core, 1 avoids
            oversubscription. It changes speed, never output.
        max_member_ratio: decompressed over compressed bytes of a member; once a member has
            produced more than ``RATIO_FLOOR`` (8 MiB) it stops at this ratio with
            ``read_member_ratio_too_high`` (lines before it are kept); 0 turns it off.
            Real archive members compress about 10 to 1.
    """

    max_line_bytes: int = setting(
        1 << 20, help="longest line read; a longer one is dead-lettered", unit="bytes"
    )
    max_member_bytes: int = setting(
        4 << 30, help="cap on decompressed bytes per archive member", unit="bytes"
    )
    bz2_threads: int = setting(
        2, help="fast bz2 decoder threads per member (0: stdlib only; 2: both laptop cores)"
    )
    max_member_ratio: float = setting(
        100,
        help="cap on a member's decompressed/compressed bytes past its first 8 MiB "
        "(a decompression bomb is cut, read_member_ratio_too_high); 0: off",
    )

    def __post_init__(self) -> None:
        if self.bz2_threads < 0:
            raise FlagError("bz2_threads", f"must be >= 0, got {self.bz2_threads}")
        if self.max_line_bytes < 1024:
            raise FlagError("max_line_bytes", f"must be at least 1024, got {self.max_line_bytes}")
        if self.max_member_bytes < self.max_line_bytes:
            raise FlagError(
                "max_member_bytes",
                f"must be >= the line cap ({self.max_line_bytes}), got {self.max_member_bytes}",
            )
        if self.max_member_ratio != 0 and self.max_member_ratio < 1:
            raise FlagError(
                "max_member_ratio", f"must be 0 (off) or >= 1, got {self.max_member_ratio}"
            )

    def member_cap(self, compressed_size: int) -> tuple[int, ReadReason]:
        """The decompressed bytes a member of ``compressed_size`` bytes may produce, and the
        reason it is cut with past them."""
        if self.max_member_ratio:
            by_ratio = max(RATIO_FLOOR, int(self.max_member_ratio * compressed_size))
            if by_ratio < self.max_member_bytes:
                return by_ratio, ReadReason.MEMBER_RATIO_TOO_HIGH
        return self.max_member_bytes, ReadReason.MEMBER_TOO_LARGE


Line = tuple[str, int, bytes]
"""``(member_name, line_number, line_bytes)``: a 1-based line number, no trailing newline."""


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


def decode_member(
    archive: str, member: str, raw: Readable, compressed_size: int, limits: ReadLimits
) -> Iterator[Line | ReadProblem]:
    """Decompress one member chunk by chunk and split it into lines, within ``limits``.

    Args:
        archive: the archive's file name, for origins.
        member: the member's name, for origins.
        raw: the member's compressed bytes.
        compressed_size: the member's size in the container, for the ratio cap.
        limits: the caps and the decoder setting.

    Yields:
        Lines, and :class:`ReadProblem` items for what could not be decoded; every line
        decoded before a problem is kept.
    """
    source = _Recorder(raw)
    first, error = source.read_chunk()
    if error is not None:
        yield _problem(ReadReason.MEMBER_CORRUPT, archive, member, _describe(error))
        return
    kind = _sniff(first)
    if kind not in ("bz2", "gz", "plain"):
        if kind is None:
            reason, detail = ReadReason.MEMBER_BAD_MAGIC, "member is neither bz2, gzip nor JSON"
        else:
            reason, detail = ReadReason.MEMBER_UNSUPPORTED_COMPRESSION, f"{kind} compression"
        yield ReadProblem(reason, archive, member, None, detail, first[:64])
        return
    cap, cap_reason = limits.member_cap(compressed_size)
    splitter = _LineSplitter(archive, member, limits)
    if kind == "bz2" and limits.bz2_threads > 0 and _indexed_bzip2 is not None:
        error = source.read_all(_FAST_MAX_COMPRESSED)
        data = b"".join(source.chunks) if error is None and source.complete else b""
        spool = _fast_bz2(data, limits.bz2_threads, cap) if _whole_streams(data) else None
        del data
        if spool is not None:
            for piece in spool:
                yield from splitter.feed(piece)
            if spool.cut:
                splitter.drop_tail()
                yield _cap_problem(cap_reason, cap, archive, member)
            else:
                yield from splitter.finish(truncated=False)
            return
        # damaged, or too big to hold: the reference decodes it from the chunks read so far
    yield from _reference(kind, source.replay(), splitter, cap, cap_reason)


def _reference(
    kind: str, source: _Replay, splitter: _LineSplitter, cap: int, cap_reason: ReadReason
) -> Iterator[Line | ReadProblem]:
    archive, member = splitter.archive, splitter.member
    decompressor = _StreamDecompressor(kind)
    total = 0
    try:
        while chunk := source.read():
            # one byte past the cap tells a member that is cut from one that ends there
            for data in decompressor.feed(chunk, cap + 1 - total):
                if total + len(data) > cap:
                    yield from splitter.feed(data[: cap - total])
                    splitter.drop_tail()
                    yield _cap_problem(cap_reason, cap, archive, member)
                    return
                total += len(data)
                yield from splitter.feed(data)
    except READ_ERRORS as exc:
        yield from splitter.finish(truncated=True)
        yield _problem(ReadReason.MEMBER_CORRUPT, archive, member, _describe(exc))
        return
    if not decompressor.at_stream_end:
        yield from splitter.finish(truncated=True)
        detail = f"{kind} stream ended before its end-of-stream marker"
        yield _problem(ReadReason.MEMBER_TRUNCATED, archive, member, detail)
        return
    yield from splitter.finish(truncated=False)


def _problem(reason: ReadReason, archive: str, member: str, detail: str) -> ReadProblem:
    return ReadProblem(reason, archive, member, None, detail)


def _cap_problem(reason: ReadReason, cap: int, archive: str, member: str) -> ReadProblem:
    ratio = reason is ReadReason.MEMBER_RATIO_TOO_HIGH
    what = "--max-member-ratio" if ratio else "--max-member-bytes"
    return _problem(reason, archive, member, f"cut after {cap} decompressed bytes ({what})")


def _sniff(head: bytes) -> str | None:
    if head.startswith(BZ2_MAGIC):
        return "bz2"
    if head.startswith(GZIP_MAGIC):
        return "gz"
    if head.lstrip()[:1] in (b"{", b"[") or not head.strip():
        return "plain"
    for magic, name in _UNSUPPORTED_MAGICS.items():
        if head.startswith(magic):
            return name
    return None


class _Recorder:
    """Reads ``raw`` in ``_CHUNK`` pieces and keeps them, with the error that ended them,
    so the reference decoder can replay exactly what the fast one saw."""

    def __init__(self, raw: Readable) -> None:
        self.raw = raw
        self.chunks: list[bytes] = []
        self.size = 0
        self.error: BaseException | None = None
        self.complete = False  # the member's end was reached

    def read_chunk(self) -> tuple[bytes, BaseException | None]:
        try:
            chunk = self.raw.read(_CHUNK)
        except READ_ERRORS as exc:
            self.error = exc
            return b"", exc
        if chunk:
            self.chunks.append(chunk)
            self.size += len(chunk)
        else:
            self.complete = True
        return chunk, None

    def read_all(self, limit: int) -> BaseException | None:
        """Read on until the member ends, an error, or more than ``limit`` bytes."""
        while not self.complete and self.error is None and self.size <= limit:
            self.read_chunk()
        return self.error

    def replay(self) -> _Replay:
        return _Replay(self)


class _Replay:
    """The recorded chunks, then the recorded error or the rest of the member."""

    def __init__(self, recorder: _Recorder) -> None:
        self._recorder = recorder
        self._next = 0

    def read(self) -> bytes:
        r = self._recorder
        if self._next < len(r.chunks):
            self._next += 1
            chunk = r.chunks[self._next - 1]
            r.chunks[self._next - 1] = b""  # free it once handed out
            return chunk
        if r.error is not None:
            raise r.error
        if r.complete:
            return b""
        return r.raw.read(_CHUNK)


class _Spool:
    """The fast decoder's output, held until the member is known to be undamaged."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.total = 0
        self.cut = False  # the decoder had more output past the cap

    def add(self, piece: bytes) -> None:
        self.total += len(piece)
        self.parts.append(piece)

    def __iter__(self) -> Iterator[bytes]:
        while self.parts:
            yield self.parts.pop(0)


_STREAM_STARTS = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")  # block, end
_END_MAGIC = 0x177245385090


def _whole_streams(data: bytes) -> bool:
    """Whether ``data`` is bz2 streams end to end, each closed by its end-of-stream marker.

    ``indexed_bzip2`` ignores what follows a stream when it is not another stream, where the
    reference reports it; a member that is not whole streams is left to the reference. A
    stream starts byte-aligned with ``BZh1``..``BZh9`` and a block (or end) magic, and ends
    with the 48-bit end magic, a 32-bit CRC and fewer than 8 bits of padding.
    """
    starts = sorted(
        at
        for magic in _STREAM_STARTS
        for at in _find_all(data, magic)
        if at >= 4 and data[at - 4 : at - 1] == BZ2_MAGIC and 0x31 <= data[at - 1] <= 0x39
    )
    ends = [at - 4 for at in starts[1:]] + [len(data)]
    if not starts or starts[0] != 4:
        return False
    for end in ends:
        tail = int.from_bytes(data[max(0, end - 11) : end], "big")
        if not any((tail >> (32 + pad)) & (2**48 - 1) == _END_MAGIC for pad in range(8)):
            return False
    return True


_BLOCK_MAGIC = 0x314159265359


def _stream_crcs_match(data: bytes, offsets: dict[int, int]) -> bool:
    """Whether each stream's CRC, stored after its end magic, is the combination of its
    blocks' CRCs, as the reference checks and ``indexed_bzip2`` (1.7.0) does not.

    Args:
        data: the member's bz2 streams.
        offsets: ``indexed_bzip2``'s bit offsets of every block and end-of-stream magic.
    """
    combined = 0
    ends = 0
    for bit in sorted(offsets):
        if bit + 80 > 8 * len(data):
            continue  # the offset of the data's end
        window = data[bit // 8 : bit // 8 + 11].ljust(11, b"\0")
        value = int.from_bytes(window, "big") >> (8 - bit % 8)
        magic, crc = value >> 32 & (2**48 - 1), value & 0xFFFFFFFF
        if magic == _BLOCK_MAGIC:
            combined = ((combined << 1 | combined >> 31) & 0xFFFFFFFF) ^ crc
        elif magic == _END_MAGIC:
            if crc != combined:
                return False
            combined = 0
            ends += 1
    return ends > 0


def _find_all(data: bytes, magic: bytes) -> Iterator[int]:
    at = data.find(magic)
    while at >= 0:
        yield at
        at = data.find(magic, at + 1)


def _fast_bz2(data: bytes, threads: int, cap: int) -> _Spool | None:
    """The member decoded by ``indexed_bzip2`` up to ``cap`` bytes, or ``None`` on any problem
    and past ``_SPOOL_MEMORY`` bytes.

    ``indexed_bzip2`` stops at the first damaged block without saying which lines came
    before it, so on a problem the caller decodes again with the reference decoder; a member
    too big to hold (rare: a minute of the stream is 10 to 40 MB) is streamed by it too.
    """
    assert _indexed_bzip2 is not None
    spool = _Spool()
    source = io.BytesIO(data)
    try:
        with _indexed_bzip2.IndexedBzip2File(source, parallelization=threads) as f:
            while chunk := f.read(min(_OUT, cap - spool.total + 1)):
                if spool.total + len(chunk) > cap:
                    spool.add(chunk[: cap - spool.total])
                    spool.cut = True
                    break
                spool.add(chunk)
                if spool.total > _SPOOL_MEMORY:
                    return None
            if not spool.cut and not _stream_crcs_match(data, f.block_offsets()):
                return None
    except Exception:  # any decoder failure: the reference decodes it and says why
        return None
    finally:
        # indexed_bzip2 (1.7.0) never releases the file object it reads from: closing it
        # frees the member's bytes, which would otherwise stay in memory for good (about
        # 0.5 KB per archive line, found by tracemalloc on a 1M-tweet archive).
        source.close()
    return spool


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

    def feed(self, data: bytes, budget: int) -> Iterator[bytes]:
        """Decompress ``data``, yielding pieces of at most ``_OUT`` bytes, and stop once
        ``budget`` bytes are out (a decoder never decodes past the member's cap)."""
        if self._d is None:
            yield data[:budget]
            return
        while budget > 0:
            if self._between_streams:
                if not data:
                    return
                if not data.startswith(self._magic[: len(data)]):
                    raise OSError(f"{len(data)} bytes of unexpected data after a complete stream")
                self._d = self._new()
                self._between_streams = False
            d = self._d
            assert d is not None
            out = d.decompress(data, min(_OUT, budget))
            budget -= len(out)
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

    def feed(self, data: bytes) -> Iterator[Line | ReadProblem]:
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

    def drop_tail(self) -> None:
        """Forget the line in progress: the member was cut, its rest is not read."""
        self.buffer.clear()
        self.discarding = False

    def finish(self, *, truncated: bool) -> Iterator[Line | ReadProblem]:
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
