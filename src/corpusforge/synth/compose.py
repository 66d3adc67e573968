"""Text composition: turns a planned tweet into its text and the entities in it.

A text (``ComposedText``) is a function of the archive seed and the tweet: reply
@mentions, sentences drawn mostly from the conversation topic's vocabulary, then maybe a
hashtag, emoji, a link and a photo link. ``find_entities`` finds the mentions, hashtags
and links back in the (possibly cut) text a renderer writes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import NamedTuple

from corpusforge.synth.languages import EMOJI, LANGS, Lang, lexicon, topic_of
from corpusforge.synth.plan import BOT, LONG, NORMAL, SHORT, PlannedTweet
from corpusforge.synth.users import User
from corpusforge.synth.wire import mix, new_tco

_BOT_TEXTS = (
    "Good morning everyone! Have a wonderful day ahead ☀️",
    "Follow us for daily updates on the latest news and trends",
    "We are hiring! Check out our open positions and apply today",
    "Thank you so much for 10k followers, love you all ❤️",
)


_DOMAINS = (
    "www.bbc.co.uk", "nyti.ms", "youtu.be", "www.instagram.com", "bit.ly", "www.theguardian.com",
    "open.spotify.com", "www.reuters.com", "g1.globo.com", "www.elpais.com", "news.yahoo.co.jp",
)  # fmt: skip


class ComposedText(NamedTuple):
    """A composed tweet text (unescaped) and what its entities point at."""

    raw: str
    start: int  # display_text_range start: after the leading @mentions of a reply
    urls: tuple[tuple[str, str, str], ...]  # (t.co url, expanded, display)
    mentions: tuple[int, ...]  # user pool indices, in text order
    tags: tuple[str, ...]
    media: tuple[int, str] | None = None  # (media id, t.co link at the end) of a photo


def shown_end(raw: str, composed: ComposedText) -> int:
    """End of ``display_text_range``: before a trailing photo link."""
    if composed.media is not None and raw.endswith(composed.media[1]):
        return len(raw) - len(composed.media[1]) - 1
    return len(raw)


def compose(t: PlannedTweet, salt: int, users: Sequence[User]) -> ComposedText:
    """The text of a non-retweet ``t``: a function of ``(salt, t)`` only.

    Args:
        t: the planned tweet.
        salt: ``seeded_hash(seed, "synth-text")``: the archive seed's share.
        users: the user pool (for @mentions).
    """
    rng = random.Random(salt ^ mix(t.id))
    spec = LANGS[t.lang]
    mentions: list[int] = []
    prefix = ""
    if t.reply_to is not None:
        mentions.append(t.reply_to.user)
        up = t.reply_to.reply_to
        if up is not None and up.user != t.reply_to.user and rng.random() < 0.4:
            mentions.append(up.user)
        prefix = "".join(f"@{users[m].screen_name} " for m in mentions)
    urls: list[tuple[str, str, str]] = []
    tags: list[str] = []
    if t.style == SHORT:
        body = rng.choice(spec.short)
    elif t.style == BOT:
        body = rng.choice(_BOT_TEXTS)
    else:
        body = _body(t, rng, spec, urls, tags, mentions, users)
    media = None
    if t.style in (NORMAL, LONG) and t.lang != "und" and rng.random() < 0.15:
        media = (t.id - 1 - rng.getrandbits(24), new_tco(rng))  # uploaded just before
        body += " " + media[1]
    return ComposedText(
        prefix + body, len(prefix), tuple(urls), tuple(mentions), tuple(tags), media
    )


def _body(
    t: PlannedTweet,
    rng: random.Random,
    spec: Lang,
    urls: list[tuple[str, str, str]],
    tags: list[str],
    mentions: list[int],
    users: Sequence[User],
) -> str:
    topic = topic_of(t.lang, t.topic)
    tag = topic.tag
    if t.lang == "und":
        body = "".join(rng.choices(EMOJI, k=rng.randint(1, 4)))
        if rng.random() < 0.5:
            tags.append(tag)
            body += f" #{tag}"
        return body
    if t.style == LONG:
        target = rng.randint(200, 270)
    elif rng.random() < 0.7:
        target = rng.randint(25, 120)
    else:
        target = rng.randint(120, 200)
    latin = spec.code in ("en", "es", "pt", "fr", "tr", "in")
    if not spec.spaced:
        target = target * 2 // 3  # denser scripts
    sep = " " if spec.spaced else ""
    pool = rng.choices(topic.slots, k=target // 3 + 12)  # more words than needed
    sentences: list[str] = []
    length = used = 0
    while length < target and used < len(pool):
        n = rng.randint(4, 12)
        sent = pool[used : used + n]
        used += n
        if latin:
            sent[0] = sent[0][:1].upper() + sent[0][1:]
            if rng.random() < 0.08:  # HTML entities to be: &amp; &lt; &gt;
                sent.insert(rng.randrange(1, len(sent) + 1), rng.choice(("&", "<3", "->")))
        sentence = sep.join(sent) + rng.choice(spec.ends)
        sentences.append(sentence)
        length += len(sentence) + 1
    joiner = rng.choice(("\n", "\n\n")) if rng.random() < 0.12 else sep
    body = joiner.join(sentences)
    if len(body) > target + 20:
        cut = body.rfind(" ", 0, target + 20) if spec.spaced else target + 20
        body = body[: cut if cut > 10 else target + 20].rstrip()
    if rng.random() < 0.1 and users:
        other = rng.randrange(len(users))
        mentions.append(other)
        body += f" @{users[other].screen_name}"
    if rng.random() < 0.3:
        tags.append(tag)
        body += f" #{tag}"
    if rng.random() < 0.35:
        body += ("" if rng.random() < 0.5 else " ") + "".join(
            rng.choices(EMOJI, k=rng.randint(1, 3))
        )
    if rng.random() < 0.18:
        tco, domain = new_tco(rng), rng.choice(_DOMAINS)
        path = f"{rng.choice(lexicon('en'))}-{rng.getrandbits(32):x}"
        expanded = f"https://{domain}/{path}"
        shown = f"{domain}/{path}"
        urls.append((tco, expanded, shown if len(shown) <= 26 else shown[:25] + "…"))
        body += " " + tco
    return body


Url = tuple[str, str, str]  # (t.co url, expanded url, display url)


def find_entities(
    text: str, composed: ComposedText, users: Sequence[User], extra_urls: Sequence[Url] = ()
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, str]], list[tuple[int, int, Url]]]:
    """Positions (code points) of the mentions, hashtags and URLs of ``composed`` in ``text``."""
    mentions = []
    pos = 0
    for m in composed.mentions:
        needle = "@" + users[m].screen_name
        i = text.find(needle, pos)
        if i >= 0:
            mentions.append((i, i + len(needle), m))
            pos = i + len(needle)
    tags = []
    for tag in composed.tags:
        i = text.find("#" + tag)
        if i >= 0:
            tags.append((i, i + len(tag) + 1, tag))
    links = []
    for url in (*composed.urls, *extra_urls):
        i = text.find(url[0])
        if i >= 0:
            links.append((i, i + len(url[0]), url))
    return mentions, tags, links
