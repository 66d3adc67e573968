"""Rendering: turns the planned lines of one member into its compressed bytes.

``render_member`` runs in the worker processes: each line becomes an API v1.1 status (as
Twitter serialised it: ASCII only, ``\\/``, CRLF) or an API v2 ``{"data", "includes"}``
line, and the member is compressed as the real archives were (bz2 in independent streams
as pbzip2 writes them, or one stream as ``bzip2``; gzip for tar-2022).
"""

from __future__ import annotations

import bz2
import gzip
import math
from collections.abc import Sequence
from typing import Any

import orjson

from corpusforge.keys import seeded_hash
from corpusforge.synth.compose import ComposedText, Url, compose, find_entities, shown_end
from corpusforge.synth.layouts import BZ2_STREAM_BYTES, SynthConfig
from corpusforge.synth.plan import MemberJob, PlannedLine, PlannedTweet
from corpusforge.synth.users import users_of
from corpusforge.synth.wire import esc, escape_html, iso_time, mix, tco_of, twitter_time

_SOURCES = (
    ("http://twitter.com/download/iphone", "Twitter for iPhone"),
    ("http://twitter.com/download/android", "Twitter for Android"),
    ("https://mobile.twitter.com", "Twitter Web App"),
    ("http://twitter.com/#!/download/ipad", "Twitter for iPad"),
    ("https://about.twitter.com/products/tweetdeck", "TweetDeck"),
    ("https://buffer.com", "Buffer"),
)


_PHOTO_SIZES = {
    "thumb": {"w": 150, "h": 150, "resize": "crop"},
    "small": {"w": 680, "h": 510, "resize": "fit"},
    "medium": {"w": 1200, "h": 900, "resize": "fit"},
    "large": {"w": 2048, "h": 1536, "resize": "fit"},
}


class _Renderer:
    """Turns planned lines into bytes; one per worker process and archive."""

    def __init__(self, cfg: SynthConfig) -> None:
        seed = cfg.seed
        self.seed, self.api = seed, cfg.api
        self.salt = seeded_hash(seed, "synth-text")
        self.users = users_of(cfg)
        self.texts: dict[int, ComposedText] = {}
        self.embedded: dict[tuple[int, bool], bytes] = {}
        self.v2_cache: dict[int, dict[str, Any]] = {}
        self.rule_id = str(1_400_000_000_000_000_000 + seeded_hash(seed, "rule") % 10**17)

    def text(self, t: PlannedTweet) -> ComposedText:
        """The composed text of ``t`` (cached: parents are embedded many times)."""
        text = self.texts.get(t.id)
        if text is None:
            if len(self.texts) > 50_000:
                self.texts.clear()
            text = self.texts[t.id] = compose(t, self.salt, self.users)
        return text

    def _retweet_text(self, orig: PlannedTweet, *, escaped: bool = False) -> ComposedText:
        """``RT @author: text`` cut to 140 characters with ``…``, as both APIs send it."""
        ocomp = self.text(orig)
        body = escape_html(ocomp.raw) if escaped else ocomp.raw
        raw = f"RT @{self.users[orig.user].screen_name}: {body}"
        if len(raw) > 140:
            raw = raw[:139] + "…"
        return ComposedText(
            raw, 0, ocomp.urls, (orig.user, *ocomp.mentions), ocomp.tags, ocomp.media
        )

    # -- v1

    def _media_v1(
        self, owner: PlannedTweet, media: tuple[int, str], a: int, b: int
    ) -> dict[str, Any]:
        """A v1.1 photo entity of ``owner``'s tweet."""
        mid, tco = media
        code = tco_of(mid)[-10:] + tco_of(mid + 1)[-5:]
        return {
            "id": mid,
            "id_str": str(mid),
            "indices": [a, b],
            "media_url": f"http://pbs.twimg.com/media/{code}.jpg",
            "media_url_https": f"https://pbs.twimg.com/media/{code}.jpg",
            "url": tco,
            "display_url": "pic.twitter.com/" + tco.rsplit("/", 1)[1],
            "expanded_url": (
                f"https://twitter.com/{self.users[owner.user].screen_name}"
                f"/status/{owner.id}/photo/1"
            ),
            "type": "photo",
            "sizes": _PHOTO_SIZES,
        }

    def _entities_v1(
        self, text: str, composed: ComposedText, owner: PlannedTweet, extra: Sequence[Url] = ()
    ) -> dict[str, Any]:
        """``entities`` of ``text`` (``media`` too when its photo link is in it)."""
        mentions, tags, links = find_entities(text, composed, self.users, extra)
        entities = {
            "hashtags": [{"text": esc(tag), "indices": [a, b]} for a, b, tag in tags],
            "urls": [
                {"url": u[0], "expanded_url": u[1], "display_url": esc(u[2]), "indices": [a, b]}
                for a, b, u in links
            ],
            "user_mentions": [
                {
                    "screen_name": self.users[m].screen_name,
                    "name": esc(self.users[m].name),
                    "id": self.users[m].id,
                    "id_str": str(self.users[m].id),
                    "indices": [a, b],
                }
                for a, b, m in mentions
            ],
            "symbols": [],
        }
        if composed.media is not None:
            i = text.find(composed.media[1])
            if i >= 0:
                end = i + len(composed.media[1])
                entities["media"] = [self._media_v1(owner, composed.media, i, end)]
        return entities

    def _status_v1(self, t: PlannedTweet, *, top: bool, with_quote: bool = True) -> dict[str, Any]:
        users = self.users
        author = users[t.user]
        h = mix(t.id)
        href, app = _SOURCES[h % len(_SOURCES)]
        d: dict[str, Any] = {
            "created_at": twitter_time(t.ts),
            "id": t.id,
            "id_str": str(t.id),
        }
        extended: dict[str, Any] | None = None
        if t.retweet is not None:
            composed = self._retweet_text(t.retweet)
            raw = composed.raw
            d["text"] = esc(escape_html(raw))
            entities = self._entities_v1(raw, composed, t.retweet)
        else:
            composed = self.text(t)
            raw = composed.raw
            if len(raw) - composed.start > 140:  # compatibility mode: cut, full text aside
                web = (tco_of(t.id), f"https://twitter.com/i/web/status/{t.id}",
                       "twitter.com/i/web/status/1…")  # fmt: skip
                cut = raw.rfind(" ", 0, 114) if " " in raw[:114] else 114
                short = raw[: max(cut, composed.start + 1)] + "… " + web[0]
                d["text"] = esc(escape_html(short))
                full_entities = self._entities_v1(raw, composed, t)
                extended = {
                    "full_text": esc(escape_html(raw)),
                    "display_text_range": [composed.start, shown_end(raw, composed)],
                    "entities": full_entities,
                }
                if "media" in full_entities:
                    extended["extended_entities"] = {"media": full_entities["media"]}
                entities = self._entities_v1(short, composed, t, (web,))
            else:
                d["text"] = esc(escape_html(raw))
                entities = self._entities_v1(raw, composed, t)
                if composed.start or composed.media:
                    d["display_text_range"] = [composed.start, shown_end(raw, composed)]
        d["source"] = f'<a href="{href}" rel="nofollow">{app}</a>'
        d["truncated"] = extended is not None
        parent = t.reply_to
        d["in_reply_to_status_id"] = parent.id if parent else None
        d["in_reply_to_status_id_str"] = str(parent.id) if parent else None
        d["in_reply_to_user_id"] = users[parent.user].id if parent else None
        d["in_reply_to_user_id_str"] = str(users[parent.user].id) if parent else None
        d["in_reply_to_screen_name"] = users[parent.user].screen_name if parent else None
        d["user"] = orjson.Fragment(author.v1)
        d["geo"] = d["coordinates"] = d["place"] = d["contributors"] = None
        if t.retweet is not None:
            d["retweeted_status"] = orjson.Fragment(self._embedded_v1(t.retweet, True))
        quoted = t.retweet.quote if t.retweet is not None else t.quote
        if quoted is not None:
            d["quoted_status_id"] = quoted.id
            d["quoted_status_id_str"] = str(quoted.id)
            if with_quote:
                d["quoted_status"] = orjson.Fragment(self._embedded_v1(quoted, False))
                qname = users[quoted.user].screen_name
                d["quoted_status_permalink"] = {
                    "url": tco_of(quoted.id + 1),
                    "expanded": f"https://twitter.com/{qname}/status/{quoted.id}",
                    "display": esc(f"twitter.com/{qname}/s…"),
                }
        d["is_quote_status"] = quoted is not None
        if extended is not None:
            d["extended_tweet"] = extended
        if top:
            d["quote_count"] = d["reply_count"] = d["retweet_count"] = d["favorite_count"] = 0
        else:
            d["quote_count"] = h % 40
            d["reply_count"] = (h >> 8) % 90
            d["retweet_count"] = (h >> 16) % 3000
            d["favorite_count"] = (h >> 28) % 9000
        d["entities"] = entities
        if "media" in entities:
            d["extended_entities"] = {"media": entities["media"]}
        d["favorited"] = d["retweeted"] = False
        if composed.urls or "media" in entities:
            d["possibly_sensitive"] = False
        d["filter_level"] = "low"
        d["lang"] = t.retweet.lang if t.retweet is not None else t.lang
        if top:
            d["timestamp_ms"] = str(t.ts)
        return d

    def _embedded_v1(self, t: PlannedTweet, with_quote: bool) -> bytes:
        key = (t.id, with_quote)
        cached = self.embedded.get(key)
        if cached is None:
            if len(self.embedded) > 20_000:
                self.embedded.clear()
            cached = orjson.dumps(self._status_v1(t, top=False, with_quote=with_quote))
            self.embedded[key] = cached
        return cached

    def line_v1(self, line: PlannedLine) -> bytes:
        kind = line[0]
        if kind == "t":
            out = orjson.dumps(self._status_v1(line[1], top=True))
            return out.replace(b"/", b"\\/").replace(b"<", b"\\u003c").replace(b">", b"\\u003e")
        if kind == "d":
            _, tid, uid, ts = line
            status = {"id": tid, "id_str": str(tid), "user_id": uid, "user_id_str": str(uid)}
            return orjson.dumps({"delete": {"status": status, "timestamp_ms": str(ts)}})
        if kind == "l":
            return orjson.dumps({"limit": {"track": line[1], "timestamp_ms": str(line[2])}})
        if kind == "b":
            return b""
        raise ValueError(f"no v1 rendering for line kind {kind!r}")

    # -- v2

    def _text_v2(self, t: PlannedTweet) -> tuple[str, ComposedText]:
        """The v2 ``text`` of ``t`` (HTML-escaped; a retweet's cut ``RT @…``) and its parts."""
        if t.retweet is not None:
            composed = self._retweet_text(t.retweet, escaped=True)
            return composed.raw, composed
        composed = self.text(t)
        return escape_html(composed.raw), composed

    def _media_v2(self, t: PlannedTweet) -> tuple[str, dict[str, Any]] | None:
        """``(media_key, includes.media object)`` of the photo shown in ``t``'s text."""
        text, composed = self._text_v2(t)
        if composed.media is None or composed.media[1] not in text:
            return None
        key = f"3_{composed.media[0]}"
        code = tco_of(composed.media[0])[-10:] + tco_of(composed.media[0] + 1)[-5:]
        url = f"https://pbs.twimg.com/media/{code}.jpg"
        return key, {"media_key": key, "type": "photo", "url": url, "width": 2048, "height": 1536}

    def _tweet_v2(self, t: PlannedTweet, *, top: bool) -> dict[str, Any]:
        if not top and t.id in self.v2_cache:
            return self.v2_cache[t.id]
        users = self.users
        refs: list[dict[str, str]] = []
        if t.retweet is not None:
            refs.append({"type": "retweeted", "id": str(t.retweet.id)})
        else:
            if t.quote is not None:
                refs.append({"type": "quoted", "id": str(t.quote.id)})
            if t.reply_to is not None:
                refs.append({"type": "replied_to", "id": str(t.reply_to.id)})
        text, composed = self._text_v2(t)
        mentions, tags, links = find_entities(text, composed, users)
        h = mix(t.id)
        d: dict[str, Any] = {}
        media = self._media_v2(t)
        if media is not None:
            d["attachments"] = {"media_keys": [media[0]]}
        d["author_id"] = str(users[t.user].id)
        d["conversation_id"] = str(t.conv or t.id)
        d["created_at"] = iso_time(t.ts)
        d["edit_history_tweet_ids"] = [str(t.id)]
        entities: dict[str, Any] = {}
        if tags:
            entities["hashtags"] = [{"start": a, "end": b, "tag": tag} for a, b, tag in tags]
        if mentions:
            entities["mentions"] = [
                {"start": a, "end": b, "username": users[m].screen_name, "id": str(users[m].id)}
                for a, b, m in mentions
            ]
        urls = [
            {"start": a, "end": b, "url": u[0], "expanded_url": u[1], "display_url": u[2]}
            for a, b, u in links
        ]
        if media is not None and composed.media is not None:
            owner = t.retweet or t
            tco = composed.media[1]
            start = text.find(tco)
            urls.append(
                {
                    "start": start,
                    "end": start + len(tco),
                    "url": tco,
                    "expanded_url": f"https://twitter.com/{users[owner.user].screen_name}"
                    f"/status/{owner.id}/photo/1",
                    "display_url": "pic.twitter.com/" + tco.rsplit("/", 1)[1],
                    "media_key": media[0],
                }
            )
        if urls:
            entities["urls"] = urls
        if entities:
            d["entities"] = entities
        d["id"] = str(t.id)
        if t.reply_to is not None and t.retweet is None:
            d["in_reply_to_user_id"] = str(users[t.reply_to.user].id)
        d["lang"] = t.retweet.lang if t.retweet is not None else t.lang
        d["possibly_sensitive"] = False
        d["public_metrics"] = (
            {"retweet_count": 0, "reply_count": 0, "like_count": 0, "quote_count": 0}
            if top
            else {
                "retweet_count": (h >> 16) % 3000,
                "reply_count": (h >> 8) % 90,
                "like_count": (h >> 28) % 9000,
                "quote_count": h % 40,
            }
        )
        if refs:
            d["referenced_tweets"] = refs
        d["reply_settings"] = "everyone"
        d["source"] = _SOURCES[h % len(_SOURCES)][1]
        d["text"] = text
        if not top:
            if len(self.v2_cache) > 20_000:
                self.v2_cache.clear()
            self.v2_cache[t.id] = d
        return d

    def line_v2(self, line: PlannedLine) -> bytes:
        kind = line[0]
        if kind == "t":
            t: PlannedTweet = line[1]
            data = self._tweet_v2(t, top=True)
            referenced: list[PlannedTweet] = []
            for ref in (t.retweet, t.retweet.quote if t.retweet else None, t.quote, t.reply_to):
                if ref is not None and all(r.id != ref.id for r in referenced):
                    referenced.append(ref)
            authors: dict[int, dict[str, Any]] = {}
            for u in (t.user, *(r.user for r in referenced), *self._text_v2(t)[1].mentions):
                authors.setdefault(self.users[u].id, self.users[u].v2)
            media: dict[str, dict[str, Any]] = {}
            for x in (t, *referenced):
                found = self._media_v2(x)
                if found is not None:
                    media.setdefault(*found)
            includes: dict[str, Any] = {}
            if media:
                includes["media"] = list(media.values())
            includes["users"] = list(authors.values())
            if referenced:
                includes["tweets"] = [self._tweet_v2(r, top=False) for r in referenced]
            return orjson.dumps(
                {
                    "data": data,
                    "includes": includes,
                    "matching_rules": [{"id": self.rule_id, "tag": "sample"}],
                }
            )
        if kind == "e":
            return orjson.dumps(
                {
                    "errors": [
                        {
                            "title": "operational-disconnect",
                            "disconnect_type": "UpstreamOperationalDisconnect",
                            "detail": "This stream has been disconnected upstream for "
                            "operational reasons.",
                            "type": "https://api.twitter.com/2/problems/operational-disconnect",
                        }
                    ]
                }
            )
        if kind == "b":
            return b""
        raise ValueError(f"no v2 rendering for line kind {kind!r}")


_RENDERERS: dict[SynthConfig, _Renderer] = {}


def _renderer(cfg: SynthConfig) -> _Renderer:
    """This process's renderer for ``cfg`` (kept between the members of one archive)."""
    if cfg not in _RENDERERS:
        _RENDERERS.clear()
        _RENDERERS[cfg] = _Renderer(cfg)
    return _RENDERERS[cfg]


def _bz2_streams(data: bytes, level: int, multistream: bool) -> tuple[bytes, int]:
    """bz2 as pbzip2 writes it (independent streams of ``BZ2_STREAM_BYTES``, cut mid-line;
    at least two) or, with ``multistream`` false, as one stream like ``bzip2``."""
    if not multistream:
        return bz2.compress(data, level), 1
    chunk = min(BZ2_STREAM_BYTES, max(1, math.ceil(len(data) / 2)))
    parts = [bz2.compress(data[i : i + chunk], level) for i in range(0, len(data), chunk)]
    return b"".join(parts), len(parts)


def render_member(args: tuple[SynthConfig, MemberJob]) -> tuple[int, bytes, int]:
    """Render and compress one member: (uncompressed size, member bytes, bz2 streams)."""
    cfg, job = args
    r = _renderer(cfg)
    if cfg.api == "v1":
        raw = b"\r\n".join(map(r.line_v1, job.lines)) + b"\r\n"
    else:
        raw = b"\n".join(map(r.line_v2, job.lines)) + b"\n"
    if job.name.endswith(".gz"):
        return len(raw), gzip.compress(raw, compresslevel=6, mtime=0), 0
    payload, streams = _bz2_streams(raw, cfg.bz2_level, multistream=job.seq % 3 != 2)
    return len(raw), payload, streams
