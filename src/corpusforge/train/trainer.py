"""Train a sentence encoder on a release's pairs: ``RELEASE/pairs/...`` -> a model folder.

    corpusforge train --data release/pairs/all --out models/fast
    corpusforge train --data release/pairs/all --out models/minilm \
        --model ../models/all-MiniLM-L6-v2 --loss mnrl

One loop for both model families: pairs stream in a seeded shuffle (``data.PairStream``),
AdamW with a linear schedule and 10% warm-up (sentence-transformers' ``fit`` defaults), one
epoch, gradient clipping, seeded initialisation. The defaults of each family reproduce its
paper:

- ``fast`` (P-SP, Wieting et al. 2019, and their code's ``main.py``): a sentencepiece unigram
  model trained on a seeded sample of the release's texts, 1024-dimensional averaged piece
  embeddings, triplet loss with cosine margin 0.4 and the hardest negative of a mega-batch of
  up to 60 batches (annealed from 1, one more batch every 150), learning rate 1e-3, gradient
  norm clipped at 5; with ``loss=mnrl`` or ``loss=mse`` a learning rate of its own
  (``DEFAULT_LR``), measured on a release of 4.5k pairs, where P-SP's rate (meant for millions
  of pairs) leaves the student near its random start;
- a Hugging Face transformer (Sentence-BERT, Reimers & Gurevych 2019; sentence-transformers'
  MNRL training): Multiple Negatives Ranking loss with batch size 50, learning rate 2e-5,
  gradient norm clipped at 1.

The triplet objective is P-SP's symmetric one: each anchor against the hardest positive of
another pair, and each positive against the hardest anchor of another pair. Texts identical to
either side of a pair are never its negatives.

With ``loss=mse`` and a ``teacher`` (Reimers & Gurevych 2020, ``distill``) the student learns the
teacher's embedding of each English anchor for both sides of a bitext pair; the teacher embeds
each distinct anchor once, before the first step, into a cache beside the model folder, and is
never trained. The fast student's dimension is then the teacher's.

The model folder gets the encoder (``models.load_encoder`` reads it) and ``train.json``: the
resolved configuration, the data, step counts, losses and library versions.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from importlib import metadata
from itertools import islice
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch

from corpusforge.train.data import NoPairs, PairBatch, PairStream
from corpusforge.train.distill import CACHE_FOLDER, TeacherTargets, teacher_targets
from corpusforge.train.losses import (
    DEFAULT_MARGIN,
    MNRL_SCALE,
    Distance,
    hardest_negatives,
    mnrl_loss,
    mse_loss,
    triplet_loss,
)
from corpusforge.train.models import (
    DEFAULT_MAX_SEQ_LENGTH,
    FastEncoder,
    SentenceEncoder,
    TransformerEncoder,
    train_sentencepiece,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

FAST = "fast"
TRAIN_LOG = "train.json"


class Loss(StrEnum):
    """The training objective."""

    MNRL = "mnrl"
    TRIPLET = "triplet"
    MSE = "mse"


@dataclass(frozen=True)
class FamilyDefaults:
    """Settings whose default depends on the model family (the learning rate: ``DEFAULT_LR``)."""

    loss: Loss
    mega_batches: int
    max_grad_norm: float


FAMILY_DEFAULTS = {
    # P-SP's main.py: --megabatch-size 60, --grad-clip 5, margin 0.4.
    "fast": FamilyDefaults(loss=Loss.TRIPLET, mega_batches=60, max_grad_norm=5.0),
    # sentence-transformers' fit(): max_grad_norm 1; MNRL as in the issue.
    "transformer": FamilyDefaults(loss=Loss.MNRL, mega_batches=1, max_grad_norm=1.0),
}

DEFAULT_LR: dict[tuple[str, Loss], float] = {
    # P-SP's main.py: Adam lr 0.001, for its triplet loss over millions of pairs.
    ("fast", Loss.TRIPLET): 1e-3,
    # The best of 0.01-1 over 5 epochs on two folds of the Tatoeba pairs of issue 39
    # (benchmarks/RESULTS.md, 2026-11-27, fourth session): in a few hundred steps the N(0, 1)
    # piece embeddings must move by about their own size, and MSE's gradients (a mean over
    # every element) sit near AdamW's epsilon. MNRL: 0.2 and 0.5 tie; the smaller is kept.
    ("fast", Loss.MNRL): 0.2,
    ("fast", Loss.MSE): 0.5,
    # sentence-transformers' fit(): AdamW lr 2e-5, whatever the loss.
    ("transformer", Loss.MNRL): 2e-5,
    ("transformer", Loss.TRIPLET): 2e-5,
    ("transformer", Loss.MSE): 2e-5,
}
"""Peak learning rate by model family and loss, when ``--lr`` is not given."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides a training run; ``None`` means the model family's default.

    Attributes:
        model: ``"fast"`` for the built-in P-SP style encoder, or the path of a local Hugging
            Face model folder to fine-tune (never downloaded).
        loss: ``Loss.MNRL``, ``Loss.TRIPLET`` or ``Loss.MSE`` (distillation, needs
            ``teacher``); default MSE with a teacher, else triplet for ``fast``, MNRL otherwise.
        batch_size: pairs per optimiser step (50, as in the paper).
        lr: peak AdamW learning rate; default ``DEFAULT_LR`` of the family and loss: for
            ``fast`` 1e-3 with triplet (P-SP), 0.2 with MNRL, 0.5 with MSE; 2e-5 for
            transformers.
        epochs: passes over the pairs, each in its own seeded order.
        seed: seeds initialisation, data order, the tokenizer sample and dropout.
        max_steps: stop after this many optimiser steps (the schedule is planned for them);
            ``0`` saves the untrained starting model.
        warmup_ratio: share of the steps with a linearly rising learning rate.
        weight_decay: AdamW's decoupled weight decay.
        scale: MNRL's inverse temperature on cosine similarities.
        margin: triplet margin; default 0.4 for cosine distance (P-SP), 5 for euclidean.
        distance: the triplet loss's distance.
        mega_batches: batches per mega-batch for triplet hard negatives; default 60 for
            ``fast`` (P-SP), 1 (the batch itself) for transformers.
        mega_batch_anneal: grow the mega-batch by one batch every this many batches, from 1
            (P-SP's ``--megabatch-anneal``); ``0`` uses the full size from the start.
        max_grad_norm: gradient norm clipping; default 5 for ``fast``, 1 for transformers.
        dim: embedding size of the fast encoder (P-SP: 1024).
        vocab_size: sentencepiece pieces of the fast encoder.
        tokenizer_pairs: about how many pairs (two texts each) the tokenizer is trained on.
        tokenizer_threads: sentencepiece trainer threads; fixed, since piece scores depend
            on it.
        max_seq_length: transformer token limit per text.
        bucket_rows: pairs held in memory by the streaming shuffle.
        device: ``"cpu"``, ``"cuda"``...; default CUDA when available.
        teacher: a local Hugging Face model folder whose anchor embeddings the student learns
            (``Loss.MSE`` only); it is never trained.
        teacher_cache: folder of the teacher-embedding cache; default ``teacher-embeddings``
            beside the model folder.
    """

    model: str = FAST
    loss: Loss | None = None
    batch_size: int = 50
    lr: float | None = None
    epochs: int = 1
    seed: int = 0
    max_steps: int | None = None
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    scale: float = MNRL_SCALE
    margin: float | None = None
    distance: Distance = Distance.COSINE
    mega_batches: int | None = None
    mega_batch_anneal: int = 150
    max_grad_norm: float | None = None
    dim: int = 1024
    vocab_size: int = 8000
    tokenizer_pairs: int = 500_000
    tokenizer_threads: int = 4
    max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH
    bucket_rows: int = 200_000
    device: str | None = None
    teacher: str | None = None
    teacher_cache: str | None = None

    def __post_init__(self) -> None:
        if self.loss is not None and not isinstance(self.loss, Loss):
            try:  # a plain string names a loss as well as the enum does
                object.__setattr__(self, "loss", Loss(self.loss))
            except ValueError:
                names = [x.value for x in Loss]
                raise ValueError(f"loss must be one of {names}, got {self.loss!r}") from None
        if not isinstance(self.distance, Distance):
            raise ValueError(
                f"distance must be one of {[x.value for x in Distance]}, got {self.distance!r}"
            )
        positive_ints = {
            "batch_size": self.batch_size,
            "epochs": self.epochs,
            "dim": self.dim,
            "vocab_size": self.vocab_size,
            "tokenizer_pairs": self.tokenizer_pairs,
            "tokenizer_threads": self.tokenizer_threads,
            "max_seq_length": self.max_seq_length,
            "bucket_rows": self.bucket_rows,
        }
        for name, value in positive_ints.items():
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        if self.batch_size < 2:
            raise ValueError(f"batch_size must be >= 2 (in-batch negatives), got {self.batch_size}")
        if self.max_steps is not None and self.max_steps < 0:
            raise ValueError(f"max_steps must be >= 0, got {self.max_steps}")
        if self.lr is not None and not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if not 0.0 <= self.warmup_ratio < 1.0:
            raise ValueError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        if not self.scale > 0:
            raise ValueError(f"scale must be > 0, got {self.scale}")
        if self.margin is not None and self.margin < 0:
            raise ValueError(f"margin must be >= 0, got {self.margin}")
        if self.mega_batches is not None and self.mega_batches < 1:
            raise ValueError(f"mega_batches must be >= 1, got {self.mega_batches}")
        if self.mega_batch_anneal < 0:
            raise ValueError(f"mega_batch_anneal must be >= 0, got {self.mega_batch_anneal}")
        if self.max_grad_norm is not None and not self.max_grad_norm > 0:
            raise ValueError(f"max_grad_norm must be > 0, got {self.max_grad_norm}")
        if self.loss is Loss.MSE and self.teacher is None:
            raise ValueError("loss mse distils a teacher: give teacher, a model folder")
        if self.teacher is not None:
            if self.loss not in (None, Loss.MSE):
                raise ValueError(f"a teacher is learnt with loss mse, not {self.loss}")
            if not (Path(self.teacher) / "config.json").is_file():
                raise ValueError(
                    "teacher must be a local Hugging Face model folder with a config.json "
                    f"(nothing is downloaded), got {self.teacher!r}"
                )
        if self.model != FAST and not (Path(self.model) / "config.json").is_file():
            raise ValueError(
                f"model must be {FAST!r} or a local Hugging Face model folder with a "
                f"config.json (nothing is downloaded), got {self.model!r}"
            )

    @property
    def family(self) -> str:
        """``"fast"`` or ``"transformer"``."""
        return "fast" if self.model == FAST else "transformer"

    def resolved(self) -> TrainConfig:
        """This configuration with every family default and the device filled in."""
        defaults = FAMILY_DEFAULTS[self.family]
        loss = _or_default(self.loss, Loss.MSE if self.teacher else defaults.loss)
        return replace(
            self,
            loss=loss,
            lr=_or_default(self.lr, DEFAULT_LR[(self.family, loss)]),
            margin=_or_default(self.margin, DEFAULT_MARGIN[self.distance]),
            mega_batches=_or_default(self.mega_batches, defaults.mega_batches),
            max_grad_norm=_or_default(self.max_grad_norm, defaults.max_grad_norm),
            device=self.device or ("cuda" if torch.cuda.is_available() else "cpu"),
        )

    def mega_batch_size(self, batches_done: int) -> int:
        """Batches in the next mega-batch, after ``batches_done`` batches (P-SP's annealing)."""
        full = self.mega_batches or 1
        if self.mega_batch_anneal == 0:
            return full
        return min(full, 1 + batches_done // self.mega_batch_anneal)


def _or_default(value: T | None, default: T) -> T:
    return default if value is None else value


@dataclass(frozen=True)
class TrainSummary:
    """What a run did; also written to ``MODEL_DIR/train.json`` with the configuration.

    Attributes:
        pairs: pairs in the training data.
        steps: optimiser steps taken.
        seconds: wall-clock training time, tokenizer included.
        loss_first: mean loss of the first (up to) 10 steps; ``None`` with no step.
        loss_last: mean loss of the last (up to) 10 steps; ``None`` with no step.
        teacher_anchors: distinct anchors with a teacher embedding (distillation only).
        teacher_embedded: how many of them the teacher embedded in this run (not cached).
    """

    pairs: int
    steps: int
    seconds: float
    loss_first: float | None
    loss_last: float | None
    teacher_anchors: int = 0
    teacher_embedded: int = 0


Progress = Callable[[int, int, float], None]
"""Called after each step with (step, planned steps, loss)."""


def linear_schedule(
    optimizer: torch.optim.Optimizer, warmup: int, total: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """Learning-rate factor rising 0 -> 1 over ``warmup`` steps, then falling to 0 at ``total``.

    The schedule of ``transformers.get_linear_schedule_with_warmup``.
    """

    def factor(step: int) -> float:
        if step < warmup:
            return step / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def planned_steps(stream: PairStream, config: TrainConfig) -> int:
    """Optimiser steps of the run: batches of all epochs, capped by ``max_steps``."""
    steps = stream.batches_per_epoch(config.batch_size) * config.epochs
    return steps if config.max_steps is None else min(steps, config.max_steps)


def build_encoder(
    config: TrainConfig, stream: PairStream, dim: int | None = None
) -> SentenceEncoder:
    """The untrained encoder: a new fast encoder, or the transformer read from its folder.

    Seeds torch first, so the same configuration gives the same starting weights.

    Args:
        config: the resolved run settings.
        stream: the training pairs (the fast encoder's tokenizer is trained on a sample).
        dim: the fast encoder's size instead of ``config.dim`` (a teacher's).
    """
    torch.manual_seed(config.seed)
    if config.family == "fast":
        spm_model = train_sentencepiece(
            stream.sample_texts(config.tokenizer_pairs),
            vocab_size=config.vocab_size,
            seed=config.seed,
            num_threads=config.tokenizer_threads,
        )
        return FastEncoder.initialise(spm_model, dim or config.dim, config.seed)
    return TransformerEncoder.from_local(Path(config.model), config.max_seq_length)


def train(
    data: Path, out: Path, config: TrainConfig | None = None, progress: Progress | None = None
) -> TrainSummary:
    """Train an encoder on the pairs in ``data`` and save it to the new folder ``out``.

    Args:
        data: a folder of ``pair.v1`` Parquet shards, e.g. ``RELEASE/pairs/all``.
        out: the model folder to write; must not exist or be empty.
        config: the run's settings (``TrainConfig()`` when ``None``).
        progress: called after each step with (step, planned steps, loss).

    Returns:
        What the run did.

    Raises:
        FileExistsError: when ``out`` exists and is not empty.
        FileNotFoundError: when ``data`` holds no Parquet shard.
        NoPairs: when its shards hold no pair (before any tokenizer or model is built).
    """
    config = (config or TrainConfig()).resolved()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty: give train a new --out folder")
    started = time.perf_counter()
    stream = PairStream(Path(data), seed=config.seed, bucket_rows=config.bucket_rows)
    if stream.num_rows == 0:
        raise NoPairs(f"{data} holds no pairs to train on")
    targets = _teacher_targets(stream, out, config)
    encoder = build_encoder(config, stream, targets.dim if targets else None)
    encoder = encoder.to(torch.device(str(config.device)))
    if targets is not None and encoder.dim != targets.dim:
        raise ValueError(
            f"the student gives {encoder.dim}-d embeddings but the teacher {targets.dim}-d: "
            "distil into a student of the teacher's size (or --model fast)"
        )
    total = planned_steps(stream, config)
    log.info("training %s on %d pairs for %d steps", config.model, stream.num_rows, total)
    losses = _optimise(encoder, stream, config, total, progress, targets)
    encoder.save(out)
    summary = TrainSummary(
        pairs=stream.num_rows,
        steps=len(losses),
        seconds=time.perf_counter() - started,
        loss_first=float(np.mean(losses[:10])) if losses else None,
        loss_last=float(np.mean(losses[-10:])) if losses else None,
        teacher_anchors=len(targets) if targets else 0,
        teacher_embedded=targets.computed if targets else 0,
    )
    _write_train_log(out, data, config, total, summary)
    return summary


def _teacher_targets(stream: PairStream, out: Path, config: TrainConfig) -> TeacherTargets | None:
    """The teacher's embedding of every distinct anchor, when distilling; else ``None``."""
    if config.loss is not Loss.MSE or config.teacher is None:
        return None
    cache = Path(config.teacher_cache or out.absolute().parent / CACHE_FOLDER)
    anchors = (
        text
        for batch in stream.dataset.to_batches(columns=["anchor"])
        for text in batch.column("anchor").to_pylist()
    )
    return teacher_targets(Path(config.teacher), anchors, cache)


def _optimise(
    encoder: SentenceEncoder,
    stream: PairStream,
    config: TrainConfig,
    total: int,
    progress: Progress | None,
    targets: TeacherTargets | None = None,
) -> list[float]:
    """Run ``total`` optimiser steps; return each step's loss."""
    if total == 0:
        return []
    # The fused kernel is the same AdamW; on CPU it is about 4x faster than the default,
    # which matters for the fast encoder's dense (vocab, dim) embedding update.
    optimizer = torch.optim.AdamW(
        encoder.parameters(),
        lr=float(config.lr or 0.0),
        weight_decay=config.weight_decay,
        fused=True,
    )
    scheduler = linear_schedule(optimizer, math.ceil(config.warmup_ratio * total), total)
    losses: list[float] = []
    encoder.train()
    for batch, negatives in islice(_training_batches(encoder, stream, config), total):
        loss = _batch_loss(encoder, batch, negatives, config, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(encoder.parameters(), float(config.max_grad_norm or 0.0))
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.item()))
        if progress is not None:
            progress(len(losses), total, losses[-1])
    return losses


@dataclass(frozen=True)
class _Negatives:
    """Hard negatives of one batch: texts from other pairs of its mega-batch.

    ``for_anchors[i]`` is another pair's positive, ``for_positives[i]`` another pair's
    anchor; ``*_valid[i]`` is false where pair ``i`` had no candidate left.
    """

    for_anchors: list[str]
    anchors_valid: list[bool]
    for_positives: list[str]
    positives_valid: list[bool]


def _training_batches(
    encoder: SentenceEncoder, stream: PairStream, config: TrainConfig
) -> Iterator[tuple[PairBatch, _Negatives | None]]:
    """Batches of every epoch, with mined hard negatives when the loss is triplet."""
    done = 0
    for epoch in range(config.epochs):
        batches = stream.batches(config.batch_size, epoch)
        while mega := list(islice(batches, config.mega_batch_size(done))):
            if config.loss is Loss.TRIPLET:
                mined: list[_Negatives | None] = list(_mine_negatives(encoder, mega))
            else:
                mined = [None] * len(mega)
            for batch, negatives in zip(mega, mined, strict=True):
                yield batch, negatives
                done += 1


def _mine_negatives(encoder: SentenceEncoder, mega: list[PairBatch]) -> list[_Negatives]:
    """P-SP's mega-batch mining with the current model, in evaluation mode, without grads."""
    anchors = [text for batch in mega for text in batch.anchors]  # N texts
    positives = [text for batch in mega for text in batch.positives]  # N texts
    _, codes = np.unique(np.array(anchors + positives, dtype=object), return_inverse=True)
    a_code, p_code = codes[: len(anchors)], codes[len(anchors) :]  # (N,), (N,): text ids
    # (N, N): exclude[i, j] when pair j's positive is no fair negative for anchor i: it
    # repeats anchor i, or pair j repeats pair i's anchor or positive (a likely positive).
    exclude = (
        (a_code[:, None] == a_code[None, :])
        | (p_code[:, None] == p_code[None, :])
        | (a_code[:, None] == p_code[None, :])
    )
    a_emb = torch.from_numpy(encoder.encode(anchors))  # (N, d)
    p_emb = torch.from_numpy(encoder.encode(positives))  # (N, d)
    excluded = torch.from_numpy(exclude)  # (N, N)
    for_a, valid_a = hardest_negatives(a_emb, p_emb, excluded)  # (N,), (N,)
    for_p, valid_p = hardest_negatives(p_emb, a_emb, excluded.T)  # (N,), (N,)
    result: list[_Negatives] = []
    start = 0
    for batch in mega:
        rows = range(start, start + len(batch))
        result.append(
            _Negatives(
                for_anchors=[positives[int(for_a[i])] for i in rows],
                anchors_valid=[bool(valid_a[i]) for i in rows],
                for_positives=[anchors[int(for_p[i])] for i in rows],
                positives_valid=[bool(valid_p[i]) for i in rows],
            )
        )
        start += len(batch)
    return result


def _batch_loss(
    encoder: SentenceEncoder,
    batch: PairBatch,
    negatives: _Negatives | None,
    config: TrainConfig,
    targets: TeacherTargets | None = None,
) -> torch.Tensor:
    """The loss of one batch, all its texts embedded in one forward pass."""
    b = len(batch)
    if config.loss is Loss.MSE:
        if targets is None:
            raise ValueError("loss mse needs the teacher's targets")
        emb = encoder(batch.anchors + batch.positives)  # (2B, d)
        wanted = targets.lookup(batch.anchors).to(emb.device)  # (B, d), no gradient
        return mse_loss(emb[:b], emb[b:], wanted)
    if negatives is None:
        emb = encoder(batch.anchors + batch.positives)  # (2B, d)
        return mnrl_loss(emb[:b], emb[b:], scale=config.scale)
    emb = encoder(
        batch.anchors + batch.positives + negatives.for_anchors + negatives.for_positives
    )  # (4B, d)
    anchors, positives = emb[:b], emb[b : 2 * b]  # (B, d) each
    neg_a, neg_p = emb[2 * b : 3 * b], emb[3 * b :]  # (B, d) each
    valid_a = torch.tensor(negatives.anchors_valid, device=emb.device)  # (B,) bool
    valid_p = torch.tensor(negatives.positives_valid, device=emb.device)  # (B,) bool
    margin = float(config.margin if config.margin is not None else 0.0)
    return triplet_loss(
        anchors[valid_a], positives[valid_a], neg_a[valid_a], margin, config.distance
    ) + triplet_loss(positives[valid_p], anchors[valid_p], neg_p[valid_p], margin, config.distance)


def _write_train_log(
    out: Path, data: Path, config: TrainConfig, planned: int, summary: TrainSummary
) -> None:
    import corpusforge

    versions = {"corpusforge": corpusforge.__version__}
    for name in ("torch", "sentencepiece", "transformers", "pyarrow"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    record = {
        "data": str(data),
        "config": asdict(config),
        "planned_steps": planned,
        **asdict(summary),
        "versions": versions,
    }
    (out / TRAIN_LOG).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
