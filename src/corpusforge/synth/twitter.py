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
"""

from __future__ import annotations

import bisect
import bz2
import calendar
import gzip
import io
import itertools
import json.encoder
import math
import multiprocessing
import os
import random
import tarfile
import zipfile
from array import array
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from corpusforge.keys import seeded_hash

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
_EARLIEST_START = datetime(2011, 1, 1)  # snowflake ids (2010-11); the grabs began 2011-09
_LINES_PER_MEMBER = 3_000  # the real 2021 sample: ~3,200 lines per minute member
_MIN_MEMBERS = 4  # small archives still span several members and hours
_DELETE_RATE = 0.125  # delete notices per tweet line (the 2021 sample: 0.12)
_ZIPF_S = 1.1  # conversation popularity ~ 1 / rank**s
_N_USERS_MAX = 20_000


# --------------------------------------------------------------------------- names


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
    _check_layout(layout)
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
    _check_layout(layout)
    return {
        "zip-2020": f"twitter-stream-{day:%Y-%m-%d}.zip",
        "tar-2019": f"twitter_stream_{day:%Y_%m_%d}.tar",
        "tar-gz": f"twitter_stream_{day:%Y_%m_%d}.tar.gz",
        "tar-2013": f"archiveteam-twitter-stream-{day:%Y-%m}.tar",
        "tar-2022": f"twitter-stream-{day:%Y%m%d}.tar",
    }[layout]


def default_api(layout: str) -> str:
    """``v2`` for tar-2022 (the 2022-03 onward archives), ``v1`` for the other layouts."""
    _check_layout(layout)
    return "v2" if layout == "tar-2022" else "v1"


def default_start(layout: str) -> datetime:
    """A realistic first minute (archive-local) for ``layout``, e.g. 2021-01-01 00:00."""
    _check_layout(layout)
    return _DEFAULT_START[layout]


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {layout!r}")


# --------------------------------------------------------------------------- truth


@dataclass(frozen=True)
class SynthTruth:
    """What a correct reader must find in a synthetic archive.

    Tweet lines are v1 lines with ``id_str`` and ``user`` or v2 lines with ``data``.
    ``edges`` come from tweet lines that are not retweets: ``(id, in_reply_to_status_id,
    "reply")`` and ``(id, quoted_status_id, "quote")`` (v2: ``referenced_tweets`` of type
    ``replied_to`` / ``quoted``); a tweet that both replies and quotes gives two edges.
    Quotes and retweets embedded inside retweets give no edge.

    Attributes:
        archive: file name of the archive.
        layout: one of ``LAYOUTS``.
        api: ``v1`` or ``v2``.
        seed: the generator seed.
        start: archive-local time of the first member, ISO 8601.
        members: member paths (files only), in archive order.
        multistream_members: bz2 members made of two or more concatenated streams.
        lines: every line, blank keep-alives included.
        tweet_lines: lines holding a tweet (retweets included).
        delete_notices: ``{"delete": ...}`` lines.
        other_messages: the rest: ``limit`` / ``errors`` notices and blank keep-alives.
        blank_lines: the blank keep-alives among ``other_messages``.
        retweet_lines: tweet lines that are retweets.
        uncompressed_bytes: sum of the decompressed member sizes.
        languages: tweet lines per top-level ``lang`` (v2: ``data.lang``).
        edges: ``(child_id, parent_id, kind)`` with kind ``reply`` or ``quote``, in line
            order.
        edges_with_parent_line: per kind, edges whose parent is itself a tweet line of
            the archive (a v1 reply pair needs that; quotes carry their parent).
        deleted_ids: status ids named by delete notices, in line order.
        deleted_in_archive: those of ``deleted_ids`` that are tweet lines of the archive.
        conversations: ``(root_id, lang, topic, child_lines, root_in_archive)`` for each
            conversation with at least one reply, quote or retweet line; ``topic`` keys
            the vocabulary its texts share.
    """

    archive: str
    layout: str
    api: str
    seed: int
    start: str
    members: tuple[str, ...]
    multistream_members: tuple[str, ...]
    lines: int
    tweet_lines: int
    delete_notices: int
    other_messages: int
    blank_lines: int
    retweet_lines: int
    uncompressed_bytes: int
    languages: dict[str, int] = field(default_factory=dict)
    edges: tuple[tuple[int, int, str], ...] = ()
    edges_with_parent_line: dict[str, int] = field(default_factory=dict)
    deleted_ids: tuple[int, ...] = ()
    deleted_in_archive: tuple[int, ...] = ()
    conversations: tuple[tuple[int, str, int, int, bool], ...] = ()

    def to_json(self) -> bytes:
        """The truth as indented JSON (ids as JSON integers)."""
        return orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2)

    @classmethod
    def read(cls, path: Path | str) -> SynthTruth:
        """Load a ``FILE.truth.json`` written by ``write_synthetic_archive``.

        Args:
            path: the truth file.

        Returns:
            The ``SynthTruth`` it holds.
        """
        raw = orjson.loads(Path(path).read_bytes())
        return cls(
            **{
                **raw,
                "members": tuple(raw["members"]),
                "multistream_members": tuple(raw["multistream_members"]),
                "edges": tuple((int(c), int(p), str(k)) for c, p, k in raw["edges"]),
                "deleted_ids": tuple(raw["deleted_ids"]),
                "deleted_in_archive": tuple(raw["deleted_in_archive"]),
                "conversations": tuple(
                    (int(r), str(lang), int(t), int(n), bool(a))
                    for r, lang, t, n, a in raw["conversations"]
                ),
            }
        )


def truth_path(out: Path | str) -> Path:
    """Where the truth of archive ``out`` is written: ``out + ".truth.json"``."""
    return Path(str(out) + ".truth.json")


# --------------------------------------------------------------------------- languages


def _w(words: str) -> tuple[str, ...]:
    """A word list written as one space-separated string."""
    return tuple(words.split())


_LANG_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("en", 40), ("ja", 14), ("es", 9), ("pt", 8), ("ar", 6), ("und", 5),
    ("th", 4), ("ko", 4), ("in", 4), ("fr", 3), ("tr", 3),
)  # fmt: skip

_EN_THEMES: tuple[str, ...] = (
    "pizza coffee breakfast recipe cheese noodles kitchen dinner bakery pasta tacos chocolate",
    "match goal striker referee league penalty season coach stadium transfer keeper derby",
    "album concert guitar lyrics playlist singer tour drummer vinyl chorus festival melody",
    "storm snow rain forecast sunshine thunder heatwave wind flood winter clouds umbrella",
    "console level boss controller stream patch ranked server quest loot multiplayer arcade",
    "election senate vote policy campaign debate budget governor ballot congress reform mayor",
    "trailer sequel director cinema actor premiere popcorn scene villain screenplay remake",
    "phone laptop update battery software startup chip cloud browser password robot keyboard",
    "vaccine doctor hospital nurse workout sleep diet clinic therapy vitamins yoga recovery",
    "flight airport passport beach hotel luggage island train mountains roadtrip museum hostel",
    "puppy kitten dog cat leash vet paws treats parrot hamster adoption shelter",
    "rocket launch orbit telescope planet astronaut moon galaxy comet satellite eclipse nebula",
    "exam homework teacher campus essay library semester grades lecture graduation notebook",
    "stocks crypto rent salary bitcoin market savings bank inflation loan taxes investors",
    "sneakers jacket outfit dress denim makeup hoodie runway boots vintage lipstick scarf",
    "engine highway traffic tires garage motorbike diesel racing parking mechanic brakes fuel",
    "novel chapter author poetry bookstore fiction memoir paperback bestseller plot manuscript",
    "tomatoes seeds garden roses compost soil harvest greenhouse tulips weeds orchard lettuce",
    "dunk playoffs rebound court buzzer rookie assist jersey overtime draft hoops timeout",
    "painting canvas sketch gallery sculpture portrait mural watercolor brushes exhibit ink",
    "grandma wedding birthday cousins baby siblings parents reunion nephew anniversary toddler",
    "fireworks countdown resolutions midnight champagne celebration party toast confetti wishes",
    "episode manga character opening cosplay arc animation fandom subtitles merch spoilers",
    "marathon sprint miles trail pace hydration medal stretching jogging treadmill laps",
    "experiment laboratory data theory research molecules climate physics biology genome",
)
_EN_FUNCTION = _w(
    "the a to and of is this that it in for my so just with on be i you we not are was have "
    "but all really what about when can't don't gonna still never always very more at like "
    "our your they it's i'm today tonight again"
)

_BOT_TEXTS = (
    "Good morning everyone! Have a wonderful day ahead ☀️",
    "Follow us for daily updates on the latest news and trends",
    "We are hiring! Check out our open positions and apply today",
    "Thank you so much for 10k followers, love you all ❤️",
)

_EMOJI = (
    "😂", "❤️", "🔥", "😭", "🙏", "✨", "👏", "😍", "🎉", "🥺", "💯", "👀", "😅", "🤣",
    "💙", "🎆", "🥂", "⚽", "🎶", "☀️", "🌧️", "🚀", "👍🏽", "🇧🇷",
)  # fmt: skip

_DOMAINS = (
    "www.bbc.co.uk", "nyti.ms", "youtu.be", "www.instagram.com", "bit.ly", "www.theguardian.com",
    "open.spotify.com", "www.reuters.com", "g1.globo.com", "www.elpais.com", "news.yahoo.co.jp",
)  # fmt: skip

_SOURCES = (
    ("http://twitter.com/download/iphone", "Twitter for iPhone"),
    ("http://twitter.com/download/android", "Twitter for Android"),
    ("https://mobile.twitter.com", "Twitter Web App"),
    ("http://twitter.com/#!/download/ipad", "Twitter for iPad"),
    ("https://about.twitter.com/products/tweetdeck", "TweetDeck"),
    ("https://buffer.com", "Buffer"),
)


@dataclass(frozen=True)
class _Lang:
    """Vocabulary and script of one ``lang`` code."""

    code: str
    spaced: bool  # words separated by spaces
    function: tuple[str, ...]  # function words, ~1/3 of a text
    content: tuple[str, ...]  # real content words
    short: tuple[str, ...]  # replies under 20 characters (shared: exact duplicates)
    ends: tuple[str, ...]  # sentence-final punctuation
    locations: tuple[str, ...]
    word: Callable[[random.Random], str]  # a pseudo word in the script


def _latin_word(cons: str, vowels: str, endings: str) -> Callable[[random.Random], str]:
    cs, vs, es = cons.split(), vowels.split(), endings.split()

    def word(rng: random.Random) -> str:
        w = "".join(rng.choice(cs) + rng.choice(vs) for _ in range(rng.randint(1, 3)))
        return w + rng.choice(es) if rng.random() < 0.5 else w

    return word


def _ja_word(rng: random.Random) -> str:
    if rng.random() < 0.4:
        kanji = "日本人大年中出会生時行見月分後前新間気事自社発員場取"
        return rng.choice(kanji) + rng.choice(kanji)
    kana = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモラリルレロワン"
    return "".join(rng.choice(kana) for _ in range(rng.randint(2, 4)))


def _ko_word(rng: random.Random) -> str:
    def syllable() -> str:
        final = rng.randrange(28) if rng.random() < 0.4 else 0
        return chr(0xAC00 + (rng.randrange(19) * 21 + rng.randrange(21)) * 28 + final)

    return "".join(syllable() for _ in range(rng.randint(2, 3)))


def _ar_word(rng: random.Random) -> str:
    w = "".join(rng.choice("ابتثجحخدذرزسشصضطظعغفقكلمنهوي") for _ in range(rng.randint(3, 5)))
    return "ال" + w if rng.random() < 0.3 else w


def _th_word(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(2, 3)):
        if rng.random() < 0.3:
            out.append(rng.choice("เแโใไ"))
        out.append(rng.choice("กขคงจชซดตถทนบปผพฟมยรลวสหอ"))
        if rng.random() < 0.6:
            out.append(rng.choice("ะาิีุู"))
        if rng.random() < 0.4:
            out.append(rng.choice("กงดนบมย"))
    return "".join(out)


_UND_WORDS = _w("haha wkwk xD omg lmao ok 99 2021 jaja ahah hmm yay 😂 🔥 ❤️ 🙏 👀 ✨")


def _und_word(rng: random.Random) -> str:
    return rng.choice(_UND_WORDS)


def _en_word(rng: random.Random) -> str:
    return rng.choice(rng.choice(_EN_THEMES).split())


_LANGS: dict[str, _Lang] = {
    lang.code: lang
    for lang in (
        _Lang(
            "en", True, _EN_FUNCTION,
            _w("day time people life week world thing friend love feeling night morning year "
                  "moment video photo news story team home guys everyone"),
            ("happy new year!!", "lol", "same", "so true", "omg yes", "facts", "thank you!!",
             "love this", "this 😂", "🔥🔥🔥", "no way", "yes!!", "me too", "congrats!!", "wow"),
            (".", "!", "?", "!!", "..."),
            ("London, England", "Los Angeles, CA", "Lagos, Nigeria", "Toronto", "New York, USA"),
            _en_word,
        ),
        _Lang(
            "es", True,
            _w("el la de que y en los las por para con no es una un muy pero más como todo ya "
                  "hoy mi se lo me este esta bien siempre"),
            _w("fútbol partido música comida playa trabajo amigos familia noche gente vida "
                  "tiempo ciudad película canción viaje escuela dinero perro gato lluvia año "
                  "fiesta equipo juego libro casa mundo amor"),
            ("jajaja", "feliz año!!", "qué bonito", "sí", "gracias!!", "igual", "jajajaja 😂"),
            (".", "!", "?", "!!"),
            ("Madrid, España", "Ciudad de México", "Buenos Aires", "Bogotá, Colombia"),
            _latin_word("b c d f g l m n p r s t v ch ll rr j z", "a e i o u á é í ó",
                        "ción dad ado ita ero mente os as ar er"),
        ),
        _Lang(
            "pt", True,
            _w("o a de que e do da em um uma para com não os as por mais muito mas como eu "
                  "você hoje já tudo isso ser tá bem sempre"),
            _w("futebol jogo música comida praia trabalho amigos família noite gente vida "
                  "tempo cidade filme viagem escola dinheiro cachorro gato chuva ano festa time "
                  "livro casa mundo amor saudade coração galera"),
            ("kkkkkk", "feliz ano novo!!", "verdade", "amei", "obrigado!!", "sim", "que lindo"),
            (".", "!", "?", "!!"),
            ("São Paulo, Brasil", "Rio de Janeiro", "Lisboa, Portugal", "Recife"),
            _latin_word("b c d f g l m n p r s t v ch lh nh j z", "a e i o u ã á é ó ê",
                        "ção dade inho eiro mente os as ar ão"),
        ),
        _Lang(
            "fr", True,
            _w("le la les de des et un une que qui en pour pas est c'est je tu on avec dans "
                  "sur mais très plus tout ça vraiment trop bien"),
            _w("match musique cuisine plage travail amis famille soirée gens vie temps ville "
                  "film voyage école argent chien chat pluie année fête équipe livre maison "
                  "monde amour"),
            ("mdr", "bonne année!!", "trop bien", "merci !!", "grave", "oui"),
            (".", " !", " ?", "..."),
            ("Paris, France", "Lyon", "Montréal, Québec", "Bruxelles"),
            _latin_word("b c d f g l m n p r s t v ch qu j", "a e i o u é è ou ai eu",
                        "tion ment eur ette ique eau ais er"),
        ),
        _Lang(
            "tr", True,
            _w("ve bir bu da de çok ne için ama gibi daha ben sen o var yok mi her şey bugün "
                  "artık kadar en hiç sadece"),
            _w("maç müzik yemek deniz iş arkadaş aile gece insanlar hayat zaman şehir film "
                  "okul para köpek kedi yağmur yıl parti takım oyun kitap ev dünya aşk"),
            ("aynen", "mutlu yıllar!!", "teşekkürler", "harika", "evet"),
            (".", "!", "?"),
            ("İstanbul, Türkiye", "Ankara", "İzmir"),
            _latin_word("b c ç d f g ğ h k l m n p r s ş t v y z", "a e ı i o ö u ü",
                        "lar ler lık lik cı ci mak mek"),
        ),
        _Lang(
            "in", True,
            _w("yang dan di ke dari ini itu aku kamu tidak ga udah lagi aja sama juga banget "
                  "mau bisa ada kita buat tapi sih dong"),
            _w("makan kopi musik bola kerja teman keluarga malam orang hidup waktu kota film "
                  "sekolah uang kucing hujan tahun pesta main buku rumah dunia cinta"),
            ("wkwkwk", "selamat tahun baru!!", "iya", "makasih", "mantap"),
            (".", "!", "?", "!!"),
            ("Jakarta, Indonesia", "Bandung", "Surabaya"),
            _latin_word("b c d g h j k l m n p r s t w y ng ny", "a e i o u", "an kan nya lah i"),
        ),
        _Lang(
            "ja", False,
            _w("は が を に で と も の です ます けど よね 本当に すごい 今日 みんな "
                  "ちょっと やっぱり ね な って"),
            _w("サッカー 音楽 ご飯 海 仕事 友達 家族 夜 人 人生 時間 街 映画 学校 お金 犬 猫 "
                  "雨 年 ゲーム 本 家 世界 好き アニメ ライブ 推し"),
            ("それな", "草", "おめでとう！", "あけおめ！", "わかる", "ありがとう", "かわいい"),
            ("。", "！", "？", "笑"),
            ("東京", "大阪府", "日本 福岡", "名古屋"),
            _ja_word,
        ),
        _Lang(
            "ko", True,
            _w("은 는 이 가 을 를 에서 그리고 정말 너무 진짜 오늘 우리 그냥 다시 좀 더 "
                  "했어요 합니다"),
            _w("축구 음악 밥 바다 일 친구 가족 밤 사람 인생 시간 도시 영화 학교 돈 강아지 "
                  "고양이 비 해 게임 책 집 세계 사랑 콘서트"),
            ("ㅋㅋㅋㅋ", "대박", "고마워요", "진짜?", "맞아요", "새해 복!!"),
            (".", "!", "?", "~"),
            ("서울", "부산", "대한민국"),
            _ko_word,
        ),
        _Lang(
            "ar", True,
            _w("في من على إلى هذا هذه أن لا ما مع كل الله يا هو هي انا انت عن قد بعد كان "
                  "اليوم والله جدا"),
            _w("مباراة موسيقى طعام بحر عمل اصدقاء عائلة ليلة ناس حياة وقت مدينة فيلم مدرسة "
                  "مال قطة مطر سنة حفلة فريق كتاب بيت عالم حب"),
            ("ههههههه", "صح", "شكرا", "ما شاء الله", "آمين"),
            (".", "!", "؟"),
            ("الرياض", "القاهرة, مصر", "جدة", "الكويت"),
            _ar_word,
        ),
        _Lang(
            "th", False,
            _w("ที่ และ ของ ใน มี ไม่ เป็น ได้ จะ ก็ ว่า นะ ค่ะ ครับ มาก วันนี้ เรา คน แล้ว "
                  "อยู่"),
            _w("ฟุตบอล เพลง อาหาร ทะเล งาน เพื่อน ครอบครัว ชีวิต เวลา เมือง หนัง โรงเรียน "
                  "เงิน หมา แมว ฝน ปี เกม หนังสือ บ้าน โลก รัก"),
            ("55555", "สวัสดีปีใหม่", "ใช่", "ขอบคุณค่ะ", "น่ารัก"),
            (" ", "!", "555"),
            ("กรุงเทพมหานคร", "เชียงใหม่", "ประเทศไทย"),
            _th_word,
        ),
        _Lang(
            "und", True, (), (),
            ("😂😂😂", "🔥🔥", "❤️❤️❤️", "👏👏👏", "🙏", "😭😭", "?!", "👀"),
            ("", "!", "?"),
            ("🌍", "here", "earth"),
            _und_word,
        ),
    )
}  # fmt: skip
_LANG_CODES = tuple(code for code, _ in _LANG_WEIGHTS)
_LANG_CUM = tuple(itertools.accumulate(w for _, w in _LANG_WEIGHTS))


@cache
def _lexicon(lang: str) -> tuple[str, ...]:
    """Content words of ``lang``: its real words plus ~1,500 pseudo words in its script."""
    spec = _LANGS[lang]
    if lang == "en":
        return tuple(dict.fromkeys(w for theme in _EN_THEMES for w in theme.split()))
    if lang == "und":
        return _UND_WORDS
    rng = random.Random(f"corpusforge-lexicon-{lang}")
    words = dict.fromkeys(spec.content)
    while len(words) < 1500 + len(spec.content):
        words.setdefault(spec.word(rng))
    return tuple(words)


class _Topic(NamedTuple):
    """A conversation topic: its words, its hashtag and the word slots texts draw from."""

    words: tuple[str, ...]
    tag: str
    slots: tuple[str, ...]  # 55% topic words, 33% function words, 12% other words


@lru_cache(maxsize=65536)
def _topic(lang: str, topic: int) -> _Topic:
    """The vocabulary of conversation topic ``topic`` in ``lang``.

    Texts of one conversation draw most of their words from it, so they are closer to
    each other than to texts of other conversations.
    """
    rng = random.Random(f"corpusforge-topic-{lang}-{topic}")
    spec = _LANGS[lang]
    lex = _lexicon(lang)
    if lang == "en":
        theme = _EN_THEMES[topic % len(_EN_THEMES)].split()
        words = rng.sample(theme, 6) + rng.sample(lex, 4)
    elif lang == "und":
        words = rng.sample(_UND_WORDS, 4)
    else:
        words = rng.sample(lex, 10)
    function = spec.function or _UND_WORDS
    slots = (
        [words[i % len(words)] for i in range(55)]
        + [function[i % len(function)] for i in range(33)]
        + rng.sample(lex, 12)
    )
    first, second = words[0], words[1]
    if not first.isascii():  # non-Latin hashtags are a word of the script, marks included
        return _Topic(tuple(words), first, tuple(slots))
    tag = "".join(ch for ch in first.capitalize() + second.capitalize() if ch.isalnum())
    return _Topic(tuple(words), tag, tuple(slots))


# --------------------------------------------------------------------------- users


@dataclass(frozen=True)
class _Config:
    """The validated arguments of one archive (hashable: it keys per-process caches)."""

    tweets: int
    layout: str
    api: str
    seed: int
    start: datetime  # archive-local
    n_users: int
    bz2_level: int


class _User(NamedTuple):
    id: int
    screen_name: str
    name: str
    lang: str
    v1: bytes  # the v1.1 user object, non-ASCII escaped, "/" not yet escaped
    v2: dict[str, Any]  # the v2 user object


_FIRST = _w("Anna Ben Chloe Dan Emma Finn Grace Hugo Isla Jack Kate Liam Maya Noah Olivia Sam")
_LAST = _w("Smith Jones Brown Taylor Wilson Evans Thomas Johnson Walker White Green Hall")
_COLOURS = ("1DA1F2", "C0DEED", "F5F8FA", "000000", "DDEEF6", "333333", "FF691F", "89C9FA")


def _esc(s: str) -> Any:
    """A v1 string value: ``\\uXXXX``-escaped as Twitter did, as an orjson fragment."""
    return s if s.isascii() else orjson.Fragment(json.encoder.encode_basestring_ascii(s))


def _twitter_time(ms: int) -> str:
    return _twitter_second(ms // 1000)


@lru_cache(maxsize=4096)
def _twitter_second(second: int) -> str:
    """``created_at`` as v1.1 writes it: ``Fri Jan 01 17:29:00 +0000 2021``."""
    t = datetime.fromtimestamp(second, UTC)
    return (
        f"{calendar.day_abbr[t.weekday()]} {calendar.month_abbr[t.month]} "
        f"{t.day:02d} {t:%H:%M:%S} +0000 {t.year}"
    )


def _iso_time(ms: int) -> str:
    return _iso_second(ms // 1000)


@lru_cache(maxsize=4096)
def _iso_second(second: int) -> str:
    """``created_at`` as v2 writes it: ``2022-03-01T00:00:00.000Z``."""
    return f"{datetime.fromtimestamp(second, UTC):%Y-%m-%dT%H:%M:%S}.000Z"


_EARLIEST_USER_MS = 1_167_609_600_000  # 2007-01-01: accounts before that are rare
_SNOWFLAKE_USERS_MS = 1_451_606_400_000  # 2016-01-01: later accounts get snowflake ids


def _make_user(seed: int, index: int, latest_ms: int) -> _User:
    """User ``index`` of the pool: its v1.1 object (pre-serialised) and its v2 object.

    Args:
        seed: the archive seed.
        index: position in the pool.
        latest_ms: the newest account creation time allowed (before the archive starts).
    """
    rng = random.Random(seeded_hash(seed, "synth-user", index))
    lang = _LANG_CODES[bisect.bisect_right(_LANG_CUM, rng.randrange(_LANG_CUM[-1]))]
    spec = _LANGS[lang]
    handle = rng.choice(_lexicon("en")) + rng.choice(("", "_", "x", "_the_", ""))
    screen_name = handle[: 15 - len(str(index))] + str(index)  # unique, [A-Za-z0-9_]{1,15}
    if lang == "en":
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    else:
        name = " ".join(spec.word(rng).capitalize() for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.2:
        name += rng.choice(_EMOJI)
    desc_words = [rng.choice(_lexicon(lang)) for _ in range(rng.randint(4, 14))]
    sep = " " if spec.spaced else ""
    description = None if rng.random() < 0.2 else sep.join(desc_words) + " " + rng.choice(_EMOJI)
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
        "name": _esc(name),
        "screen_name": screen_name,
        "location": None if location is None else _esc(location),
        "url": None,
        "description": None if description is None else _esc(description),
        "translator_type": "none",
        "protected": False,
        "verified": followers > 50_000,
        "followers_count": followers,
        "friends_count": friends,
        "listed_count": listed,
        "favourites_count": favourites,
        "statuses_count": statuses,
        "created_at": _twitter_time(created_ms),
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
        "created_at": _iso_time(created_ms),
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
    return _User(uid, screen_name, name, lang, orjson.dumps(v1), v2)


@lru_cache(maxsize=2)
def _user_pool(seed: int, n_users: int, latest_ms: int) -> tuple[_User, ...]:
    return tuple(_make_user(seed, i, latest_ms) for i in range(n_users))


def _users_of(cfg: _Config) -> tuple[_User, ...]:
    """The user pool of an archive: accounts created before its first day."""
    first_ms = int((cfg.start - PATH_UTC_OFFSET).replace(tzinfo=UTC).timestamp() * 1000)
    return _user_pool(cfg.seed, cfg.n_users, first_ms - 86_400_000)


# --------------------------------------------------------------------------- the plan

_ORIGINAL, _REPLY, _QUOTE, _RETWEET = range(4)
_NORMAL, _SHORT, _LONG, _BOT = range(4)


class _Tw(NamedTuple):
    """A planned tweet: everything its rendering depends on, parents included."""

    id: int
    ts: int  # timestamp_ms of the line; also the snowflake time of ``id``
    user: int  # index into the user pool
    lang: str
    topic: int
    style: int
    reply_to: _Tw | None = None
    quote: _Tw | None = None
    retweet: _Tw | None = None
    conv: int = 0  # v2 conversation_id (the reply chain's root)


# A planned line: ("t", _Tw) | ("d", status_id, user_id, ts) | ("l", track, ts)
# | ("e", ts) | ("b",)
_Line = tuple[Any, ...]


class _MemberJob(NamedTuple):
    seq: int  # position in the archive
    name: str
    minute: datetime  # archive-local
    lines: list[_Line]


class _Conv:
    """A conversation root and the reply/quote lines that joined it so far."""

    __slots__ = ("children", "emitted", "in_archive", "lang", "nodes", "spec", "topic")

    def __init__(self, spec: _Tw | None, lang: str, topic: int, in_archive: bool) -> None:
        self.spec = spec  # None until an in-archive root is emitted
        self.lang, self.topic, self.in_archive = lang, topic, in_archive
        self.emitted = False
        self.nodes: deque[tuple[_Tw, int]] = deque(maxlen=64)  # (tweet, depth), latest
        self.children = 0


class _Planner:
    """Decides every line of the archive, in order, and keeps the ground truth."""

    def __init__(self, cfg: _Config, users: Sequence[_User]) -> None:
        self.cfg = cfg
        self.users = users
        self.rng = random.Random(seeded_hash(cfg.seed, "synth-plan"))
        self.by_lang: dict[str, list[int]] = {code: [] for code in _LANG_CODES}
        for i, u in enumerate(users):
            self.by_lang[u.lang].append(i)
        for code, members in self.by_lang.items():
            if not members:  # tiny pools: borrow any user
                members.append(_LANG_CODES.index(code) % len(users))
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
        return _LANG_CODES[bisect.bisect_right(_LANG_CUM, self.rng.randrange(_LANG_CUM[-1]))]

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
                spec = _Tw(self._snowflake(ts), ts, self._user(lang), lang, topic, _NORMAL)
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
            return _SHORT
        if r < short + 0.12:
            return _LONG
        if kind == _ORIGINAL and r > 0.985:
            return _BOT
        return _NORMAL

    def _child_lang_topic(self, conv: _Conv) -> tuple[str, int]:
        rng = self.rng
        lang = conv.lang if rng.random() < 0.9 else self._lang()
        topic = conv.topic if lang == conv.lang and rng.random() < 0.85 else rng.randrange(10**6)
        return lang, topic

    # -- tweets

    def _tweet(self, ts: int) -> _Tw:
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
            return _Tw(
                self._snowflake(ts), ts, self._user(target.lang), target.lang, target.topic,
                _NORMAL, retweet=target, conv=0,
            )  # fmt: skip
        lang, topic = self._child_lang_topic(conv)
        parent, depth = root, 0
        if joinable and rng.random() < 0.35:
            parent, depth = rng.choice(joinable)
        tid = self._snowflake(ts)
        if kind == _REPLY:
            if rng.random() < 0.15:  # a parent the archive never saw (the 1% sample)
                pts = ts - rng.randrange(1_000, 7_200_000)
                parent = _Tw(
                    self._snowflake(pts), pts, self._user(conv.lang), conv.lang, conv.topic,
                    _NORMAL, reply_to=root, conv=root.id,
                )  # fmt: skip
                depth = 1
            spec = _Tw(tid, ts, self._user(lang), lang, topic, self._style(kind),
                       reply_to=parent, conv=root.id)  # fmt: skip
        else:
            reply_to = None
            if rng.random() < 0.05:  # a quote that also replies: two edges
                reply_to = root
            conv_id = root.id if reply_to else tid
            spec = _Tw(tid, ts, self._user(lang), lang, topic, self._style(kind),
                       reply_to=reply_to, quote=parent, conv=conv_id)  # fmt: skip
        conv.nodes.append((spec, depth + 1))
        conv.children += 1
        return spec

    def _emit_root(self, conv: _Conv, ts: int) -> _Tw:
        tid = self._snowflake(ts)
        conv.spec = _Tw(tid, ts, self._user(conv.lang), conv.lang, conv.topic, _NORMAL, conv=tid)
        conv.emitted = True
        return conv.spec

    def _original(self, ts: int) -> _Tw:
        rng = self.rng
        if rng.random() < 0.3:
            conv = self._pick_conv()
            if conv.in_archive and not conv.emitted:
                return self._emit_root(conv, ts)
        style = self._style(_ORIGINAL)
        lang = "en" if style == _BOT else self._lang()
        tid = self._snowflake(ts)
        return _Tw(tid, ts, self._user(lang), lang, rng.randrange(10**6), style, conv=tid)

    def _record_tweet(self, t: _Tw) -> None:
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

    def _delete(self, ts: int) -> _Line:
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

    def members(self) -> Iterator[_MemberJob]:
        """The member jobs, in archive order; the truth is complete once exhausted."""
        rng, cfg = self.rng, self.cfg
        kinds = [k for k, n in self.line_kinds.items() for _ in range(n)]
        rng.shuffle(kinds)
        sizes, minutes = self.layout_members()
        pos = 0
        for index, (size, minute) in enumerate(zip(sizes, minutes, strict=True)):
            base = int((minute - PATH_UTC_OFFSET).replace(tzinfo=UTC).timestamp() * 1000)
            slot = max(1, 60_000 // size)
            lines: list[_Line] = []
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
            yield _MemberJob(index, member_name(cfg.layout, minute), minute, lines)

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


# --------------------------------------------------------------------------- texts


class _Text(NamedTuple):
    """A composed tweet text (unescaped) and what its entities point at."""

    raw: str
    start: int  # display_text_range start: after the leading @mentions of a reply
    urls: tuple[tuple[str, str, str], ...]  # (t.co url, expanded, display)
    mentions: tuple[int, ...]  # user pool indices, in text order
    tags: tuple[str, ...]
    media: tuple[int, str] | None = None  # (media id, t.co link at the end) of a photo


def _mix(x: int) -> int:
    """A cheap 64-bit scramble of ``x``, for per-tweet counts and links."""
    return (x * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF


_PHOTO_SIZES = {
    "thumb": {"w": 150, "h": 150, "resize": "crop"},
    "small": {"w": 680, "h": 510, "resize": "fit"},
    "medium": {"w": 1200, "h": 900, "resize": "fit"},
    "large": {"w": 2048, "h": 1536, "resize": "fit"},
}


def _shown_end(raw: str, composed: _Text) -> int:
    """End of ``display_text_range``: before a trailing photo link."""
    if composed.media is not None and raw.endswith(composed.media[1]):
        return len(raw) - len(composed.media[1]) - 1
    return len(raw)


def _html(s: str) -> str:
    """Twitter's escaping of the text fields: only ``&``, ``<`` and ``>``."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_BASE62 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _tco(rng: random.Random) -> str:
    return "https://t.co/" + "".join(rng.choice(_BASE62) for _ in range(10))


def _tco_of(key: int) -> str:
    """A t.co link derived from ``key`` (a tweet id): for the links Twitter adds itself."""
    h, code = _mix(key), []
    for _ in range(10):
        h, r = divmod(h, 62)
        code.append(_BASE62[r])
    return "https://t.co/" + "".join(code)


def _compose(t: _Tw, salt: int, users: Sequence[_User]) -> _Text:
    """The text of a non-retweet ``t``: a function of ``(salt, t)`` only.

    Args:
        t: the planned tweet.
        salt: ``seeded_hash(seed, "synth-text")``: the archive seed's share.
        users: the user pool (for @mentions).
    """
    rng = random.Random(salt ^ _mix(t.id))
    spec = _LANGS[t.lang]
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
    if t.style == _SHORT:
        body = rng.choice(spec.short)
    elif t.style == _BOT:
        body = rng.choice(_BOT_TEXTS)
    else:
        body = _body(t, rng, spec, urls, tags, mentions, users)
    media = None
    if t.style in (_NORMAL, _LONG) and t.lang != "und" and rng.random() < 0.15:
        media = (t.id - 1 - rng.getrandbits(24), _tco(rng))  # uploaded just before
        body += " " + media[1]
    return _Text(prefix + body, len(prefix), tuple(urls), tuple(mentions), tuple(tags), media)


def _body(
    t: _Tw,
    rng: random.Random,
    spec: _Lang,
    urls: list[tuple[str, str, str]],
    tags: list[str],
    mentions: list[int],
    users: Sequence[_User],
) -> str:
    topic = _topic(t.lang, t.topic)
    tag = topic.tag
    if t.lang == "und":
        body = "".join(rng.choices(_EMOJI, k=rng.randint(1, 4)))
        if rng.random() < 0.5:
            tags.append(tag)
            body += f" #{tag}"
        return body
    if t.style == _LONG:
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
            rng.choices(_EMOJI, k=rng.randint(1, 3))
        )
    if rng.random() < 0.18:
        tco, domain = _tco(rng), rng.choice(_DOMAINS)
        path = f"{rng.choice(_lexicon('en'))}-{rng.getrandbits(32):x}"
        expanded = f"https://{domain}/{path}"
        shown = f"{domain}/{path}"
        urls.append((tco, expanded, shown if len(shown) <= 26 else shown[:25] + "…"))
        body += " " + tco
    return body


_Url = tuple[str, str, str]  # (t.co url, expanded url, display url)


def _find_entities(
    text: str, composed: _Text, users: Sequence[_User], extra_urls: Sequence[_Url] = ()
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, str]], list[tuple[int, int, _Url]]]:
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


# --------------------------------------------------------------------------- rendering


class _Renderer:
    """Turns planned lines into bytes; one per worker process and archive."""

    def __init__(self, cfg: _Config) -> None:
        seed = cfg.seed
        self.seed, self.api = seed, cfg.api
        self.salt = seeded_hash(seed, "synth-text")
        self.users = _users_of(cfg)
        self.texts: dict[int, _Text] = {}
        self.embedded: dict[tuple[int, bool], bytes] = {}
        self.v2_cache: dict[int, dict[str, Any]] = {}
        self.rule_id = str(1_400_000_000_000_000_000 + seeded_hash(seed, "rule") % 10**17)

    def text(self, t: _Tw) -> _Text:
        """The composed text of ``t`` (cached: parents are embedded many times)."""
        text = self.texts.get(t.id)
        if text is None:
            if len(self.texts) > 50_000:
                self.texts.clear()
            text = self.texts[t.id] = _compose(t, self.salt, self.users)
        return text

    def _retweet_text(self, orig: _Tw, *, escaped: bool = False) -> _Text:
        """``RT @author: text`` cut to 140 characters with ``…``, as both APIs send it."""
        ocomp = self.text(orig)
        body = _html(ocomp.raw) if escaped else ocomp.raw
        raw = f"RT @{self.users[orig.user].screen_name}: {body}"
        if len(raw) > 140:
            raw = raw[:139] + "…"
        return _Text(raw, 0, ocomp.urls, (orig.user, *ocomp.mentions), ocomp.tags, ocomp.media)

    # -- v1

    def _media_v1(self, owner: _Tw, media: tuple[int, str], a: int, b: int) -> dict[str, Any]:
        """A v1.1 photo entity of ``owner``'s tweet."""
        mid, tco = media
        code = _tco_of(mid)[-10:] + _tco_of(mid + 1)[-5:]
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
        self, text: str, composed: _Text, owner: _Tw, extra: Sequence[_Url] = ()
    ) -> dict[str, Any]:
        """``entities`` of ``text`` (``media`` too when its photo link is in it)."""
        mentions, tags, links = _find_entities(text, composed, self.users, extra)
        entities = {
            "hashtags": [{"text": _esc(tag), "indices": [a, b]} for a, b, tag in tags],
            "urls": [
                {"url": u[0], "expanded_url": u[1], "display_url": _esc(u[2]), "indices": [a, b]}
                for a, b, u in links
            ],
            "user_mentions": [
                {
                    "screen_name": self.users[m].screen_name,
                    "name": _esc(self.users[m].name),
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

    def _status_v1(self, t: _Tw, *, top: bool, with_quote: bool = True) -> dict[str, Any]:
        users = self.users
        author = users[t.user]
        h = _mix(t.id)
        href, app = _SOURCES[h % len(_SOURCES)]
        d: dict[str, Any] = {
            "created_at": _twitter_time(t.ts),
            "id": t.id,
            "id_str": str(t.id),
        }
        extended: dict[str, Any] | None = None
        if t.retweet is not None:
            composed = self._retweet_text(t.retweet)
            raw = composed.raw
            d["text"] = _esc(_html(raw))
            entities = self._entities_v1(raw, composed, t.retweet)
        else:
            composed = self.text(t)
            raw = composed.raw
            if len(raw) - composed.start > 140:  # compatibility mode: cut, full text aside
                web = (_tco_of(t.id), f"https://twitter.com/i/web/status/{t.id}",
                       "twitter.com/i/web/status/1…")  # fmt: skip
                cut = raw.rfind(" ", 0, 114) if " " in raw[:114] else 114
                short = raw[: max(cut, composed.start + 1)] + "… " + web[0]
                d["text"] = _esc(_html(short))
                full_entities = self._entities_v1(raw, composed, t)
                extended = {
                    "full_text": _esc(_html(raw)),
                    "display_text_range": [composed.start, _shown_end(raw, composed)],
                    "entities": full_entities,
                }
                if "media" in full_entities:
                    extended["extended_entities"] = {"media": full_entities["media"]}
                entities = self._entities_v1(short, composed, t, (web,))
            else:
                d["text"] = _esc(_html(raw))
                entities = self._entities_v1(raw, composed, t)
                if composed.start or composed.media:
                    d["display_text_range"] = [composed.start, _shown_end(raw, composed)]
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
                    "url": _tco_of(quoted.id + 1),
                    "expanded": f"https://twitter.com/{qname}/status/{quoted.id}",
                    "display": _esc(f"twitter.com/{qname}/s…"),
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

    def _embedded_v1(self, t: _Tw, with_quote: bool) -> bytes:
        key = (t.id, with_quote)
        cached = self.embedded.get(key)
        if cached is None:
            if len(self.embedded) > 20_000:
                self.embedded.clear()
            cached = orjson.dumps(self._status_v1(t, top=False, with_quote=with_quote))
            self.embedded[key] = cached
        return cached

    def line_v1(self, line: _Line) -> bytes:
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

    def _text_v2(self, t: _Tw) -> tuple[str, _Text]:
        """The v2 ``text`` of ``t`` (HTML-escaped; a retweet's cut ``RT @…``) and its parts."""
        if t.retweet is not None:
            composed = self._retweet_text(t.retweet, escaped=True)
            return composed.raw, composed
        composed = self.text(t)
        return _html(composed.raw), composed

    def _media_v2(self, t: _Tw) -> tuple[str, dict[str, Any]] | None:
        """``(media_key, includes.media object)`` of the photo shown in ``t``'s text."""
        text, composed = self._text_v2(t)
        if composed.media is None or composed.media[1] not in text:
            return None
        key = f"3_{composed.media[0]}"
        code = _tco_of(composed.media[0])[-10:] + _tco_of(composed.media[0] + 1)[-5:]
        url = f"https://pbs.twimg.com/media/{code}.jpg"
        return key, {"media_key": key, "type": "photo", "url": url, "width": 2048, "height": 1536}

    def _tweet_v2(self, t: _Tw, *, top: bool) -> dict[str, Any]:
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
        mentions, tags, links = _find_entities(text, composed, users)
        h = _mix(t.id)
        d: dict[str, Any] = {}
        media = self._media_v2(t)
        if media is not None:
            d["attachments"] = {"media_keys": [media[0]]}
        d["author_id"] = str(users[t.user].id)
        d["conversation_id"] = str(t.conv or t.id)
        d["created_at"] = _iso_time(t.ts)
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

    def line_v2(self, line: _Line) -> bytes:
        kind = line[0]
        if kind == "t":
            t: _Tw = line[1]
            data = self._tweet_v2(t, top=True)
            referenced: list[_Tw] = []
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


_RENDERERS: dict[_Config, _Renderer] = {}


def _renderer(cfg: _Config) -> _Renderer:
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


def _render_member(args: tuple[_Config, _MemberJob]) -> tuple[int, bytes, int]:
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


# --------------------------------------------------------------------------- containers

_ZIP_DIR_ATTR = (0o40755 << 16) | 0x10  # as in the real zip
_ZIP_FILE_ATTR = 0o100600 << 16


def _parents(name: str) -> list[str]:
    """The folders above a member, outermost first, each ending in ``/``."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]


def _mtime(minute: datetime) -> int:
    """Member mtime: when its minute closed (UTC epoch seconds)."""
    return int((minute - PATH_UTC_OFFSET + timedelta(minutes=1)).replace(tzinfo=UTC).timestamp())


class _Sink:
    """Adds members (and their parent folders, once) to an archive file."""

    def add(self, name: str, minute: datetime, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> _Sink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ZipSink(_Sink):
    """The zip-2020 container: directory entries, deflated members, unix attributes."""

    def __init__(self, out: Path) -> None:
        self.zf = zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6)
        self.dirs: set[str] = set()

    def add(self, name: str, minute: datetime, data: bytes) -> None:
        when = (minute + timedelta(minutes=1)).timetuple()[:6]
        for d in _parents(name):
            if d not in self.dirs:
                self.dirs.add(d)
                info = zipfile.ZipInfo(d, when)
                info.create_system, info.external_attr = 3, _ZIP_DIR_ATTR
                self.zf.writestr(info, b"", compress_type=zipfile.ZIP_STORED)
        info = zipfile.ZipInfo(name, when)
        info.create_system, info.external_attr = 3, _ZIP_FILE_ATTR
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(info, data, compresslevel=6)

    def close(self) -> None:
        self.zf.close()


class _TarSink(_Sink):
    """GNU tar (optionally gzipped as a whole) with directory entries and fixed metadata."""

    def __init__(self, out: Path, gz: bool) -> None:
        self.file = open(out, "wb")  # noqa: SIM115 - closed in close()
        self.gz = (
            gzip.GzipFile(filename="", fileobj=self.file, mode="wb", compresslevel=6, mtime=0)
            if gz
            else None
        )
        self.tf = tarfile.open(  # noqa: SIM115 - closed in close()
            fileobj=self.gz or self.file, mode="w", format=tarfile.GNU_FORMAT
        )
        self.dirs: set[str] = set()

    def add(self, name: str, minute: datetime, data: bytes) -> None:
        mtime = _mtime(minute)
        for d in _parents(name):
            if d not in self.dirs:
                self.dirs.add(d)
                info = tarfile.TarInfo(d.rstrip("/"))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
                self.tf.addfile(info)
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), 0o644, mtime
        self.tf.addfile(info, io.BytesIO(data))

    def close(self) -> None:
        self.tf.close()
        if self.gz is not None:
            self.gz.close()
        self.file.close()


# --------------------------------------------------------------------------- entry point


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
        truth: also write the truth as JSON to ``truth_path(out)``.
        workers: processes that render and compress members; ``None`` picks one below
            5,000 tweets, else one per available core. The output does not depend on it.
        bz2_level: bz2 compression level 1-9 (9: 900 kB blocks, like the real archives).

    Returns:
        The ``SynthTruth`` of the archive.

    Raises:
        ValueError: a bad layout, api, tweet count, bz2 level or worker count, or v1
            asked for the v2-only tar-2022 layout.
    """
    _check_layout(layout)
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
    if start < _EARLIEST_START:
        raise ValueError(f"start must be on or after {_EARLIEST_START:%Y-%m-%d}; got {start}")

    n_users = max(50, min(_N_USERS_MAX, tweets // 3))
    cfg = _Config(tweets, layout, api, seed, start, n_users, bz2_level)
    planner = _Planner(cfg, _users_of(cfg))
    procs = workers or _default_workers(len(planner.layout_members()[0]), tweets)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    multistream: list[str] = []
    raw_total = 0
    sink = _ZipSink(out) if layout == "zip-2020" else _TarSink(out, gz=layout == "tar-gz")
    with sink:
        for job, (raw_len, payload, streams) in _rendered(cfg, planner.members(), procs):
            sink.add(job.name, job.minute, payload)
            names.append(job.name)
            if streams > 1:
                multistream.append(job.name)
            raw_total += raw_len
    result = planner.truth(out.name, names, multistream, raw_total)
    if truth:
        truth_path(out).write_bytes(result.to_json())
    return result


def _rendered(
    cfg: _Config, jobs: Iterator[_MemberJob], procs: int
) -> Iterator[tuple[_MemberJob, tuple[int, bytes, int]]]:
    """Render and compress members, in ``procs`` processes, yielding them in order."""
    if procs == 1:
        for job in jobs:
            yield job, _render_member((cfg, job))
        return
    pending: deque[_MemberJob] = deque()  # planned in the pool's feeder thread

    def tasks() -> Iterator[tuple[_Config, _MemberJob]]:
        for job in jobs:
            pending.append(job)
            yield cfg, job

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ctx.Pool(procs) as pool:
        for result in pool.imap(_render_member, tasks()):
            yield pending.popleft(), result
