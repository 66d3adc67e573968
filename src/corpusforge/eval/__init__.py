"""Evaluation of sentence encoders: ranking benchmarks (nDCG, MAP, MRR@10) and STS.

    corpusforge eval ranking --benchmarks RELEASE/benchmarks --model lexical
    corpusforge eval sts --data ../shared/realdata/stsbenchmark/sts-dev.csv --model lexical

A model is anything that implements :class:`Encoder`; :func:`load_encoder` turns the
``--model`` argument into one.
"""

from __future__ import annotations

import importlib

from corpusforge.eval.lexical import (
    CorpusFitted,
    Encoder,
    PairScorer,
    TfidfEncoder,
    cosine_scores,
)
from corpusforge.eval.ranking import BENCHMARKS, evaluate_ranking
from corpusforge.eval.sts import evaluate_sts, read_sts

__all__ = [
    "BENCHMARKS",
    "LEXICAL",
    "CorpusFitted",
    "Encoder",
    "EncoderLoadError",
    "PairScorer",
    "TfidfEncoder",
    "cosine_scores",
    "evaluate_ranking",
    "evaluate_sts",
    "load_encoder",
    "read_sts",
]

LEXICAL = "lexical"
_TRAINER = "corpusforge.train.models"


class EncoderLoadError(RuntimeError):
    """The ``--model`` argument names no encoder that can be loaded here."""


def load_encoder(spec: str) -> Encoder:
    """The encoder named by ``spec``.

    ``"lexical"`` is the TF-IDF baseline, unfitted, so that the evaluators fit it on each
    benchmark's own texts. Anything else (a model folder, say) goes to the trainer's
    ``corpusforge.train.models.load_encoder(spec)``, imported only now, so evaluating the
    baseline never imports torch.

    Args:
        spec: ``"lexical"`` or what the trainer's loader accepts, e.g. a model path.

    Raises:
        EncoderLoadError: the trainer module or one of its dependencies is not installed,
            it has no ``load_encoder``, that raised ``OSError`` or ``ValueError`` (no such
            model, say), or it returned something without ``encode``.
    """
    if spec == LEXICAL:
        return TfidfEncoder()
    try:
        trainer = importlib.import_module(_TRAINER)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (exc.name == _TRAINER or _TRAINER.startswith(exc.name + ".")):
            raise EncoderLoadError(
                f"model {spec!r}: trained models are loaded by {_TRAINER}, which this "
                f"installation does not have; use --model {LEXICAL} for the TF-IDF baseline"
            ) from exc
        raise EncoderLoadError(
            f"model {spec!r}: the model loader needs the module {exc.name!r}, which is not "
            "installed (install corpusforge with the 'train' extra)"
        ) from exc
    loader = getattr(trainer, "load_encoder", None)
    if not callable(loader):
        raise EncoderLoadError(f"model {spec!r}: {_TRAINER} has no load_encoder(spec)")
    try:
        encoder = loader(spec)
    except (OSError, ValueError) as exc:  # the loader's "no such model" and "bad model"
        raise EncoderLoadError(f"model {spec!r}: {exc}") from exc
    if not isinstance(encoder, Encoder):
        raise EncoderLoadError(
            f"model {spec!r}: {_TRAINER}.load_encoder returned {type(encoder).__name__}, "
            "which has no encode(texts) method"
        )
    return encoder
