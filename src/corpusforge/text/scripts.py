"""Writing systems: a letter -> its script, a language code -> the scripts it is written in,
and a text -> the share of its letters in a language's scripts.

The alphabet-ratio filter (:func:`corpusforge.pairing.noise.check_bitext_noise`) drops a
side whose letters are too seldom in the script its language is written in: Cyrillic in a
``de`` side, an English sentence left untranslated in an ``ar`` side. It follows
OpusFilter's ``CharacterScoreFilter`` (Aulamo et al., ACL 2020 demos): only letters count
(digits, spaces, punctuation and symbols are neither in nor out of a script), and a side
without letters scores 1.

A letter's script is the first word of its Unicode name (``LATIN SMALL LETTER A``,
``CYRILLIC CAPITAL LETTER ZHE``, ``CJK UNIFIED IDEOGRAPH-4E00`` as ``han``), so no table of
code point ranges is kept here; a letter whose name names no script (``ª``, mathematical
letters) counts as outside every script.

    >>> expected_scripts("deu")
    frozenset({'latin'})
    >>> script_ratio("Да, no", expected_scripts("ru"))
    0.5
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

from corpusforge.text.langid import normalize_lang

LATIN: Final = "latin"
CYRILLIC: Final = "cyrillic"
ARABIC: Final = "arabic"
HAN: Final = "han"
HIRAGANA: Final = "hiragana"
KATAKANA: Final = "katakana"
HANGUL: Final = "hangul"

# the first word of a letter's Unicode name where it is not the script's own name
_NAME_SCRIPT: Final[dict[str, str]] = {
    "CJK": HAN,
    "IDEOGRAPHIC": HAN,  # 々 〆 〇
    "KATAKANA-HIRAGANA": KATAKANA,  # ー, the prolonged sound mark of both kana
}
# name words that qualify a letter's form, not its script (ＡＢＣ, ｱｲｳ)
_FORM_WORDS: Final = ("HALFWIDTH ", "FULLWIDTH ")

# primary language code -> its script, for languages written in one script besides Latin;
# the languages of _LATIN are written in Latin; languages in neither have no expected script
_SCRIPT_LANGUAGES: Final[dict[str, str]] = {
    "cyrillic": "ru uk be bg mk kk ky mn tg tt ba cv ce os sah",
    "greek": "el",
    "arabic": "ar arz fa ur ps ug sd ckb azb pnb mzn lrc",
    "hebrew": "he yi",
    "devanagari": "hi mr ne sa mai bh new gom",
    "bengali": "bn as bpy",
    "gurmukhi": "pa",
    "gujarati": "gu",
    "oriya": "or",
    "tamil": "ta",
    "telugu": "te",
    "kannada": "kn",
    "malayalam": "ml",
    "sinhala": "si",
    "thai": "th",
    "lao": "lo",
    "khmer": "km",
    "myanmar": "my",
    "tibetan": "bo dz",
    "georgian": "ka xmf",
    "armenian": "hy",
    "ethiopic": "am ti",
    "thaana": "dv",
}
_LATIN: Final = """
    af an ast az bar bcl br bs ca ceb co cs cy da de diq dsb en eo es et eu fi fo fr frr fy
    ga gd gl gn gv hr hsb ht hu ia id ie ilo io is it jv kw la lb li lmo lt lv mg min ms mt
    mwl nah nap nds nl nn no nb oc pam pfl pl pms pt qu rm ro sc scn sco sk sl so sq su sv
    sw tk tl tr uz vec vep vi vls vo wa war yo zu xh st tn sn ny rw lg ln ha ig om
"""
LANGUAGE_SCRIPTS: Final[dict[str, frozenset[str]]] = {
    **{lang: frozenset({LATIN}) for lang in _LATIN.split()},
    **{
        lang: frozenset({script})
        for script, langs in _SCRIPT_LANGUAGES.items()
        for lang in langs.split()
    },
    # several scripts in everyday use
    "sr": frozenset({CYRILLIC, LATIN}),
    "sh": frozenset({CYRILLIC, LATIN}),
    "zh": frozenset({HAN}),
    "yue": frozenset({HAN}),
    "wuu": frozenset({HAN}),
    "ja": frozenset({HAN, HIRAGANA, KATAKANA}),
    "ko": frozenset({HANGUL, HAN}),
}
"""The scripts each language (its primary ISO 639-1 code, else 639-3) is written in."""

# ISO 15924 subtags that say which script a label means (sr_Latn, zh-Hant, az-Arab)
_SUBTAG_SCRIPTS: Final[dict[str, str]] = {
    "latn": LATIN,
    "cyrl": CYRILLIC,
    "arab": ARABIC,
    "hans": HAN,
    "hant": HAN,
}
_SUBTAGS: Final = re.compile(r"[-_]")
_ASCII_LETTER: Final = re.compile(r"[A-Za-z]")
_OTHER_LETTERISH: Final = re.compile(r"[^\W\d_\x00-\x7f]")  # letters, and numerals such as ½


@functools.lru_cache(maxsize=65536)
def letter_script(char: str) -> str | None:
    """The script a letter is written in, lower case (``latin``, ``han``), or ``None``.

    Args:
        char: one character; what is not a letter (``str.isalpha``) gives ``None``, as does
            a letter whose Unicode name names no script.
    """
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    for word in _FORM_WORDS:
        name = name.removeprefix(word)
    first = name.split(" ", 1)[0]
    script = _NAME_SCRIPT.get(first, first.lower())
    return script if script and first not in ("MODIFIER", "MATHEMATICAL") else None


@functools.lru_cache(maxsize=1024)
def expected_scripts(lang: str) -> frozenset[str] | None:
    """The scripts a language is written in, or ``None`` where this module does not know.

    Args:
        lang: a language code as corpora write it (``de``, ``deu``, ``sr_Latn``, ``zh-Hant``);
            a script subtag narrows the answer to that script.
    """
    try:
        primary = normalize_lang(lang)
    except ValueError:
        return None
    for subtag in _SUBTAGS.split(lang.strip())[1:]:
        script = _SUBTAG_SCRIPTS.get(subtag.lower())
        if script is not None:
            return frozenset({script})
    return LANGUAGE_SCRIPTS.get(primary)


def script_ratio(text: str, scripts: frozenset[str]) -> float:
    """The share of ``text``'s letters written in one of ``scripts`` (1.0 without letters).

    Args:
        text: one side of a pair.
        scripts: the scripts its language is written in (:func:`expected_scripts`).
    """
    if text.isascii() and LATIN in scripts:
        return 1.0  # every ASCII letter is Latin
    ascii_letters = len(_ASCII_LETTER.findall(text))
    letters = ascii_letters
    inside = ascii_letters if LATIN in scripts else 0
    for char in _OTHER_LETTERISH.findall(text):
        if char.isalpha():
            letters += 1
            inside += letter_script(char) in scripts
    return inside / letters if letters else 1.0
