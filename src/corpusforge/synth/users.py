"""The user pool: turns ``(seed, index)`` into one user of a synthetic archive.

Each user has a ``lang``, a handle, a name and profile, and an account created before the
archive starts (sequential ids before 2016, snowflake ids after); its v1.1 object is
serialised once and embedded as it is, its v2 object is kept as a dict.
"""

from __future__ import annotations

import bisect
import random
from datetime import UTC
from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from corpusforge.keys import seeded_hash
from corpusforge.synth.languages import EMOJI, LANG_CODES, LANG_CUM, LANGS, lexicon
from corpusforge.synth.layouts import PATH_UTC_OFFSET, TWEPOCH_MS, SynthConfig
from corpusforge.synth.wire import esc, iso_time, twitter_time


class User(NamedTuple):
    """One user of the pool, with its objects as both APIs embed them."""

    id: int
    screen_name: str
    name: str
    lang: str
    v1: bytes  # the v1.1 user object, non-ASCII escaped, "/" not yet escaped
    v2: dict[str, Any]  # the v2 user object


_FIRST = (
    "Anna", "Ben", "Chloe", "Dan", "Emma", "Finn", "Grace", "Hugo", "Isla", "Jack", "Kate",
    "Liam", "Maya", "Noah", "Olivia", "Sam",
)  # fmt: skip
_LAST = (
    "Smith", "Jones", "Brown", "Taylor", "Wilson", "Evans", "Thomas", "Johnson", "Walker",
    "White", "Green", "Hall",
)  # fmt: skip
_COLOURS = ("1DA1F2", "C0DEED", "F5F8FA", "000000", "DDEEF6", "333333", "FF691F", "89C9FA")


_EARLIEST_USER_MS = 1_167_609_600_000  # 2007-01-01: accounts before that are rare
_SNOWFLAKE_USERS_MS = 1_451_606_400_000  # 2016-01-01: later accounts get snowflake ids


def _make_user(seed: int, index: int, latest_ms: int) -> User:
    """User ``index`` of the pool: its v1.1 object (pre-serialised) and its v2 object.

    Args:
        seed: the archive seed.
        index: position in the pool.
        latest_ms: the newest account creation time allowed (before the archive starts).
    """
    rng = random.Random(seeded_hash(seed, "synth-user", index))
    lang = LANG_CODES[bisect.bisect_right(LANG_CUM, rng.randrange(LANG_CUM[-1]))]
    spec = LANGS[lang]
    handle = rng.choice(lexicon("en")) + rng.choice(("", "_", "x", "_the_", ""))
    screen_name = handle[: 15 - len(str(index))] + str(index)  # unique, [A-Za-z0-9_]{1,15}
    if lang == "en":
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    else:
        name = " ".join(spec.word(rng).capitalize() for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.2:
        name += rng.choice(EMOJI)
    desc_words = [rng.choice(lexicon(lang)) for _ in range(rng.randint(4, 14))]
    sep = " " if spec.spaced else ""
    description = None if rng.random() < 0.2 else sep.join(desc_words) + " " + rng.choice(EMOJI)
    location = None if rng.random() < 0.4 else rng.choice(spec.locations)
    created_ms = _EARLIEST_USER_MS + rng.randrange(max(1, latest_ms - _EARLIEST_USER_MS))
    if created_ms >= _SNOWFLAKE_USERS_MS:
        uid = ((created_ms - TWEPOCH_MS) << 22) | rng.getrandbits(22)
    else:  # sequential ids, roughly 1e6 in 2007 to 4.3e9 in 2016
        share = (created_ms - _EARLIEST_USER_MS) / (_SNOWFLAKE_USERS_MS - _EARLIEST_USER_MS)
        uid = 10**6 + int(share * 4.29e9) + rng.randrange(10**6)
    followers, friends = int(rng.paretovariate(0.9) * 40), rng.randrange(5, 3000)
    statuses, favourites = rng.randrange(10, 90_000), rng.randrange(0, 150_000)
    listed = followers // 150
    image = f"http://pbs.twimg.com/profile_images/{rng.getrandbits(60)}/{rng.getrandbits(30):x}"
    link, fill = rng.choice(_COLOURS), rng.choice(_COLOURS)
    default = rng.random() < 0.5
    v1 = {
        "id": uid,
        "id_str": str(uid),
        "name": esc(name),
        "screen_name": screen_name,
        "location": None if location is None else esc(location),
        "url": None,
        "description": None if description is None else esc(description),
        "translator_type": "none",
        "protected": False,
        "verified": followers > 50_000,
        "followers_count": followers,
        "friends_count": friends,
        "listed_count": listed,
        "favourites_count": favourites,
        "statuses_count": statuses,
        "created_at": twitter_time(created_ms),
        "utc_offset": None,
        "time_zone": None,
        "geo_enabled": rng.random() < 0.3,
        "lang": None,
        "contributors_enabled": False,
        "is_translator": False,
        "profile_background_color": fill,
        "profile_background_image_url": "http://abs.twimg.com/images/themes/theme1/bg.png",
        "profile_background_image_url_https": "https://abs.twimg.com/images/themes/theme1/bg.png",
        "profile_background_tile": False,
        "profile_link_color": link,
        "profile_sidebar_border_color": "C0DEED",
        "profile_sidebar_fill_color": "DDEEF6",
        "profile_text_color": "333333",
        "profile_use_background_image": True,
        "profile_image_url": image + "_normal.jpg",
        "profile_image_url_https": image.replace("http:", "https:") + "_normal.jpg",
        "profile_banner_url": f"https://pbs.twimg.com/profile_banners/{uid}/{created_ms // 1000}",
        "default_profile": default,
        "default_profile_image": False,
        "following": None,
        "follow_request_sent": None,
        "notifications": None,
    }
    v2 = {
        "created_at": iso_time(created_ms),
        "description": description or "",
        "id": str(uid),
        "location": location,
        "name": name,
        "profile_image_url": image.replace("http:", "https:") + "_normal.jpg",
        "protected": False,
        "public_metrics": {
            "followers_count": followers,
            "following_count": friends,
            "tweet_count": statuses,
            "listed_count": listed,
        },
        "url": "",
        "username": screen_name,
        "verified": followers > 50_000,
    }
    if location is None:
        del v2["location"]
    return User(uid, screen_name, name, lang, orjson.dumps(v1), v2)


@lru_cache(maxsize=2)
def _user_pool(seed: int, n_users: int, latest_ms: int) -> tuple[User, ...]:
    return tuple(_make_user(seed, i, latest_ms) for i in range(n_users))


def users_of(cfg: SynthConfig) -> tuple[User, ...]:
    """The user pool of an archive: accounts created before its first day."""
    first_ms = int((cfg.start - PATH_UTC_OFFSET).replace(tzinfo=UTC).timestamp() * 1000)
    return _user_pool(cfg.seed, cfg.n_users, first_ms - 86_400_000)
