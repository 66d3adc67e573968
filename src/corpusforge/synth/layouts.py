"""The archive layouts: their names, member paths and clock, and one archive's arguments.

Turns a layout and an archive-local minute into the member path the real archives use
(``member_name``) and a layout and a day into the archive.org file name
(``real_archive_name``); holds the conventions the rest of the writer shares (member
paths ``PATH_UTC_OFFSET`` behind UTC, the snowflake epoch, the pbzip2 stream size) and
``SynthConfig``, the validated arguments of one archive.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

LAYOUTS: tuple[str, ...] = ("zip-2020", "tar-2019", "tar-2022", "tar-2013", "tar-gz")
"""Archive layouts ``write_synthetic_archive`` can write."""

APIS: tuple[str, ...] = ("v1", "v2")
"""Line formats: Twitter API v1.1 statuses or API v2 ``{"data", "includes"}`` lines."""

PATH_UTC_OFFSET = timedelta(hours=-7)
"""Member paths are in archive-local time: UTC + this offset (``22/03`` holds 05:03Z)."""

TWEPOCH_MS = 1288834974657
"""Twitter's snowflake epoch: ``id >> 22`` is milliseconds since this instant."""

BZ2_STREAM_BYTES = 900_000
"""Uncompressed bytes per bz2 stream in pbzip2-style members (pbzip2's default block)."""

DEFAULT_BZ2_LEVEL = 9
"""bz2 level: 9 (900 kB blocks) as in the real archives; level 1 is ~30% faster."""

_DEFAULT_START: dict[str, datetime] = {
    "zip-2020": datetime(2021, 1, 1),
    "tar-2019": datetime(2019, 1, 1),
    "tar-gz": datetime(2019, 1, 1),
    "tar-2013": datetime(2013, 1, 1),
    "tar-2022": datetime(2022, 3, 1),
}
EARLIEST_START = datetime(2011, 1, 1)  # snowflake ids (2010-11); the grabs began 2011-09


def member_name(layout: str, minute_time: datetime) -> str:
    """The member path of the minute that starts at ``minute_time`` (archive-local time).

    Args:
        layout: one of ``LAYOUTS``.
        minute_time: the member's minute in archive-local time (seconds are ignored).

    Returns:
        e.g. ``2021/01/01/10/29.json.bz2`` (zip-2020, tar-2019, tar-gz),
        ``01/01/10/29.json.bz2`` (tar-2013) or ``20220301/20220301102900.json.gz``
        (tar-2022).
    """
    check_layout(layout)
    t = minute_time
    if layout == "tar-2013":
        return f"{t:%m/%d/%H/%M}.json.bz2"
    if layout == "tar-2022":
        return f"{t:%Y%m%d}/{t:%Y%m%d%H%M}00.json.gz"
    return f"{t:%Y/%m/%d/%H/%M}.json.bz2"


def real_archive_name(layout: str, day: date) -> str:
    """The archive.org file name of the real archive that holds ``day``.

    Args:
        layout: one of ``LAYOUTS``.
        day: the archive-local day (for tar-2013, any day of the month).

    Returns:
        e.g. ``twitter-stream-2021-01-01.zip`` or ``archiveteam-twitter-stream-2013-01.tar``.
    """
    check_layout(layout)
    return {
        "zip-2020": f"twitter-stream-{day:%Y-%m-%d}.zip",
        "tar-2019": f"twitter_stream_{day:%Y_%m_%d}.tar",
        "tar-gz": f"twitter_stream_{day:%Y_%m_%d}.tar.gz",
        "tar-2013": f"archiveteam-twitter-stream-{day:%Y-%m}.tar",
        "tar-2022": f"twitter-stream-{day:%Y%m%d}.tar",
    }[layout]


def default_api(layout: str) -> str:
    """``v2`` for tar-2022 (the 2022-03 onward archives), ``v1`` for the other layouts."""
    check_layout(layout)
    return "v2" if layout == "tar-2022" else "v1"


def default_start(layout: str) -> datetime:
    """A realistic first minute (archive-local) for ``layout``, e.g. 2021-01-01 00:00."""
    check_layout(layout)
    return _DEFAULT_START[layout]


def check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {layout!r}")


@dataclass(frozen=True)
class SynthConfig:
    """The validated arguments of one archive (hashable: it keys per-process caches)."""

    tweets: int
    layout: str
    api: str
    seed: int
    start: datetime  # archive-local
    n_users: int
    bz2_level: int
