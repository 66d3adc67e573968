"""What OPUS file names say: the language pair, the corpus name, a side's language.

OPUS names its downloads after the pair, languages in alphabetical order: ``de-en.tmx.gz``,
``de-en.txt.zip`` holding ``RF.de-en.de``, ``WikiMatrix.de-en.tsv.gz``; ``opus_get``
saves them as ``RF_v1_tmx_de-en.tmx.gz``. Tatoeba uses 639-3 codes
(``tatoeba.deu-eng.deu``), sentence-transformers ``TED2020-en-de-train.tsv.gz``.
"""

from __future__ import annotations

import re

from corpusforge.sources.opus.streams import file_name, strip_compression
from corpusforge.text.langid import is_lang_code, known_lang, normalize_lang

UNKNOWN_DATASET = "unknown"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
"""What a dataset name may not hold: the rule of ``release.layout.folder_name``, so that a
pair's ``dataset`` column names its ``pairs/<dataset>/`` folder as it is."""
# opus_get's local names: {corpus}_{release}_{preprocessing}_{l1}-{l2}.{ext}
_OPUS_GET = re.compile(
    r"^(?P<corpus>.+?)_(?P<release>v[0-9][^_]*|latest)_(?P<pre>xml|tmx|moses|raw|parsed)_"
)
# l1-l2 with region/script subtags (pt_br-zh_cn), not glued to a word on the left
_PAIR_TAGGED = re.compile(
    r"(?<![A-Za-z0-9_])([a-z]{2,3}(?:_[A-Za-z]{2,4})?)-([a-z]{2,3}(?:_[A-Za-z]{2,4})?)"
    r"(?![A-Za-z0-9])"
)
_PAIR_PLAIN = re.compile(r"(?<![A-Za-z0-9])([a-z]{2,3})-([a-z]{2,3})(?![A-Za-z0-9])")
_NOT_LANGS = frozenset(
    {"csv", "gz", "bz2", "ids", "json", "jsonl", "scores", "tmx", "tsv", "txt", "xml", "xz", "zip"}
)


def is_lang_suffix(suffix: str) -> bool:
    """Whether a file suffix (``en``, ``deu``, ``pt_br``) names a language."""
    return suffix.lower() not in _NOT_LANGS and is_lang_code(suffix)


def _base(uri: str) -> str:
    name = strip_compression(file_name(uri))
    match = _OPUS_GET.match(name)
    return name[match.end() :] if match else name


def languages_from_name(uri: str) -> tuple[str, str] | None:
    """The normalised ``(l1, l2)`` in a file name, or ``None`` when it names no pair.

    Args:
        uri: a path or URI; only its last component is read.

    Returns:
        E.g. ``("de", "en")`` for ``de-en.tmx.gz`` and for ``tatoeba.deu-eng.deu``.
    """
    base = _base(uri)
    for pattern in (_PAIR_TAGGED, _PAIR_PLAIN):
        matches = [m for m in pattern.finditer(base) if not _junk(m)]
        if matches:
            l1, l2 = matches[-1].groups()
            return normalize_lang(l1), normalize_lang(l2)
    return None


def _junk(match: re.Match[str]) -> bool:
    return any(part.split("_")[0].lower() in _NOT_LANGS for part in match.groups())


def side_language(uri: str) -> str | None:
    """The normalised language of one side of a plain Moses pair, from its last suffix.

    ``tatoeba.deu-eng.deu`` -> ``de``, ``RF-tokenized.en`` -> ``en``; ``None`` without one.
    """
    name = strip_compression(file_name(uri))
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem or not is_lang_suffix(suffix):
        return None
    return normalize_lang(suffix)


def named_language(uri: str) -> str | None:
    """:func:`side_language`, only when it is a language the project knows (``de``, ``zh``).

    ``train.src`` and ``corpus.tgt`` have suffixes shaped like codes that name no language:
    ``None``, so that ``--src-lang``/``--trg-lang`` say what they are.
    """
    lang = side_language(uri)
    if lang is None:
        return None
    try:
        return known_lang(lang)
    except ValueError:
        return None


def infer_dataset(uri: str) -> str:
    """The corpus name a file name carries, or ``"unknown"``; pass ``dataset=`` to be sure.

    ``RF_v1_tmx_de-en.tmx.gz`` -> ``RF``; ``WikiMatrix.de-en.tsv.gz`` -> ``WikiMatrix``;
    ``tatoeba.deu-eng.deu`` -> ``tatoeba``; ``TED2020-en-de-train.tsv.gz`` -> ``TED2020``;
    ``RF-tokenized.en`` -> ``RF-tokenized``; ``de-en.tmx.gz`` -> ``unknown``. Characters other
    than ``A-Za-z0-9._-`` (a space, a newline) become ``_``, as in the pairs' folder name:
    ``My\nCorpus.de-en.tsv`` -> ``My_Corpus``.
    """
    return safe_dataset(_named_corpus(strip_compression(file_name(uri))))


def safe_dataset(name: str) -> str:
    """``name`` as a dataset name that is also its folder name (``release.layout``'s rule):
    characters other than ``A-Za-z0-9._-`` become ``_``, leading dots go.

    Args:
        name: the corpus name a file name carries.
    """
    return _UNSAFE.sub("_", name).lstrip(".") or UNKNOWN_DATASET


def _named_corpus(name: str) -> str:
    match = _OPUS_GET.match(name)
    if match:
        return match.group("corpus")
    for pattern in (_PAIR_TAGGED, _PAIR_PLAIN):
        found = [m for m in pattern.finditer(name) if not _junk(m)]
        if found:
            head = name[: found[-1].start()].rstrip("._-")
            return head or UNKNOWN_DATASET
    stem = name.split(".", 1)[0]
    return stem or UNKNOWN_DATASET
