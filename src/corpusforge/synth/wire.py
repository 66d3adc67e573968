"""How Twitter wrote values: turns Python values into the exact strings both APIs sent.

v1.1's ``\\uXXXX`` escapes (``esc``), ``created_at`` in the v1.1 and v2 forms, the HTML
escaping of text fields, the 64-bit scramble behind per-tweet counts and links, and t.co
links (random or derived from a tweet id). Shared by the user pool and the renderers.
"""

from __future__ import annotations

import calendar
import json.encoder
import random
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson


def esc(s: str) -> Any:
    """A v1 string value: ``\\uXXXX``-escaped as Twitter did, as an orjson fragment."""
    return s if s.isascii() else orjson.Fragment(json.encoder.encode_basestring_ascii(s))


def twitter_time(ms: int) -> str:
    """``created_at`` of the instant ``ms`` (epoch milliseconds) as v1.1 writes it."""
    return _twitter_second(ms // 1000)


@lru_cache(maxsize=4096)
def _twitter_second(second: int) -> str:
    """``created_at`` as v1.1 writes it: ``Fri Jan 01 17:29:00 +0000 2021``."""
    t = datetime.fromtimestamp(second, UTC)
    return (
        f"{calendar.day_abbr[t.weekday()]} {calendar.month_abbr[t.month]} "
        f"{t.day:02d} {t:%H:%M:%S} +0000 {t.year}"
    )


def iso_time(ms: int) -> str:
    """``created_at`` of the instant ``ms`` (epoch milliseconds) as v2 writes it."""
    return _iso_second(ms // 1000)


@lru_cache(maxsize=4096)
def _iso_second(second: int) -> str:
    """``created_at`` as v2 writes it: ``2022-03-01T00:00:00.000Z``."""
    return f"{datetime.fromtimestamp(second, UTC):%Y-%m-%dT%H:%M:%S}.000Z"


def mix(x: int) -> int:
    """A cheap 64-bit scramble of ``x``, for per-tweet counts and links."""
    return (x * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF


def escape_html(s: str) -> str:
    """Twitter's escaping of the text fields: only ``&``, ``<`` and ``>``."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_BASE62 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def new_tco(rng: random.Random) -> str:
    """A random t.co link, drawn from ``rng``: for the links a text carries."""
    return "https://t.co/" + "".join(rng.choice(_BASE62) for _ in range(10))


def tco_of(key: int) -> str:
    """A t.co link derived from ``key`` (a tweet id): for the links Twitter adds itself."""
    h, code = mix(key), []
    for _ in range(10):
        h, r = divmod(h, 62)
        code.append(_BASE62[r])
    return "https://t.co/" + "".join(code)
