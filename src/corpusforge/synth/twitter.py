"""Synthetic Archive Team "twitterstream" archives with an exact ground truth.

Turns ``(tweets, layout, api, seed, start)`` into one archive file laid out like the real
ones on archive.org, plus ``FILE.truth.json``: the counts and pair edges that a correct
reader must find in it. Pure Python (stdlib, orjson); no Beam.

    corpusforge synth twitter --out demo.zip --tweets 20000 --layout zip-2020

Layouts (the ``--out`` name is used as given; the real archive.org names are in
``real_archive_name``):

=========  ======================================  ==========================================
layout     real archive name                        members
=========  ======================================  ==========================================
zip-2020   ``twitter-stream-YYYY-MM-DD.zip``        ``YYYY/MM/DD/HH/MM.json.bz2`` + dir entries
tar-2019   ``twitter_stream_YYYY_MM_DD.tar``        ``YYYY/MM/DD/HH/MM.json.bz2``
tar-2013   ``archiveteam-twitter-stream-YYYY-MM.tar``  ``MM/DD/HH/MM.json.bz2`` (no year)
tar-2022   ``twitter-stream-YYYYMMDD.tar``          ``YYYYMMDD/YYYYMMDDHHMMSS.json.gz`` (API v2)
tar-gz     ``twitter_stream_YYYY_MM_DD.tar.gz``     the tar-2019 layout, gzipped as a whole
=========  ======================================  ==========================================

What is imitated, checked against ``../shared/realdata/twitter-archive-2021-01-01``:

* One member per minute, a few thousand lines each (the 2021 sample has ~3,200); member
  paths are archive-local time, ``PATH_UTC_OFFSET`` (UTC-7) behind ``timestamp_ms``.
* bz2 members as pbzip2 writes them: independent 900,000-byte streams cut mid-line (every
  third member is one plain stream instead, as ``bzip2`` writes; members under 900 kB are
  still cut in two so that multi-stream handling is exercised at any size). Zip members
  are deflated, as in the real zip; tar members carry fixed mtimes, uid 0, GNU format.
* API v1.1 lines as Twitter serialised them: ASCII only (``\\uXXXX`` with surrogate pairs),
  ``\\/`` for ``/``, ``\\u003c``/``\\u003e`` in ``source``, CRLF line ends, full user
  objects, ``entities``, ``extended_tweet`` for texts over 140 characters, retweets with
  ``retweeted_status`` (retweets of quotes carry both objects), quotes with the full
  ``quoted_status``, photos (``entities.media`` and ``extended_entities``), ``{"delete":
  ...}`` notices (some naming tweets earlier in the archive), a few ``{"limit": ...}``
  notices and blank keep-alive lines. Tweet lines average ~4.4 kB (the sample: 5.2 kB).
* API v2 lines (``{"data", "includes", "matching_rules"}``) as UTF-8 with LF line ends;
  referenced tweets in full under ``includes.tweets``, photos as ``attachments`` and
  ``includes.media``; no delete notices (the v2 sampled stream has none); a few
  ``{"errors": ...}`` disconnect notices and keep-alives.
* Snowflake ids that encode the line's ``timestamp_ms``; a heavy-tailed (Zipf) conversation
  graph with replies to replies, replies whose parent is not in the archive, and quotes.
  Each conversation has a topic whose vocabulary most of its texts draw from, so texts
  of one conversation are closer to each other than to other conversations.

Every choice is a function of ``seed`` (and the tweet id); archives are byte-identical
for the same arguments, whatever the number of worker processes. Members are rendered
and compressed in parallel processes; bz2 takes ~85% of the time (~0.6 ms of CPU per
line at level 9, about a third less at level 1).

The writer is a package of one module per step, in the order data flows: ``layouts``
(names, paths, clock), ``languages`` and ``users`` (the vocabulary and the user pool),
``plan`` (every line and the ground truth of ``truth``), ``compose`` (texts and entities),
``render`` and ``wire`` (lines as Twitter wrote them, compressed members) and ``sinks``
(zip and tar). This module holds the entry point, ``write_synthetic_archive``, and the
names callers use.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Generator, Iterator
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path

from corpusforge.synth.layouts import (
    APIS,
    BZ2_STREAM_BYTES,
    DEFAULT_BZ2_LEVEL,
    EARLIEST_START,
    LAYOUTS,
    PATH_UTC_OFFSET,
    TWEPOCH_MS,
    SynthConfig,
    check_layout,
    default_api,
    default_start,
    member_name,
    real_archive_name,
)
from corpusforge.synth.plan import MemberJob, Planner
from corpusforge.synth.render import render_member
from corpusforge.synth.sinks import TarSink, ZipSink
from corpusforge.synth.truth import SynthTruth, truth_path
from corpusforge.synth.users import users_of

__all__ = [
    "APIS",
    "BZ2_STREAM_BYTES",
    "DEFAULT_BZ2_LEVEL",
    "LAYOUTS",
    "PATH_UTC_OFFSET",
    "TWEPOCH_MS",
    "SynthTruth",
    "default_api",
    "default_start",
    "member_name",
    "real_archive_name",
    "truth_path",
    "write_synthetic_archive",
]


_N_USERS_MAX = 20_000


def _default_workers(members: int, tweets: int) -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return 1 if tweets < 5_000 else max(1, min(cpus, members))


def write_synthetic_archive(
    out: Path,
    *,
    tweets: int,
    layout: str = "zip-2020",
    api: str | None = None,
    seed: int = 0,
    start: datetime | None = None,
    truth: bool = True,
    workers: int | None = None,
    bz2_level: int = DEFAULT_BZ2_LEVEL,
) -> SynthTruth:
    """Write a synthetic twitterstream archive to ``out`` and return its ground truth.

    Args:
        out: the archive file to write (any name; see ``real_archive_name`` for the
            real ones). Its parent folder is created if missing.
        tweets: tweet lines to write (retweets included); delete notices (v1 only),
            ``limit``/``errors`` notices and blank keep-alives come on top.
        layout: one of ``LAYOUTS``.
        api: ``v1`` or ``v2``; ``None`` means ``default_api(layout)`` (v2 for tar-2022,
            which holds only v2 lines; v2 is allowed in every other layout).
        seed: every choice derives from it; same arguments, byte-identical archive.
        start: archive-local time (``PATH_UTC_OFFSET`` behind UTC) of the first member;
            ``None`` means ``default_start(layout)``. Timezone-aware values are converted.
            Members spread over the rest of that day (tar-2013: month).
        truth: also write the truth as JSON to ``truth_path(out)``, in place before the
            archive is; without it, an earlier run's truth there is removed.
        workers: processes that render and compress members; ``None`` picks one below
            5,000 tweets, else one per available core. The output does not depend on it.
        bz2_level: bz2 compression level 1-9 (9: 900 kB blocks, like the real archives).

    Returns:
        The ``SynthTruth`` of the archive.

    Raises:
        ValueError: a bad layout, api, tweet count, bz2 level or worker count, or v1
            asked for the v2-only tar-2022 layout.
    """
    check_layout(layout)
    api = default_api(layout) if api is None else api
    if api not in APIS:
        raise ValueError(f"api must be one of {', '.join(APIS)}; got {api!r}")
    if layout == "tar-2022" and api != "v2":
        raise ValueError(f"layout tar-2022 holds API v2 lines only; got api={api!r}")
    if isinstance(tweets, bool) or not isinstance(tweets, int) or tweets < 1:
        raise ValueError(f"tweets must be a positive integer; got {tweets!r}")
    if not 1 <= bz2_level <= 9:
        raise ValueError(f"bz2_level must be in 1..9; got {bz2_level!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1; got {workers!r}")
    if start is None:
        start = default_start(layout)
    elif start.tzinfo is not None:
        start = (start.astimezone(UTC) + PATH_UTC_OFFSET).replace(tzinfo=None)
    start = start.replace(second=0, microsecond=0)
    if start < EARLIEST_START:
        raise ValueError(f"start must be on or after {EARLIEST_START:%Y-%m-%d}; got {start}")

    n_users = max(50, min(_N_USERS_MAX, tweets // 3))
    cfg = SynthConfig(tweets, layout, api, seed, start, n_users, bz2_level)
    planner = Planner(cfg, users_of(cfg))
    procs = workers or _default_workers(len(planner.layout_members()[0]), tweets)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    multistream: list[str] = []
    raw_total = 0
    # Written aside and renamed into place, so that an interrupted run never leaves a
    # truncated archive under the name (a bench reuses an archive it finds there), nor an
    # archive beside a truth that is not its own: the truth goes in first (the earlier
    # archive, whose truth it replaces, out before it), the archive last.
    partial = out.with_name(f".{out.name}.partial")
    truth_partial = out.with_name(f".{truth_path(out).name}.partial")
    try:
        sink = ZipSink(partial) if layout == "zip-2020" else TarSink(partial, gz=layout == "tar-gz")
        rendered = _rendered(cfg, planner.members(), procs)
        with sink, contextlib.closing(rendered):  # closed: its workers stopped, on any exit
            for job, (raw_len, payload, streams) in rendered:
                sink.add(job.name, job.minute, payload)
                names.append(job.name)
                if streams > 1:
                    multistream.append(job.name)
                raw_total += raw_len
        result = planner.truth(out.name, names, multistream, raw_total)
        out.unlink(missing_ok=True)
        if truth:
            truth_partial.write_bytes(result.to_json())
            os.replace(truth_partial, truth_path(out))
        else:  # an earlier run's truth would describe another archive
            truth_path(out).unlink(missing_ok=True)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
        truth_partial.unlink(missing_ok=True)
    return result


def _rendered(
    cfg: SynthConfig, jobs: Iterator[MemberJob], procs: int
) -> Generator[tuple[MemberJob, tuple[int, bytes, int]], None, None]:
    """Render and compress members, in ``procs`` processes, yielding them in order.

    The processes are the local engine's (:func:`corpusforge.local.workers.worker_pool`):
    Ctrl-C is left to this process, which stops them on its way out, and a worker that dies
    ends the run in one line. At most ``2 * procs`` members are in flight.
    """
    if procs == 1:
        for job in jobs:
            yield job, render_member((cfg, job))
        return
    from corpusforge.local.workers import worker_pool

    with worker_pool("a synthetic archive worker", procs) as pool:
        flight: deque[tuple[MemberJob, Future[tuple[int, bytes, int]]]] = deque()
        for job in jobs:
            flight.append((job, pool.submit(render_member, (cfg, job))))
            if len(flight) == 2 * procs:
                first, future = flight.popleft()
                yield first, pool.result(future)
        while flight:
            first, future = flight.popleft()
            yield first, pool.result(future)
