"""The conversation planner: turns an archive's config and user pool into its lines.

Decides every line of the archive, in order, and groups them into minute members: tweets
(``PlannedTweet``: originals, replies, quotes and retweets on a heavy-tailed (Zipf)
conversation graph), delete and limit notices, v2 disconnect notices and keep-alives.
It keeps the ground truth as it goes (``Planner.truth``). What a line says is decided
here; how it is written is ``compose`` and ``render``.
"""

from __future__ import annotations

import bisect
import calendar
import itertools
import math
import random
from array import array
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from corpusforge.keys import seeded_hash
from corpusforge.synth.languages import LANG_CODES, LANG_CUM
from corpusforge.synth.layouts import PATH_UTC_OFFSET, TWEPOCH_MS, SynthConfig, member_name
from corpusforge.synth.truth import SynthTruth
from corpusforge.synth.users import User

_LINES_PER_MEMBER = 3_000  # the real 2021 sample: ~3,200 lines per minute member
_MIN_MEMBERS = 4  # small archives still span several members and hours
_DELETE_RATE = 0.125  # delete notices per tweet line (the 2021 sample: 0.12)
_ZIPF_S = 1.1  # conversation popularity ~ 1 / rank**s


_ORIGINAL, _REPLY, _QUOTE, _RETWEET = range(4)  # what a tweet line is
NORMAL, SHORT, LONG, BOT = range(4)  # how its text is written (``compose``)


class PlannedTweet(NamedTuple):
    """A planned tweet: everything its rendering depends on, parents included."""

    id: int
    ts: int  # timestamp_ms of the line; also the snowflake time of ``id``
    user: int  # index into the user pool
    lang: str
    topic: int
    style: int
    reply_to: PlannedTweet | None = None
    quote: PlannedTweet | None = None
    retweet: PlannedTweet | None = None
    conv: int = 0  # v2 conversation_id (the reply chain's root)


# A planned line: ("t", PlannedTweet) | ("d", status_id, user_id, ts) | ("l", track, ts)
# | ("e", ts) | ("b",)
PlannedLine = tuple[Any, ...]


class MemberJob(NamedTuple):
    seq: int  # position in the archive
    name: str
    minute: datetime  # archive-local
    lines: list[PlannedLine]


class _Conv:
    """A conversation root and the reply/quote lines that joined it so far."""

    __slots__ = ("children", "emitted", "in_archive", "lang", "nodes", "spec", "topic")

    def __init__(self, spec: PlannedTweet | None, lang: str, topic: int, in_archive: bool) -> None:
        self.spec = spec  # None until an in-archive root is emitted
        self.lang, self.topic, self.in_archive = lang, topic, in_archive
        self.emitted = False
        self.nodes: deque[tuple[PlannedTweet, int]] = deque(maxlen=64)  # (tweet, depth), latest
        self.children = 0


class Planner:
    """Decides every line of the archive, in order, and keeps the ground truth."""

    def __init__(self, cfg: SynthConfig, users: Sequence[User]) -> None:
        self.cfg = cfg
        self.users = users
        self.rng = random.Random(seeded_hash(cfg.seed, "synth-plan"))
        self.by_lang: dict[str, list[int]] = {code: [] for code in LANG_CODES}
        for i, u in enumerate(users):
            self.by_lang[u.lang].append(i)
        for code, members in self.by_lang.items():
            if not members:  # tiny pools: borrow any user
                members.append(LANG_CODES.index(code) % len(users))
        self.used_ids: set[int] = set()
        self.line_ids = array("q")  # tweet ids of the tweet lines so far
        self.line_users = array("q")  # and their authors' user ids
        self.line_id_set: set[int] = set()
        self.start_utc_ms = int(
            (cfg.start - PATH_UTC_OFFSET).replace(tzinfo=UTC).timestamp() * 1000
        )
        # truth
        self.counts: Counter[str] = Counter()
        self.languages: Counter[str] = Counter()
        self.edges: list[tuple[int, int, str]] = []
        self.edges_with_line: Counter[str] = Counter({"reply": 0, "quote": 0})
        self.deleted: list[int] = []
        self.convs, self.zipf_cum = self._make_conversations()

    # -- helpers

    def _snowflake(self, ts: int) -> int:
        while True:
            tid = ((ts - TWEPOCH_MS) << 22) | self.rng.getrandbits(22)
            if tid not in self.used_ids:
                self.used_ids.add(tid)
                return tid

    def _lang(self) -> str:
        return LANG_CODES[bisect.bisect_right(LANG_CUM, self.rng.randrange(LANG_CUM[-1]))]

    def _user(self, lang: str) -> int:
        pool = self.by_lang[lang]
        return pool[self.rng.randrange(len(pool))]

    def _make_conversations(self) -> tuple[list[_Conv], list[float]]:
        """The conversation roots and their Zipf popularity (cumulative weights)."""
        rng = self.rng
        n = max(3, self.cfg.tweets // 30)
        convs = []
        for _ in range(n):
            lang = self._lang()
            topic = rng.randrange(10**6)
            if rng.random() < 0.5:
                convs.append(_Conv(None, lang, topic, True))
            else:  # posted before the archive starts: never a line of it
                ts = self.start_utc_ms - rng.randrange(300_000, 3 * 86_400_000)
                spec = PlannedTweet(self._snowflake(ts), ts, self._user(lang), lang, topic, NORMAL)
                convs.append(_Conv(spec._replace(conv=spec.id), lang, topic, False))
        ranks = list(range(n))
        rng.shuffle(ranks)
        return convs, list(itertools.accumulate(1.0 / (r + 1) ** _ZIPF_S for r in ranks))

    def _pick_conv(self) -> _Conv:
        rng = self.rng
        if rng.random() < 0.25:
            return self.convs[rng.randrange(len(self.convs))]
        x = rng.random() * self.zipf_cum[-1]
        return self.convs[min(bisect.bisect_right(self.zipf_cum, x), len(self.convs) - 1)]

    def _style(self, kind: int) -> int:
        r = self.rng.random()
        short = {_ORIGINAL: 0.03, _REPLY: 0.15, _QUOTE: 0.08}[kind]
        if r < short:
            return SHORT
        if r < short + 0.12:
            return LONG
        if kind == _ORIGINAL and r > 0.985:
            return BOT
        return NORMAL

    def _child_lang_topic(self, conv: _Conv) -> tuple[str, int]:
        rng = self.rng
        lang = conv.lang if rng.random() < 0.9 else self._lang()
        topic = conv.topic if lang == conv.lang and rng.random() < 0.85 else rng.randrange(10**6)
        return lang, topic

    # -- tweets

    def _tweet(self, ts: int) -> PlannedTweet:
        rng = self.rng
        r = rng.random()
        kind = _ORIGINAL if r < 0.25 else _REPLY if r < 0.52 else _QUOTE if r < 0.62 else _RETWEET
        if kind == _ORIGINAL:
            return self._original(ts)
        conv = self._pick_conv()
        if conv.in_archive and not conv.emitted:
            return self._emit_root(conv, ts)
        root = conv.spec
        assert root is not None
        joinable = [n for n in conv.nodes if n[1] < 4]
        if kind == _RETWEET:
            target = root
            if joinable and rng.random() < 0.3:
                target = rng.choice(joinable)[0]
            conv.children += 1
            return PlannedTweet(
                self._snowflake(ts), ts, self._user(target.lang), target.lang, target.topic,
                NORMAL, retweet=target, conv=0,
            )  # fmt: skip
        lang, topic = self._child_lang_topic(conv)
        parent, depth = root, 0
        if joinable and rng.random() < 0.35:
            parent, depth = rng.choice(joinable)
        tid = self._snowflake(ts)
        if kind == _REPLY:
            if rng.random() < 0.15:  # a parent the archive never saw (the 1% sample)
                pts = ts - rng.randrange(1_000, 7_200_000)
                parent = PlannedTweet(
                    self._snowflake(pts), pts, self._user(conv.lang), conv.lang, conv.topic,
                    NORMAL, reply_to=root, conv=root.id,
                )  # fmt: skip
                depth = 1
            spec = PlannedTweet(tid, ts, self._user(lang), lang, topic, self._style(kind),
                                reply_to=parent, conv=root.id)  # fmt: skip
        else:
            reply_to = None
            if rng.random() < 0.05:  # a quote that also replies: two edges
                reply_to = root
            conv_id = root.id if reply_to else tid
            spec = PlannedTweet(tid, ts, self._user(lang), lang, topic, self._style(kind),
                                reply_to=reply_to, quote=parent, conv=conv_id)  # fmt: skip
        conv.nodes.append((spec, depth + 1))
        conv.children += 1
        return spec

    def _emit_root(self, conv: _Conv, ts: int) -> PlannedTweet:
        tid = self._snowflake(ts)
        conv.spec = PlannedTweet(
            tid, ts, self._user(conv.lang), conv.lang, conv.topic, NORMAL, conv=tid
        )
        conv.emitted = True
        return conv.spec

    def _original(self, ts: int) -> PlannedTweet:
        rng = self.rng
        if rng.random() < 0.3:
            conv = self._pick_conv()
            if conv.in_archive and not conv.emitted:
                return self._emit_root(conv, ts)
        style = self._style(_ORIGINAL)
        lang = "en" if style == BOT else self._lang()
        tid = self._snowflake(ts)
        return PlannedTweet(tid, ts, self._user(lang), lang, rng.randrange(10**6), style, conv=tid)

    def _record_tweet(self, t: PlannedTweet) -> None:
        self.counts["tweet_lines"] += 1
        self.languages[t.retweet.lang if t.retweet else t.lang] += 1
        if t.retweet is not None:
            self.counts["retweet_lines"] += 1
        else:
            for parent, kind in ((t.reply_to, "reply"), (t.quote, "quote")):
                if parent is not None:
                    self.edges.append((t.id, parent.id, kind))
                    if parent.id in self.line_id_set:
                        self.edges_with_line[kind] += 1
        self.line_ids.append(t.id)
        self.line_users.append(self.users[t.user].id)
        self.line_id_set.add(t.id)

    def _delete(self, ts: int) -> PlannedLine:
        rng = self.rng
        if self.line_ids and rng.random() < 0.15:
            i = rng.randrange(len(self.line_ids))
            tid, uid = self.line_ids[i], self.line_users[i]
        else:  # an older tweet (of someone in or out of the pool)
            old = max(ts - rng.randrange(60_000, 700 * 86_400_000), TWEPOCH_MS + 60_000)
            tid = ((old - TWEPOCH_MS) << 22) | rng.getrandbits(22)
            uid = (
                self.users[rng.randrange(len(self.users))].id
                if rng.random() < 0.3
                else rng.randrange(10**7, 1_400_000_000_000_000_000)
            )
        self.deleted.append(tid)
        return ("d", tid, uid, ts)

    # -- the whole archive

    def layout_members(self) -> tuple[list[int], list[datetime]]:
        """Lines per member and each member's archive-local minute."""
        cfg = self.cfg
        n_lines = self.n_lines
        start = cfg.start.replace(second=0, microsecond=0)
        if cfg.layout == "tar-2013":  # monthly archive: spread over the rest of the month
            days = calendar.monthrange(start.year, start.month)[1]
            end = datetime(start.year, start.month, days) + timedelta(days=1)
        else:
            end = datetime(start.year, start.month, start.day) + timedelta(days=1)
        span = max(1, int((end - start).total_seconds() // 60))
        per_member = max(_LINES_PER_MEMBER, math.ceil(n_lines / span))
        n_members = max(math.ceil(n_lines / per_member), min(_MIN_MEMBERS, max(1, n_lines // 25)))
        n_members = min(n_members, span)
        step = max(1, span // n_members)
        sizes = [
            n_lines * (k + 1) // n_members - n_lines * k // n_members for k in range(n_members)
        ]
        minutes = [start + timedelta(minutes=k * step) for k in range(n_members)]
        return sizes, minutes

    @property
    def n_lines(self) -> int:
        return sum(self.line_kinds.values())

    @property
    def line_kinds(self) -> dict[str, int]:
        t = self.cfg.tweets
        if self.cfg.api == "v1":
            return {"t": t, "d": round(t * _DELETE_RATE), "l": 1 + t // 5000, "b": 1 + t // 4000}
        return {"t": t, "e": 1 + t // 20000, "b": 1 + t // 4000}

    def members(self) -> Iterator[MemberJob]:
        """The member jobs, in archive order; the truth is complete once exhausted."""
        rng, cfg = self.rng, self.cfg
        kinds = [k for k, n in self.line_kinds.items() for _ in range(n)]
        rng.shuffle(kinds)
        sizes, minutes = self.layout_members()
        pos = 0
        for index, (size, minute) in enumerate(zip(sizes, minutes, strict=True)):
            base = int((minute - PATH_UTC_OFFSET).replace(tzinfo=UTC).timestamp() * 1000)
            slot = max(1, 60_000 // size)
            lines: list[PlannedLine] = []
            for i in range(size):
                kind = kinds[pos]
                pos += 1
                ts = base + 60_000 * i // size + rng.randrange(slot)
                if kind == "t":
                    t = self._tweet(ts)
                    self._record_tweet(t)
                    lines.append(("t", t))
                elif kind == "d":
                    self.counts["delete_notices"] += 1
                    lines.append(self._delete(ts))
                elif kind == "b":
                    self.counts["blank_lines"] += 1
                    lines.append(("b",))
                else:
                    self.counts["other_messages"] += 1
                    lines.append(("l", rng.randrange(1, 5000), ts) if kind == "l" else ("e", ts))
            yield MemberJob(index, member_name(cfg.layout, minute), minute, lines)

    def truth(
        self, archive: str, members: list[str], multistream: list[str], raw: int
    ) -> SynthTruth:
        c = self.counts
        present = set(self.line_id_set)
        convs = [
            (cv.spec.id, cv.lang, cv.topic, cv.children, cv.in_archive)
            for cv in self.convs
            if cv.spec is not None and cv.children > 0
        ]
        return SynthTruth(
            archive=archive,
            layout=self.cfg.layout,
            api=self.cfg.api,
            seed=self.cfg.seed,
            start=self.cfg.start.isoformat(),
            members=tuple(members),
            multistream_members=tuple(multistream),
            lines=c["tweet_lines"] + c["delete_notices"] + c["other_messages"] + c["blank_lines"],
            tweet_lines=c["tweet_lines"],
            delete_notices=c["delete_notices"],
            other_messages=c["other_messages"] + c["blank_lines"],
            blank_lines=c["blank_lines"],
            retweet_lines=c["retweet_lines"],
            uncompressed_bytes=raw,
            languages=dict(sorted(self.languages.items(), key=lambda kv: (-kv[1], kv[0]))),
            edges=tuple(self.edges),
            edges_with_parent_line=dict(self.edges_with_line),
            deleted_ids=tuple(self.deleted),
            deleted_in_archive=tuple(d for d in self.deleted if d in present),
            conversations=tuple(sorted(convs)),
        )
