"""Cleaning profiles: a raw tweet (or bitext line) turns into the text that goes into a pair.

Two profiles follow the papers whose corpora corpusforge rebuilds:

* ``paper`` follows Twitter4SSE (Di Giovanni and Brambilla, "Exploiting Twitter as Source
  of Large Corpora of Weakly Similar Pairs for Semantic Sentence Embeddings", EMNLP 2021):
  lowercase, URLs and @mentions removed, HTML entities decoded, newlines and repeated
  whitespace collapsed, stripped.
* ``ct`` follows the crisis-texts encoders CT-XLMR-SE / CT-mBERT-SE (Lamsal et al.,
  "Semantically Enriched Cross-Lingual Sentence Embeddings for Crisis-related Social Media
  Texts", ISCRAM 2024): URLs become ``HTTPURL``, @mentions become ``@MENTION``, HTML
  entities decoded, mojibake repaired with ftfy, emoji spelled out with
  ``emoji.demojize``, newlines and repeated whitespace collapsed; case is kept.

``clean_text`` runs the steps below in this order, each only where the profile asks for it:

1. Surrogates: surrogate pairs are joined, lone surrogates become U+FFFD, so the
   result can always be written as UTF-8.
2. ``html_entities``: ``&amp;``, ``&lt;``, ``&#8217;`` and every other HTML5 entity that
   ends in ``;`` is decoded, repeatedly until none is left, so ``&amp;amp;lt;`` becomes
   ``<``. The Twitter API escapes ``&``, ``<`` and ``>`` once, so a single decode
   restores what the user typed; decoding until stable also turns entities the user
   typed literally (``&lt;``) into their characters, the price of idempotence. Legacy
   entities without ``;`` (``&copy``, ``&not``) are left alone: in tweets ``&notice``
   is a word, not ``¬ice``. Each decode shortens the text, so the loop ends.
3. ``fix_encoding``: ftfy repairs mojibake (``schÃ¶n`` -> ``schön``), after the entities
   so that mojibake spelled as entities is repaired too. Only its encoding repairs run
   (``fix_encoding`` and ``fix_c1_controls``), which never produce ASCII and so never a
   new entity, URL or mention; its cosmetic rewrites (curly quotes, full-width letters,
   ligatures, NFC) are off: they are not encoding fixes and would rewrite legitimate CJK
   and typographic text. Those two repairs touch only text that ftfy's ``is_bad`` flags or
   that holds C1 controls, so ftfy is called for those texts alone.
4. Invisible characters are removed in every profile: C0 controls other than tab,
   line feed, vertical tab, form feed and carriage return; DEL and the C1 controls; and
   the default-ignorable format characters that carry no meaning in running text (soft
   hyphen, zero-width space, word joiner, BOM, bidirectional marks, embeddings and
   isolates, invisible operators, Hangul fillers). Zero-width joiner and non-joiner,
   variation selectors and tag characters stay: emoji sequences, flags and Indic or
   Persian spelling need them. Removing them first means a URL or a mention cannot hide
   behind an invisible character (``ht\\u200btp://``).
5. ``emoji_to_text``: ``emoji.demojize`` (``🔥`` -> ``:fire:``, ``👍🏽`` ->
   ``:thumbs_up_medium_skin_tone:``). The names come from the installed ``emoji``
   release, as ftfy's repairs from ftfy's: a release records both versions.
6. ``lowercase``: ``str.lower``; the ``HTTPURL`` and ``@MENTION`` tokens a profile emits
   are never lowercased.
7. URLs (``http://``, ``https://``, ``www.``, ``t.co/`` and ``pic.twitter.com/``, any
   case) are removed or replaced by ``HTTPURL``; a URL runs to the next whitespace, as in
   the Twitter4SSE code. The token gets a space before it, so ``see:https://t.co/x``
   gives ``see: HTTPURL`` and an ``@`` glued to a URL cannot make ``@HTTPURL``.
8. @mentions are removed or replaced by ``@MENTION``. A mention is ``@`` or ``＠`` not
   preceded by a word character, followed by word characters (Unicode ``\\w``, a superset
   of Twitter's ``[A-Za-z0-9_]`` handles of up to 15 characters, so longer or accented
   look-alikes go too); chained mentions (``@a@b``) go as one. E-mail addresses are
   kept: the ``@`` of ``ann@example.com`` follows a word character, so its domain is not
   a mention (Twitter does not link it either); masking personal data is not the
   cleaner's job.
9. Whitespace (any Unicode whitespace, newlines included) collapses to one space; the
   ends are stripped.

The result is meant to be idempotent, ``clean_text(clean_text(x, p), p) == clean_text(x, p)``
for every ``str`` and profile, and property tests check it. Removed URLs and mentions
leave a space, never a join, so removing one cannot assemble another. A later step can
still expose work for an earlier one (removing the zero-width space of ``&l\\u200bt;`` or
lowercasing ``&NBSP;`` leaves an entity; collapsing whitespace can change what ftfy reads
as mojibake), so ``clean_text`` runs the steps again while an entity or mojibake is left,
at most ``_MAX_PASSES`` times in all. In property runs over random and mojibake-heavy text
no input needed more than three passes, the third only for layered mojibake junk.

Example::

    >>> clean_text("RT @nasa: Mars &amp; Moon\\nhttps://t.co/x1", PROFILES["paper"])
    'rt : mars & moon'
"""

from __future__ import annotations

import html
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from html.entities import html5
from itertools import repeat
from typing import Final

import emoji
import ftfy
from ftfy.badness import is_bad

from corpusforge.text.plain import false_at, is_plain

URL_TOKEN: Final = "HTTPURL"
MENTION_TOKEN: Final = "@MENTION"

_MODES: Final = ("remove", "token", "keep")
_MAX_PASSES: Final = 8

_SURROGATE_RE: Final = re.compile("[\ud800-\udfff]")
_ENTITY_RE: Final = re.compile(
    r"&(?:#[0-9]{1,10}|#[xX][0-9A-Fa-f]{1,8}|[A-Za-z][A-Za-z0-9]{0,31});"
)
_INVISIBLE_RE: Final = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f"
    "\u00ad\u061c\u115f\u1160\u17b4\u17b5\u200b\u200e\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufeff\uffa0\ufff0-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e001f\U000e0080-\U000e00ff\U000e01f0-\U000e0fff]+"
)


def _char_class(chars: frozenset[str]) -> str:
    """The body of a regex character class matching ``chars``, as ranges."""
    codes = sorted(map(ord, chars))
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi in ranges
    )


# The characters emoji are made of, ASCII keycap bases aside; demojize leaves text without
# any of them unchanged (U+FE0E, the text variation selector, it drops). A set test is far
# cheaper than a regex class this large, and demojize, which walks the text a character at
# a time in Python, only ever sees the runs that can hold an emoji.
_EMOJI_CHARS: Final = frozenset(
    {c for e in emoji.EMOJI_DATA for c in e if not c.isascii()} | {"\ufe0e"}
)
_EMOJI_RUN_RE: Final = re.compile(f"[#*0-9]?[{_char_class(_EMOJI_CHARS)}]+")
_C1_RE: Final = re.compile("[\x80-\x9f]")
_URL_RE: Final = re.compile(
    r"https?://\S*|(?<!\w)(?:www\.|t\.co/|pic\.twitter\.com/)\S*", re.IGNORECASE
)
_MENTION_RE: Final = re.compile(r"(?<!\w)(?:[@＠]\w+)+")
_KEEP_CASE_RE: Final = {
    (True, False): re.compile(r"(?<!\w)(HTTPURL)(?!\w)"),
    (False, True): re.compile(r"(?<!\w)(@MENTION)(?!\w)"),
    (True, True): re.compile(r"(?<!\w)(HTTPURL|@MENTION)(?!\w)"),
}
_FTFY_CONFIG: Final = ftfy.TextFixerConfig(
    unescape_html=False,
    fix_encoding=True,
    fix_c1_controls=True,
    fix_latin_ligatures=False,
    fix_character_width=False,
    uncurl_quotes=False,
    fix_line_breaks=False,
    fix_surrogates=False,  # done before ftfy
    remove_terminal_escapes=False,
    remove_control_chars=False,
    normalization=None,
    explain=False,
)


@dataclass(frozen=True)
class CleanProfile:
    """What ``clean_text`` does to a text.

    Attributes:
        name: the profile's name, recorded in the release manifest.
        lowercase: lowercase the text (the emitted tokens keep their case).
        urls: ``"remove"`` URLs, replace them by the ``"token"`` ``HTTPURL``, or ``"keep"``
            them.
        mentions: ``"remove"`` @mentions, replace them by the ``"token"`` ``@MENTION``, or
            ``"keep"`` them.
        html_entities: decode HTML entities (``&amp;`` -> ``&``) until none is left.
        fix_encoding: repair mojibake with ftfy.
        emoji_to_text: spell emoji out with ``emoji.demojize`` (``🔥`` -> ``:fire:``).

    Raises:
        ValueError: a mode other than ``remove``/``token``/``keep``, a flag that is not a
            ``bool``, or an empty name.
    """

    name: str
    lowercase: bool
    urls: str
    mentions: str
    html_entities: bool
    fix_encoding: bool
    emoji_to_text: bool

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"CleanProfile.name must be a non-empty str, got {self.name!r}")
        for field in ("urls", "mentions"):
            value = getattr(self, field)
            if value not in _MODES:
                raise ValueError(
                    f"CleanProfile.{field} must be one of {', '.join(_MODES)}, got {value!r}"
                )
        for field in ("lowercase", "html_entities", "fix_encoding", "emoji_to_text"):
            value = getattr(self, field)
            if not isinstance(value, bool):
                raise ValueError(f"CleanProfile.{field} must be a bool, got {value!r}")


PROFILES: Final[dict[str, CleanProfile]] = {
    "paper": CleanProfile(
        name="paper",
        lowercase=True,
        urls="remove",
        mentions="remove",
        html_entities=True,
        fix_encoding=False,
        emoji_to_text=False,
    ),
    "ct": CleanProfile(
        name="ct",
        lowercase=False,
        urls="token",
        mentions="token",
        html_entities=True,
        fix_encoding=True,
        emoji_to_text=True,
    ),
}


def get_profile(name: str, *, lowercase: bool | None = None) -> CleanProfile:
    """The profile called ``name``, with its lowercasing overridden where asked.

    Args:
        name: a key of ``PROFILES``.
        lowercase: when not ``None``, replaces the profile's own ``lowercase``; the name
            stays, the manifest records the fields.

    Returns:
        The profile.

    Raises:
        ValueError: ``name`` is not a known profile.
    """
    try:
        profile = PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ValueError(f"unknown cleaning profile {name!r}; known: {known}") from None
    if lowercase is None:
        return profile
    return replace(profile, lowercase=lowercase)


def clean_text(text: str, profile: CleanProfile) -> str:
    """Clean one text with a profile; the steps and their order are in the module doc.

    Never raises on a ``str``, and cleaning the result again changes nothing.

    Args:
        text: a tweet's full text or one side of a bitext pair.
        profile: what to do, e.g. ``PROFILES["paper"]``.

    Returns:
        The cleaned text: one line, no leading or trailing whitespace, possibly empty.
    """
    cleaned = _clean_once(text, profile)
    for _ in range(_MAX_PASSES - 1):
        if not _may_change_again(cleaned, profile):
            break
        again = _clean_once(cleaned, profile)
        if again == cleaned:
            break
        cleaned = again
    return cleaned


_LINE_BREAK_RE = re.compile(r"[ \t]*[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+[ \t]*")


def one_line(text: str) -> str:
    """``text`` with each run of line or paragraph breaks (and the blanks around it) made one
    space, then stripped: what a text gets with no cleaning profile (bitext ``--clean none``).

    The breaks are every character ``str.splitlines`` splits on: ``\\r``, ``\\n``, vertical
    tab, form feed, ``\\x1c``-``\\x1e``, NEL (U+0085), LINE and PARAGRAPH SEPARATOR (U+2028,
    U+2029). Line-aligned readers split on ``\\n`` only, so the others arrive inside a
    sentence; in a row they would break every line-oriented tool that reads it. Other
    whitespace is left as distributed.
    """
    if text.isprintable():  # every break character is unprintable: nothing to replace
        return text.strip()
    return _LINE_BREAK_RE.sub(" ", text).strip()


def prepare_text(text: str, profile: CleanProfile | None, lowercase: bool) -> str:
    """The text that goes into a row: cleaned with ``profile``, else made one line.

    Args:
        text: one side as read.
        profile: a cleaning profile, or ``None`` for none: then only line and paragraph
            breaks inside the text (``\\r``, U+2028, ...) become spaces
            (:func:`one_line`).
        lowercase: with no profile, lowercase (a profile carries its own setting).
    """
    if profile is not None:
        return clean_text(text, profile)
    text = one_line(text)
    return text.lower() if lowercase else text


def prepare_texts(
    texts: Sequence[str], profile: CleanProfile | None, lowercase: bool
) -> tuple[list[str], list[bool]]:
    """:func:`prepare_text` of each of ``texts``, and whether each result is plain: printable,
    its only whitespace single spaces between words (``" ".join(text.split())`` is itself).

    Asked once here, that shape spares the steps after (language id, word counts, the dedup
    key) asking again. With no profile and no lowercasing, a printable text is only stripped
    (:func:`one_line`), by ``map`` in C, and stays printable.

    Args:
        texts: each side as read.
        profile: see :func:`prepare_text`.
        lowercase: see :func:`prepare_text`.
    """
    if profile is not None or lowercase:
        prepared = [prepare_text(text, profile, lowercase) for text in texts]
        return prepared, list(map(is_plain, prepared))
    printable = list(map(str.isprintable, texts))
    prepared = list(map(str.strip, texts))
    spaced = map(operator.contains, prepared, repeat("  "))
    plain = list(map(operator.gt, printable, spaced))  # printable and not spaced
    for i in false_at(printable):
        prepared[i] = one_line(texts[i])
        plain[i] = is_plain(prepared[i])
    return prepared, plain


def _clean_once(text: str, profile: CleanProfile) -> str:
    """One run of the cleaning steps, in the order the module doc gives.

    A regex runs only on a text that could hold what it matches (``_may_hold_url``,
    ``_may_hold_mention``, an ASCII text's invisible characters being unprintable): a
    substring test costs a fraction of the regex's scan, and the result is the same.
    """
    if not text.isascii() and _SURROGATE_RE.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if profile.html_entities and "&" in text:
        text = _decode_entities(text)
    if profile.fix_encoding and not text.isascii() and (_C1_RE.search(text) or is_bad(text)):
        # elsewhere ftfy, as configured, changes nothing, at about twice the cost of the check
        text = ftfy.fix_text(text, _FTFY_CONFIG)
    if not (text.isascii() and text.isprintable()):
        text = _INVISIBLE_RE.sub("", text)
    if profile.emoji_to_text and not text.isascii() and not _EMOJI_CHARS.isdisjoint(text):
        text = _EMOJI_RUN_RE.sub(_demojize_run, text)
    if profile.lowercase:
        text = _lowercase(text, profile)
    if profile.urls != "keep" and _may_hold_url(text):
        text = _URL_RE.sub(" HTTPURL" if profile.urls == "token" else " ", text)
    if profile.mentions != "keep" and _may_hold_mention(text):
        text = _MENTION_RE.sub(MENTION_TOKEN if profile.mentions == "token" else " ", text)
    return " ".join(text.split())


def _may_hold_url(text: str) -> bool:
    """Whether ``_URL_RE`` could match in ``text``: each of its matches holds a ``/`` or
    ends ``www.`` in ``w.`` or ``W.`` (under ``re.IGNORECASE`` only ``w`` and ``W`` match
    ``w``, and ``/`` and ``.`` only themselves: ``tests/text/test_clean.py`` checks every
    code point)."""
    return "/" in text or "w." in text or "W." in text


def _may_hold_mention(text: str) -> bool:
    """Whether ``_MENTION_RE`` could match in ``text``: each of its matches starts with
    ``@`` or ``＠``."""
    return "@" in text or "＠" in text


def _may_change_again(text: str, profile: CleanProfile) -> bool:
    """Whether another pass could change a cleaned text: an entity or mojibake is left."""
    if profile.html_entities and "&" in text and _decode_entities_once(text) != text:
        return True
    return profile.fix_encoding and not text.isascii() and is_bad(text)


def _decode_entities(text: str) -> str:
    """Decodes ``;``-terminated HTML entities until none is left (each pass shortens)."""
    while True:
        decoded = _decode_entities_once(text)
        if decoded == text:
            return text
        text = decoded


def _decode_entities_once(text: str) -> str:
    return _ENTITY_RE.sub(_decode_entity, text)


def _decode_entity(match: re.Match[str]) -> str:
    ref = match.group()
    if ref[1] == "#":
        # html.unescape maps invalid code points the way HTML5 does (U+FFFD, cp1252).
        return html.unescape(ref)
    return html5.get(ref[1:], ref)


def _demojize_run(match: re.Match[str]) -> str:
    return emoji.demojize(match.group())


def _lowercase(text: str, profile: CleanProfile) -> str:
    """``str.lower`` that leaves the tokens the profile emits as they are."""
    keep = _KEEP_CASE_RE.get((profile.urls == "token", profile.mentions == "token"))
    if keep is None or (URL_TOKEN not in text and MENTION_TOKEN not in text):
        return text.lower()
    parts = keep.split(text)
    # split with one group alternates: text, token, text, token, ..., text
    return "".join(part if i % 2 else part.lower() for i, part in enumerate(parts))
