"""A pair and the evaluation sets -> ``decontam_exact`` or ``decontam_ngram`` when a side
leaks from one of them (``--decontaminate FILE...`` of the bitext and ParaNMT builds).

The rule is Twitter's (:mod:`corpusforge.text.decontam`: GPT-3's word 13-gram, or the whole
word sequence of a text shorter than 13 words), applied to each side as the row has it, the
anchor first; the evaluation texts are cleaned with the build's own cleaning
(:func:`load_decontaminator`), so both are compared alike. The reason says which of the two
matched: ``decontam_exact`` (a short side equal to an evaluation text) or ``decontam_ngram``
(a shared 13-gram); :func:`contamination` also names the side and the evaluation set, which
a kept-aside pair carries (``detail``: ``anchor:sts-test.csv``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from corpusforge.pairing.filters import FilterReason
from corpusforge.sources.opus.streams import file_name
from corpusforge.text.clean import CleanProfile, prepare_text
from corpusforge.text.decontam import NGRAM, Decontaminator, tokens


def contamination(
    anchor: str, positive: str, decontaminator: Decontaminator
) -> tuple[FilterReason, str, str] | None:
    """``(reason, side, evaluation set)`` of the first side that leaks, or ``None``.

    Args:
        anchor: the anchor as the row has it.
        positive: the positive as the row has it.
        decontaminator: the evaluation sets.
    """
    for side, text in (("anchor", anchor), ("positive", positive)):
        source = decontaminator.collides_with(text)
        if source is not None:
            short = len(tokens(text)) < NGRAM  # the n of load_decontaminator
            reason = FilterReason.DECONTAM_EXACT if short else FilterReason.DECONTAM_NGRAM
            return reason, side, source
    return None


def check_contamination(
    anchor: str, positive: str, decontaminator: Decontaminator | None
) -> FilterReason | None:
    """``decontam_exact`` or ``decontam_ngram`` when a side leaks, else ``None`` (and always
    ``None`` without evaluation sets).

    Args:
        anchor: the anchor as the row has it.
        positive: the positive as the row has it.
        decontaminator: the evaluation sets, or ``None``.
    """
    if decontaminator is None:
        return None
    found = contamination(anchor, positive, decontaminator)
    return None if found is None else found[0]


def load_decontaminator(
    paths: Sequence[str], profile: CleanProfile | None, lowercase: bool
) -> Decontaminator | None:
    """The evaluation sets of ``--decontaminate``, named by file name (by path where two
    names are alike), their texts cleaned as the pairs are; ``None`` without any.

    Args:
        paths: evaluation files (STS, STSb, PIT, Twitter URL or plain lines, detected).
        profile: the build's cleaning profile.
        lowercase: with no profile, lowercase (as the build's rows are).
    """
    if not paths:
        return None
    names = [file_name(path) for path in paths]
    if len(set(names)) < len(names):
        names = list(paths)
    return Decontaminator.from_files(
        list(zip(names, paths, strict=True)),
        normalise=functools.partial(prepare_text, profile=profile, lowercase=lowercase),
    )
