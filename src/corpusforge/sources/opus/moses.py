"""Moses-style line-aligned bitext -> :class:`RawPair` items.

Two layouts: OPUS's ``{l1}-{l2}.txt.zip`` holding ``{Corpus}.{l1}-{l2}.{l1}`` and
``{Corpus}.{l1}-{l2}.{l2}`` (plus README/LICENSE/ids members, ignored), or two plain
files given together (``tatoeba.deu-eng.deu`` + ``tatoeba.deu-eng.eng``,
``RF-tokenized.en`` + ``RF-tokenized.fr``). Languages come from the last suffix of each
side. Line ``n`` of one side pairs with line ``n`` of the other.

Both sides are counted first (one binary pass over each: 1-3 % of the whole read for plain
files, 8-9 % for gzipped ones, on 1M Tatoeba lines, see
``benchmarks/bench_moses_read.py``). When the counts differ a line was lost or added
somewhere, and every pair from that line on is a pair of two unrelated sentences; where is
unknown, so no pair of the file pair is used: it becomes one ``align_line_count_mismatch``
dead letter naming both sides and their line counts. A side that breaks part-way (a
truncated ``.gz``) is not a count mismatch: the lines before the damage are still aligned,
are kept, and the break is a ``read_unreadable`` dead letter.
"""

from __future__ import annotations

import functools
import posixpath
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from itertools import zip_longest
from typing import IO

from corpusforge.sources.opus.names import (
    infer_dataset,
    is_lang_suffix,
    languages_from_name,
    named_language,
    side_language,
)
from corpusforge.sources.opus.records import (
    DeadLetter,
    Origin,
    RawPair,
    Skipped,
    SkipReason,
    SourceItem,
    SourceReason,
)
from corpusforge.sources.opus.streams import (
    STREAM_ERRORS,
    ZIP_ERRORS,
    LineTooLong,
    count_lines,
    decode_line,
    file_name,
    iter_lines,
    open_decompressed,
)
from corpusforge.sources.uris import open_bytes
from corpusforge.text.langid import normalize_lang

_MEMBER = re.compile(r"^(?P<stem>.+)\.(?P<l1>[^.\-]+)-(?P<l2>[^.\-]+)\.(?P<lang>[^.\-]+)$")


def pair_lines(
    src_lines: Iterable[bytes | LineTooLong],
    trg_lines: Iterable[bytes | LineTooLong],
    *,
    src_lang: str,
    trg_lang: str,
    dataset: str,
    origin_file: str,
    origin_member: str | None = None,
    first_line: int = 1,
) -> Iterator[SourceItem]:
    """Pair two line streams line by line, with ``zip(..., strict=True)`` semantics.

    Args:
        src_lines: raw lines of the first side, without line endings.
        trg_lines: raw lines of the second side.
        src_lang: normalised language of the first side.
        trg_lang: normalised language of the second side.
        dataset: corpus name for the records.
        origin_file: file name for origins.
        origin_member: member name for origins, or ``None``.
        first_line: the line number of the streams' first lines (a byte range of a file
            read apart: :mod:`corpusforge.local.bitext_plan`); a byte-order mark is dropped
            only on line 1.

    Yields:
        A :class:`RawPair` per line; :class:`Skipped` (``align_empty_side``) when a side is
        blank; :class:`DeadLetter` for invalid UTF-8 (``read_decode_error``), for a line
        over the length limit on either side (``read_line_too_long``), for a count
        mismatch at the end (``parse_line_count_mismatch``), or for a stream that breaks
        part-way (``read_unreadable``, after everything before it).
    """
    src_iter, trg_iter = iter(src_lines), iter(trg_lines)
    line_no = first_line - 1
    try:
        for line_no, (a, b) in enumerate(zip_longest(src_iter, trg_iter), start=first_line):
            # the common line costs a few microseconds in all: the Origin of a line is made
            # only for the records that carry it, and decode_line's byte-order mark only on
            # line 1
            if a.__class__ is bytes and b.__class__ is bytes and line_no > 1:
                try:
                    src, trg = a.decode("utf-8").strip(), b.decode("utf-8").strip()
                except UnicodeDecodeError:
                    pass  # dead-lettered below, by the same decode
                else:
                    if src and trg:
                        yield RawPair(
                            src,
                            trg,
                            src_lang,
                            trg_lang,
                            dataset,
                            origin_file,
                            origin_member,
                            line_no,
                        )
                        continue
            origin = Origin(origin_file, origin_member, line_no)
            if a is None or b is None:
                longer, rest = ("first", src_iter) if b is None else ("second", trg_iter)
                extra = 1 + sum(1 for _ in rest)
                yield DeadLetter.of(
                    SourceReason.PARSE_LINE_COUNT_MISMATCH,
                    origin,
                    f"the {longer} side has {extra} more line(s) than the other "
                    f"({line_no - 1} lines paired)",
                    _excerpt(a if a is not None else b),
                    lines=extra,
                )
                break
            if isinstance(a, LineTooLong):
                yield DeadLetter.line_too_long(origin, a.head, a.limit)
                continue
            if isinstance(b, LineTooLong):
                yield DeadLetter.line_too_long(origin, b.head, b.limit)
                continue
            try:
                src, trg = decode_line(a, line_no).strip(), decode_line(b, line_no).strip()
            except UnicodeDecodeError as exc:
                yield DeadLetter.of(SourceReason.READ_DECODE_ERROR, origin, str(exc), a + b"\t" + b)
                continue
            if not src or not trg:
                yield Skipped.of(SkipReason.ALIGN_EMPTY_SIDE, origin)
                continue
            yield RawPair(
                src, trg, src_lang, trg_lang, dataset, origin_file, origin_member, line_no
            )
    except ZIP_ERRORS as exc:
        yield DeadLetter.of(
            SourceReason.READ_UNREADABLE,
            Origin(origin_file, origin_member, line_no + 1),
            f"stream broke after line {line_no}: {exc!r}",
        )


def _excerpt(line: bytes | LineTooLong | None) -> bytes:
    if isinstance(line, LineTooLong):
        return line.head
    return line or b""


def line_count_mismatch(
    open_src: Callable[[], AbstractContextManager[IO[bytes]]],
    open_trg: Callable[[], AbstractContextManager[IO[bytes]]],
    *,
    names: tuple[str, str],
    origin_file: str,
    origin_member: str | None = None,
) -> DeadLetter | None:
    """Count the lines of both sides; a dead letter for the whole file pair when they differ.

    Args:
        open_src: opens the first side (decompressed bytes), as a context manager.
        open_trg: opens the second side.
        names: the two sides' names, for the message.
        origin_file: file name for the origin.
        origin_member: member name for the origin, or ``None``.

    Returns:
        An ``align_line_count_mismatch`` :class:`DeadLetter` naming both sides and counts;
        ``None`` when the counts agree, or when a side cannot be read to its end (the
        read reports that, after the lines before the damage).
    """
    counts = []
    for opener in (open_src, open_trg):
        try:
            with opener() as stream:
                counts.append(count_lines(stream))
        except ZIP_ERRORS:
            return None
    return mismatch_letter(
        (counts[0], counts[1]), names=names, origin_file=origin_file, origin_member=origin_member
    )


def mismatch_letter(
    counts: tuple[int, int],
    *,
    names: tuple[str, str],
    origin_file: str,
    origin_member: str | None = None,
) -> DeadLetter | None:
    """The ``align_line_count_mismatch`` dead letter of two sides of ``counts`` lines;
    ``None`` when they agree.

    Args:
        counts: the two sides' line counts.
        names: the two sides' names, for the message.
        origin_file: file name for the origin.
        origin_member: member name for the origin, or ``None``.
    """
    n_src, n_trg = counts
    if n_src == n_trg:
        return None
    return DeadLetter.of(
        SourceReason.ALIGN_LINE_COUNT_MISMATCH,
        (origin_file, origin_member, None),
        f"{names[0]} has {n_src:,} lines and {names[1]} has {n_trg:,}: the alignment is "
        "broken from some unknown line on, so no pair of these two files is used",
        f"{names[0]} ({n_src} lines) / {names[1]} ({n_trg} lines)",
        lines=max(n_src, n_trg),
    )


def side_lang(uri: str, given: str | None) -> str | None:
    """The name's language when it names a known one, else ``given``, else the name's."""
    named = named_language(uri)
    if named is not None or not given:
        return named or side_language(uri)
    return normalize_lang(given)


def read_moses_files(
    src_uri: str,
    trg_uri: str,
    *,
    src_lang: str | None = None,
    trg_lang: str | None = None,
    dataset: str | None = None,
) -> Iterator[SourceItem]:
    """Read two plain line-aligned files (each may be gzip/bz2/xz compressed).

    Args:
        src_uri: the first side, e.g. ``tatoeba.deu-eng.deu``.
        trg_uri: the second side, e.g. ``tatoeba.deu-eng.eng``.
        src_lang: language of ``src_uri`` when its last suffix names none (``train.src``,
            ``source.txt``); a suffix that names a known language wins.
        trg_lang: language of ``trg_uri``, likewise.
        dataset: corpus name; default: inferred from ``src_uri``'s name.

    Yields:
        See :func:`pair_lines`; origins name ``src_uri``'s file and its line numbers.
    """
    origin_file = file_name(src_uri)
    langs = (side_lang(src_uri, src_lang), side_lang(trg_uri, trg_lang))
    if langs[0] is None or langs[1] is None:
        yield DeadLetter.of(
            SourceReason.PARSE_MISSING_LANG,
            (origin_file, None, None),
            f"no language suffix on {file_name(src_uri)!r} / {file_name(trg_uri)!r}; "
            "pass --src-lang and --trg-lang",
        )
        return
    mismatch = line_count_mismatch(
        lambda: open_decompressed(src_uri),
        lambda: open_decompressed(trg_uri),
        names=(file_name(src_uri), file_name(trg_uri)),
        origin_file=origin_file,
    )
    if mismatch is not None:
        yield mismatch
        return
    try:
        with open_decompressed(src_uri) as src, open_decompressed(trg_uri) as trg:
            yield from pair_lines(
                iter_lines(src),
                iter_lines(trg),
                src_lang=langs[0],
                trg_lang=langs[1],
                dataset=dataset or infer_dataset(src_uri),
                origin_file=origin_file,
            )
    except STREAM_ERRORS as exc:
        yield DeadLetter.of(
            SourceReason.READ_UNREADABLE, (origin_file, None, None), f"cannot open: {exc!r}"
        )


def moses_members(names: Iterable[str]) -> list[tuple[str, str, str, str]]:
    """The line-aligned pairs among a zip's member names.

    Args:
        names: member names, e.g. ``["README", "RF.de-en.de", "RF.de-en.en", "RF.de-en.ids"]``.

    Returns:
        ``(src_member, trg_member, l1, l2)`` for each ``{stem}.{l1}-{l2}`` with both sides,
        ``src_member`` being the ``.{l1}`` one; sorted by member name.
    """
    sides: dict[tuple[str, str, str], dict[str, str]] = {}
    for name in names:
        match = _MEMBER.match(posixpath.basename(name))
        if (
            not match
            or match["lang"] not in (match["l1"], match["l2"])
            or not (is_lang_suffix(match["l1"]) and is_lang_suffix(match["l2"]))
        ):
            continue
        key = (posixpath.join(posixpath.dirname(name), match["stem"]), match["l1"], match["l2"])
        sides.setdefault(key, {})[match["lang"]] = name
    pairs = []
    for (_, l1, l2), found in sorted(sides.items()):
        if l1 in found and l2 in found:
            pairs.append((found[l1], found[l2], l1, l2))
    return pairs


def member_corpus(src_member: str) -> str:
    """The corpus a zip's member pair names: ``RF`` of ``RF.de-en.de``."""
    return posixpath.basename(src_member).rsplit(".", 2)[0]


def read_moses_zip(uri: str, *, dataset: str | None = None) -> Iterator[SourceItem]:
    """Read every ``{Corpus}.{l1}-{l2}.{l1|l2}`` member pair of an OPUS Moses zip.

    Args:
        uri: path or URI of ``{l1}-{l2}.txt.zip`` (any name).
        dataset: corpus name; default: the members' ``{Corpus}`` prefix.

    Yields:
        See :func:`pair_lines`, with the ``src`` member as ``origin_member``;
        ``read_missing_member`` when the zip holds no complete pair, ``read_unreadable``
        when it is not a readable zip.
    """
    origin_file = file_name(uri)
    try:
        with open_bytes(uri) as raw, zipfile.ZipFile(raw) as zf:
            names = zf.namelist()
            pairs = moses_members(names)
            if not pairs:
                yield DeadLetter.of(
                    SourceReason.READ_MISSING_MEMBER,
                    (origin_file, None, None),
                    f"no '{{Corpus}}.l1-l2.l1' + '.l2' members (expected "
                    f"{languages_from_name(uri)}); members: {names[:20]}",
                )
            for src_member, trg_member, l1, l2 in pairs:
                corpus = member_corpus(src_member)
                mismatch = line_count_mismatch(
                    functools.partial(zf.open, src_member),
                    functools.partial(zf.open, trg_member),
                    names=(src_member, trg_member),
                    origin_file=origin_file,
                    origin_member=src_member,
                )
                if mismatch is not None:
                    yield mismatch
                    continue
                with zf.open(src_member) as src, zf.open(trg_member) as trg:
                    yield from pair_lines(
                        iter_lines(src),
                        iter_lines(trg),
                        src_lang=normalize_lang(l1),
                        trg_lang=normalize_lang(l2),
                        dataset=dataset or corpus,
                        origin_file=origin_file,
                        origin_member=src_member,
                    )
    except ZIP_ERRORS as exc:
        yield DeadLetter.of(
            SourceReason.READ_UNREADABLE, (origin_file, None, None), f"cannot read zip: {exc!r}"
        )
