"""Languages of the synthetic tweets: turns a ``lang`` code (and a topic) into words.

Each of the eleven ``lang`` codes, weighted as in the sample stream, has its script, real
function and content words and a pseudo-word generator; ``lexicon`` adds ~1,500 pseudo
words per script, and ``topic_of`` gives a conversation topic its vocabulary and hashtag,
so texts of one conversation share words. Pure functions of their arguments (seeded by
name), cached per process.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple


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


EMOJI = (
    "😂", "❤️", "🔥", "😭", "🙏", "✨", "👏", "😍", "🎉", "🥺", "💯", "👀", "😅", "🤣",
    "💙", "🎆", "🥂", "⚽", "🎶", "☀️", "🌧️", "🚀", "👍🏽", "🇧🇷",
)  # fmt: skip


@dataclass(frozen=True)
class Lang:
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


LANGS: dict[str, Lang] = {
    lang.code: lang
    for lang in (
        Lang(
            "en", True, _EN_FUNCTION,
            _w("day time people life week world thing friend love feeling night morning year "
                  "moment video photo news story team home guys everyone"),
            ("happy new year!!", "lol", "same", "so true", "omg yes", "facts", "thank you!!",
             "love this", "this 😂", "🔥🔥🔥", "no way", "yes!!", "me too", "congrats!!", "wow"),
            (".", "!", "?", "!!", "..."),
            ("London, England", "Los Angeles, CA", "Lagos, Nigeria", "Toronto", "New York, USA"),
            _en_word,
        ),
        Lang(
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
        Lang(
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
        Lang(
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
        Lang(
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
        Lang(
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
        Lang(
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
        Lang(
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
        Lang(
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
        Lang(
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
        Lang(
            "und", True, (), (),
            ("😂😂😂", "🔥🔥", "❤️❤️❤️", "👏👏👏", "🙏", "😭😭", "?!", "👀"),
            ("", "!", "?"),
            ("🌍", "here", "earth"),
            _und_word,
        ),
    )
}  # fmt: skip
LANG_CODES = tuple(code for code, _ in _LANG_WEIGHTS)
LANG_CUM = tuple(itertools.accumulate(w for _, w in _LANG_WEIGHTS))


@cache
def lexicon(lang: str) -> tuple[str, ...]:
    """Content words of ``lang``: its real words plus ~1,500 pseudo words in its script."""
    spec = LANGS[lang]
    if lang == "en":
        return tuple(dict.fromkeys(w for theme in _EN_THEMES for w in theme.split()))
    if lang == "und":
        return _UND_WORDS
    rng = random.Random(f"corpusforge-lexicon-{lang}")
    words = dict.fromkeys(spec.content)
    while len(words) < 1500 + len(spec.content):
        words.setdefault(spec.word(rng))
    return tuple(words)


class Topic(NamedTuple):
    """A conversation topic: its words, its hashtag and the word slots texts draw from."""

    words: tuple[str, ...]
    tag: str
    slots: tuple[str, ...]  # 55% topic words, 33% function words, 12% other words


@lru_cache(maxsize=65536)
def topic_of(lang: str, topic: int) -> Topic:
    """The vocabulary of conversation topic ``topic`` in ``lang``.

    Texts of one conversation draw most of their words from it, so they are closer to
    each other than to texts of other conversations.
    """
    rng = random.Random(f"corpusforge-topic-{lang}-{topic}")
    spec = LANGS[lang]
    lex = lexicon(lang)
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
        return Topic(tuple(words), first, tuple(slots))
    tag = "".join(ch for ch in first.capitalize() + second.capitalize() if ch.isalnum())
    return Topic(tuple(words), tag, tuple(slots))
