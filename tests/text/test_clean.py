"""Cleaning profiles: each step and each profile on inline tweets, plus properties."""

from __future__ import annotations

import re
from dataclasses import asdict, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpusforge.text.clean import (
    _INVISIBLE_RE,
    _LINE_BREAK_RE,
    _MENTION_RE,
    _URL_RE,
    PROFILES,
    CleanProfile,
    _may_hold_mention,
    _may_hold_url,
    clean_text,
    get_profile,
    one_line,
)

PAPER = PROFILES["paper"]
CT = PROFILES["ct"]
CT_LOWER = get_profile("ct", lowercase=True)

# Independent of the module's patterns: what the output must never contain.
URL = re.compile(r"(?i)https?://|(?<!\w)www\.\S|(?<!\w)t\.co/")
MENTION = re.compile(r"(?<!\w)[@＠]\w+")


NOTHING = CleanProfile(
    name="only",
    lowercase=False,
    urls="keep",
    mentions="keep",
    html_entities=False,
    fix_encoding=False,
    emoji_to_text=False,
)


def only(**flags: Any) -> CleanProfile:
    """A profile doing only the given steps (and the invisible and whitespace ones)."""
    return replace(NOTHING, **flags)


# --- profiles ---------------------------------------------------------------------------


def test_profiles_follow_the_papers() -> None:
    assert asdict(PAPER) == {
        "name": "paper",
        "lowercase": True,
        "urls": "remove",
        "mentions": "remove",
        "html_entities": True,
        "fix_encoding": False,
        "emoji_to_text": False,
    }
    assert asdict(CT) == {
        "name": "ct",
        "lowercase": False,
        "urls": "token",
        "mentions": "token",
        "html_entities": True,
        "fix_encoding": True,
        "emoji_to_text": True,
    }


def test_get_profile_returns_the_profile_or_overrides_lowercase() -> None:
    assert get_profile("paper") is PAPER
    assert get_profile("ct", lowercase=None) is CT
    assert get_profile("ct", lowercase=True).lowercase is True
    assert get_profile("ct", lowercase=True).name == "ct"
    assert get_profile("paper", lowercase=False).urls == "remove"


def test_get_profile_unknown_name_lists_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown cleaning profile 'bertweet'; known: ct, paper"):
        get_profile("bertweet")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"urls": "delete"}, r"CleanProfile.urls must be one of remove, token, keep, got 'delete'"),
        ({"mentions": "MASK"}, r"CleanProfile.mentions must be one of .*, got 'MASK'"),
        ({"lowercase": "yes"}, r"CleanProfile.lowercase must be a bool, got 'yes'"),
        ({"emoji_to_text": 1}, r"CleanProfile.emoji_to_text must be a bool, got 1"),
        ({"name": ""}, r"CleanProfile.name must be a non-empty str, got ''"),
    ],
)
def test_clean_profile_rejects_bad_values(flags: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        only(**flags)


# --- steps ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tom &amp; Jerry &lt;3 &gt;_&lt; &quot;hi&quot;", 'Tom & Jerry <3 >_< "hi"'),
        ("&amp;amp;amp;lt;b&amp;gt;", "<b>"),  # decoded until none is left
        ("it&#8217;s &#x1F600; &#65;&#x42;", "it’s 😀 AB"),
        ("&notice &copy 2020 AT&T &foo;", "&notice &copy 2020 AT&T &foo;"),  # no ';', unknown
        ("&#9999999999; &#0;", "\ufffd \ufffd"),  # out of range, as HTML5 does
        ("&#" + "9" * 5000 + ";", "&#" + "9" * 5000 + ";"),  # too long for an int: kept
    ],
)
def test_html_entities(text: str, expected: str) -> None:
    assert clean_text(text, only(html_entities=True)) == expected


def test_html_entities_off_keeps_them() -> None:
    assert clean_text("Tom &amp; Jerry", only()) == "Tom &amp; Jerry"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Das ist so schÃ¶n", "Das ist so schön"),
        ("Itâ€™s a cafÃ©", "It’s a café"),
        ("&Atilde;&para;", "ö"),  # mojibake spelled as entities, decoded first
        ("Ã\u200b¶", "ö"),  # the second pass repairs what the ZWSP hid
        ("ＡＢＣ “quotes” ﬁ", "ＡＢＣ “quotes” ﬁ"),  # cosmetic rewrites stay off
    ],
)
def test_fix_encoding(text: str, expected: str) -> None:
    assert clean_text(text, only(fix_encoding=True, html_entities=True)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\u00adb c\u200bd \ufeffe f\u2060g", "ab cd e fg"),
        ("ctrl\x00\x07\x1b[0m \x85\x9f", "ctrl[0m"),
        ("\u200fשלום\u200e \u202bمرحبا\u202c", "שלום مرحبا"),
        ("\u3164\u3164", ""),  # Hangul fillers, the blank-tweet trick
        ("👨\u200d👩\u200d👧 می\u200cخواهم", "👨\u200d👩\u200d👧 می\u200cخواهم"),  # ZWJ, ZWNJ stay
        (
            "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
            "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
        ),
    ],
)
def test_invisible_characters(text: str, expected: str) -> None:
    assert clean_text(text, only()) == expected


def test_surrogates_are_joined_or_replaced() -> None:
    assert clean_text("\ud83d\ude00 ok \ud800 \udfff", only()) == "😀 ok \ufffd \ufffd"


def test_emoji_to_text() -> None:
    text = "Great game 🔥🔥 👍🏽 🇺🇸 #️⃣ \ufe0f"
    expected = "Great game :fire::fire: :thumbs_up_medium_skin_tone: :United_States: :keycap_#:"
    assert clean_text(text, only(emoji_to_text=True)) == expected


def test_lowercase_keeps_the_tokens() -> None:
    text = "Check THIS https://t.co/x @Bob HTTPURL @MENTION xHTTPURL"
    assert clean_text(text, CT_LOWER) == "check this HTTPURL @MENTION HTTPURL @MENTION xhttpurl"
    assert clean_text(text, PAPER) == "check this httpurl xhttpurl"


@pytest.mark.parametrize(
    ("text", "removed", "token"),
    [
        ("read http://a.b/c, now", "read now", "read HTTPURL now"),
        ("HTTPS://T.CO/XyZ www.Example.com/a?b=1 end", "end", "HTTPURL HTTPURL end"),
        ("t.co/abc pic.twitter.com/abc http://", "", "HTTPURL HTTPURL HTTPURL"),
        ("link:https://t.co/x (https://t.co/y)", "link: (", "link: HTTPURL ( HTTPURL"),
        ("seehttp://x.co awww.cute", "see awww.cute", "see HTTPURL awww.cute"),
        ("https&#58;//t.co/abc ht\u200btp://t.co/x", "", "HTTPURL HTTPURL"),
    ],
)
def test_urls(text: str, removed: str, token: str) -> None:
    assert clean_text(text, only(urls="remove", html_entities=True)) == removed
    assert clean_text(text, only(urls="token", html_entities=True)) == token


@pytest.mark.parametrize(
    ("text", "removed", "token"),
    [
        ("@alice @bob_99 thanks!", "thanks!", "@MENTION @MENTION thanks!"),
        ("@alice's cat, (@Bob)", "'s cat, ( )", "@MENTION's cat, (@MENTION)"),
        (
            "mail ann@example.com or @a_very_long_handle_2021",
            "mail ann@example.com or",
            "mail ann@example.com or @MENTION",
        ),
        ("@a@b ＠carol @José &#64;dan", "", "@MENTION @MENTION @MENTION @MENTION"),
        ("http:@user//x.com", "http: //x.com", "http:@MENTION//x.com"),  # no URL assembled
    ],
)
def test_mentions(text: str, removed: str, token: str) -> None:
    assert clean_text(text, only(mentions="remove", html_entities=True)) == removed
    assert clean_text(text, only(mentions="token", html_entities=True)) == token


def test_whitespace_collapses_and_strips() -> None:
    assert clean_text("  a\n\n b\t\tc \u3000 d\r\n\u2028e\xa0f ", only()) == "a b c d e f"


def test_a_later_step_exposing_an_entity_gets_another_pass() -> None:
    assert clean_text("&l\u200bt;3", PAPER) == "<3"  # the ZWSP hid "&lt;"
    assert clean_text("a&NBSP;b", PAPER) == "a b"  # lowercasing makes "&nbsp;"
    assert clean_text("a&NBSP;b", CT) == "a&NBSP;b"  # no such entity in HTML5


# --- whole profiles on tweets -----------------------------------------------------------

TWEETS = [
    (
        "RT @CNN: Breaking news &amp; more:\nFloods hit the city 😢 https://t.co/AbCdEf123",
        "rt : breaking news & more: floods hit the city 😢",
        "RT @MENTION: Breaking news & more: Floods hit the city :crying_face: HTTPURL",
    ),
    (
        "@jane_doe Das ist so schÃ¶n!!! Danke &lt;3 #Berlin",
        "das ist so schã¶n!!! danke <3 #berlin",
        "@MENTION Das ist so schön!!! Danke <3 #Berlin",
    ),
    (
        "Itâ€™s ðŸ˜€ time\n\n\nwww.example.com/x?a=1&amp;b=2",
        "itâ€™s ðÿ˜€ time",
        "It’s :grinning_face: time HTTPURL",
    ),
    (
        "\u200f@user مرحبا بالعالم 🌍\u200e",
        "مرحبا بالعالم 🌍",
        "@MENTION مرحبا بالعالم :globe_showing_Europe-Africa:",
    ),
]


@pytest.mark.parametrize(("text", "paper", "ct"), TWEETS)
def test_profiles_on_tweets(text: str, paper: str, ct: str) -> None:
    assert clean_text(text, PAPER) == paper
    assert clean_text(text, CT) == ct


# --- properties -------------------------------------------------------------------------

PIECES = [
    "http://",
    "https://t.co/AbC12",
    "HTTPS://X.CO",
    "www.",
    "www.ex.com/a?b=1&amp;c=2",
    "t.co/xyz",
    "ht",
    "tp",
    "://",
    "@",
    "＠",
    "@user_1",
    "ann@example.com",
    "@MENTION",
    "HTTPURL",
    "&",
    "&amp;",
    "amp;",
    "&lt;",
    "lt;",
    "&#",
    "8203;",
    "&#64;",
    "&#58;",
    "&NBSP;",
    "&Atilde;",
    "&para;",
    "Ã¶",
    "â€™",
    "ðŸ˜€",
    "Ã",
    "\x85",
    "\x9d",
    "\xa0",
    "\u200b",
    "\u200d",
    "\u200f",
    "\ufeff",
    "\x00",
    "\x1b",
    "😀",
    "👍🏽",
    "🇺🇸",
    "🇺",
    "👨\u200d👩\u200d👧",
    "\ufe0f",
    "\u20e3",
    "#️⃣",
    "\u0301",
    "İ",
    "ß",
    "Σ",
    "مرحبا",
    "שלום",
    "日本語",
    "\ud83d",
    "\ude00",
    " ",
    "\n",
    "\t",
    ":",
    "/",
    ".",
    "_",
    "'",
    "Hello",
    "world",
    "RT",
]
TWEETS_STRATEGY = st.lists(st.sampled_from(PIECES), max_size=20).map("".join)
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=40)
TEXTS = st.one_of(
    TWEETS_STRATEGY,
    ANY_TEXT,
    st.lists(st.one_of(TWEETS_STRATEGY, ANY_TEXT), max_size=4).map("".join),
)
MODES = st.sampled_from(["remove", "token", "keep"])
ANY_PROFILE = st.builds(
    CleanProfile,
    name=st.just("any"),
    lowercase=st.booleans(),
    urls=MODES,
    mentions=MODES,
    html_entities=st.booleans(),
    fix_encoding=st.booleans(),
    emoji_to_text=st.booleans(),
)


@pytest.mark.parametrize("profile", [PAPER, CT, CT_LOWER], ids=["paper", "ct", "ct-lower"])
@settings(max_examples=250, deadline=None)
@given(text=TEXTS)
def test_profile_properties(profile: CleanProfile, text: str) -> None:
    """Never raises; idempotent; one clean line; no URL, no mention but ``@MENTION``."""
    cleaned = clean_text(text, profile)
    assert clean_text(cleaned, profile) == cleaned
    assert cleaned == " ".join(cleaned.split())
    assert not URL.search(cleaned)
    mentions = MENTION.findall(cleaned)
    assert mentions == (["@MENTION"] * len(mentions) if profile.mentions == "token" else [])
    cleaned.encode("utf-8")  # no lone surrogate left


@settings(max_examples=200, deadline=None)
@given(text=TEXTS, profile=ANY_PROFILE)
def test_every_profile_is_idempotent(text: str, profile: CleanProfile) -> None:
    cleaned = clean_text(text, profile)
    assert clean_text(cleaned, profile) == cleaned


def test_one_line_turns_every_line_break_into_one_space() -> None:
    assert one_line("Er sagte:\u2028„Komm!“") == "Er sagte: „Komm!“"
    assert one_line("first\r\nsecond\rthird\x85fourth\u2029") == "first second third fourth"
    assert one_line(" a \x0b\x0c b ") == "a b"
    assert one_line("two  spaces\tand a tab stay") == "two  spaces\tand a tab stay"


@given(st.text())
def test_one_line_is_idempotent_and_has_no_breaks(text: str) -> None:
    once = one_line(text)
    assert one_line(once) == once
    assert len(once.splitlines()) <= 1


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=30))
def test_one_line_without_breaks_only_strips(text: str) -> None:
    """``one_line`` skips its pattern for printable text: the result is the pattern's."""
    assert one_line(text) == _LINE_BREAK_RE.sub(" ", text).strip()


def test_the_url_precheck_rests_on_what_ignorecase_matches() -> None:
    """``_may_hold_url`` looks for ``/``, ``w.`` and ``W.`` as they are: under
    ``re.IGNORECASE`` no other code point matches ``w``, ``/`` or ``.``."""
    for literal, matches in (("w", "wW"), ("/", "/"), (".", ".")):
        pattern = re.compile(re.escape(literal), re.IGNORECASE)
        found = [chr(c) for c in range(0x110000) if pattern.fullmatch(chr(c))]
        assert found == sorted(matches), literal


@settings(max_examples=500, deadline=None)
@given(text=TEXTS)
def test_a_regex_skipped_by_its_precheck_would_have_changed_nothing(text: str) -> None:
    """Where a precheck says no, the step's regex finds nothing (``_clean_once``)."""
    for variant in (text, text.lower(), text.upper()):
        if not _may_hold_url(variant):
            assert not _URL_RE.search(variant)
        if not _may_hold_mention(variant):
            assert not _MENTION_RE.search(variant)
        if variant.isascii() and variant.isprintable():
            assert not _INVISIBLE_RE.search(variant)


@pytest.mark.parametrize(
    "text",
    ["WWW.EXAMPLE.COM/x", "see Www.x", "PIC.TWITTER.COM/abc", "T.CO/abc", "HTTPS://x", "a\x00b"],
)
def test_prechecks_let_every_match_through(text: str) -> None:
    """URLs in any case, and an ASCII control character, still go."""
    assert clean_text(text, only(urls="remove")) in ("see", "ab", "")
