"""Bitext matching accuracy: an encoder and aligned sentences -> accuracy in both directions.

For line-aligned bitext (``src_texts[i]`` is the translation of ``trg_texts[i]``), each source
sentence is matched to its nearest target sentence by cosine similarity, and the other way
round; accuracy is the share matched to their own translation. This is the Tatoeba-style
bitext retrieval of Artetxe & Schwenk 2019 (LASER) used in CT-XLMR-SE's evaluation, reported
as ``en_to_x`` (English queries, other-language candidates) and ``x_to_en``.

    >>> import numpy as np
    >>> class Identity:
    ...     def encode(self, texts):
    ...         return np.eye(2, dtype=np.float32)[[int(t) for t in texts]]
    >>> bitext_matching_accuracy(Identity(), ["0", "1"], ["0", "1"])
    {'en_to_x': 1.0, 'x_to_en': 1.0}

Held-out pairs come per language from a release's ``heldout/`` (``heldout_sets``) or a TSV
(``read_tsv_sets``), and ``bitext_report`` scores each language. ``teacher_fidelity`` is the
distillation check of Reimers & Gurevych 2020: how close a student's embeddings of English
sentences stay to its teacher's (mean cosine, and the mean squared error the student trained on).

Needs numpy only: any object with ``encode(texts) -> (n, d) float32`` works.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np


class TextEncoder(Protocol):
    """Anything that embeds texts as L2-normalised float32 rows (``eval``'s ``Encoder``)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def bitext_matching_accuracy(
    encoder: TextEncoder,
    src_texts: Sequence[str],
    trg_texts: Sequence[str],
    block_rows: int = 4096,
) -> dict[str, float]:
    """Nearest-neighbour matching accuracy of aligned bitext, in both directions.

    Ties go to the lowest index (``argmax``), so a degenerate encoder that embeds everything
    alike scores ``1/n``, not ``1``.

    Args:
        encoder: embeds texts as ``(n, d)`` L2-normalised rows (cosine = dot product).
        src_texts: English sentences; ``src_texts[i]`` translates ``trg_texts[i]``.
        trg_texts: the other language's sentences, aligned with ``src_texts``.
        block_rows: source rows scored at once; memory is ``block_rows * n`` floats.

    Returns:
        ``{"en_to_x": ..., "x_to_en": ...}``: the share of English sentences whose nearest
        target is their translation, and the share of target sentences whose nearest English
        sentence is theirs.

    Raises:
        ValueError: when the two sides differ in length or are empty.
    """
    if len(src_texts) != len(trg_texts):
        raise ValueError(f"{len(src_texts)} source but {len(trg_texts)} target sentences")
    n = len(src_texts)
    if n == 0:
        raise ValueError("no sentences to match")
    src = np.asarray(encoder.encode(list(src_texts)), dtype=np.float32)  # (n, d)
    trg = np.asarray(encoder.encode(list(trg_texts)), dtype=np.float32)  # (n, d)
    src_hits = 0
    best_src_score = np.full(n, -np.inf, dtype=np.float32)  # (n,): per target, best so far
    best_src_index = np.zeros(n, dtype=np.int64)  # (n,)
    for start in range(0, n, block_rows):
        scores = src[start : start + block_rows] @ trg.T  # (b, n): cos(source row, target)
        rows = np.arange(start, start + scores.shape[0])  # (b,)
        src_hits += int((scores.argmax(axis=1) == rows).sum())
        block_best = scores.argmax(axis=0)  # (n,): best source row in this block per target
        block_score = scores[block_best, np.arange(n)]  # (n,)
        better = block_score > best_src_score  # strict: earlier blocks win ties
        best_src_score[better] = block_score[better]
        best_src_index[better] = block_best[better] + start
    trg_hits = int((best_src_index == np.arange(n)).sum())
    return {"en_to_x": src_hits / n, "x_to_en": trg_hits / n}


def read_aligned_lines(src_path: Path, trg_path: Path) -> tuple[list[str], list[str]]:
    """Read line-aligned bitext (Moses style, e.g. ``tatoeba.deu-eng.eng`` / ``.deu``).

    Args:
        src_path: one sentence a line, English.
        trg_path: one sentence a line, the other language, aligned with ``src_path``.

    Returns:
        The two sides' lines without their line ends.

    Raises:
        ValueError: when the files have different line counts.
    """
    src = _lines(Path(src_path))
    trg = _lines(Path(trg_path))
    if len(src) != len(trg):
        raise ValueError(f"{src_path} has {len(src)} lines but {trg_path} has {len(trg)}")
    return src, trg


def read_heldout_pairs(folder: Path) -> tuple[list[str], list[str]]:
    """Read a release's held-out folder (``heldout/<dataset>/<l1>-<l2>``, written by
    ``--holdout``): the anchors (English) and positives of its Parquet shards, in file order.

    Args:
        folder: the held-out folder of one dataset and language pair.

    Returns:
        The anchors and the positives, aligned.

    Raises:
        ValueError: the folder holds no Parquet shard, or a shard lacks the two columns.
    """
    import pyarrow.parquet as pq

    shards = sorted(Path(folder).glob("*.parquet"))
    if not shards:
        raise ValueError(f"{folder} holds no Parquet shard (a RELEASE/heldout/<dataset>/<l1>-<l2>)")
    anchors: list[str] = []
    positives: list[str] = []
    for shard in shards:
        try:
            table = pq.read_table(shard, columns=["anchor", "positive"])
        except (KeyError, ValueError, OSError) as exc:
            raise ValueError(f"{shard} is not a pair shard: {exc}") from exc
        anchors += table.column("anchor").to_pylist()
        positives += table.column("positive").to_pylist()
    return anchors, positives


BitextSets = dict[str, tuple[list[str], list[str]]]
"""Held-out bitext by name (``<dataset>/<l1>-<l2>`` or a TSV's language): English, other side."""


def heldout_sets(folder: Path) -> BitextSets:
    """Every held-out set under ``folder``, by its path below it.

    Args:
        folder: a release's ``heldout/`` (sets ``<dataset>/<l1>-<l2>``), one dataset's folder,
            or one set's folder itself (named ``.``).

    Returns:
        Each folder holding Parquet shards, by its path relative to ``folder``, sorted.

    Raises:
        ValueError: no folder under ``folder`` holds a Parquet shard.
    """
    folder = Path(folder)
    found = sorted({shard.parent for shard in folder.rglob("*.parquet")})
    if not found:
        raise ValueError(f"{folder} holds no held-out Parquet shard (RELEASE/heldout, --holdout)")
    return {
        (set_folder.relative_to(folder).as_posix() or "."): read_heldout_pairs(set_folder)
        for set_folder in found
    }


def read_tsv_sets(path: Path) -> BitextSets:
    """Held-out bitext from a TSV: ``lang<TAB>english<TAB>other`` or ``english<TAB>other`` lines.

    Args:
        path: the TSV file, UTF-8, no header; two-column lines belong to the set ``x``.

    Returns:
        The sets by language, in order of first appearance.

    Raises:
        ValueError: a line has neither two nor three fields, or the file has no line.
    """
    sets: BitextSets = {}
    for number, line in enumerate(_lines(Path(path)), start=1):
        fields = line.split("\t")
        if len(fields) == 2:
            fields = ["x", *fields]
        if len(fields) != 3:
            raise ValueError(f"{path}:{number}: {len(fields)} tab-separated fields, want 2 or 3")
        english, other = sets.setdefault(fields[0], ([], []))
        english.append(fields[1])
        other.append(fields[2])
    if not sets:
        raise ValueError(f"{path} holds no pair")
    return sets


def bitext_report(encoder: TextEncoder, sets: BitextSets) -> dict[str, Any]:
    """Bitext matching of each set both ways, and their mean.

    Args:
        encoder: embeds texts as L2-normalised rows.
        sets: held-out sets by name (``heldout_sets``, ``read_tsv_sets``).

    Returns:
        ``{"sets": {name: {"pairs", "en_to_x", "x_to_en", "mean"}}, "mean": ...}``: ``mean``
        of a set is the mean of its two directions, the overall ``mean`` that of the sets'.
    """
    scores: dict[str, dict[str, Any]] = {}
    for name, (english, other) in sets.items():
        accuracy = bitext_matching_accuracy(encoder, english, other)
        mean = (accuracy["en_to_x"] + accuracy["x_to_en"]) / 2
        scores[name] = {"pairs": len(english), **accuracy, "mean": mean}
    overall = float(np.mean([r["mean"] for r in scores.values()]))
    return {"sets": scores, "mean": overall}


def teacher_fidelity(
    student: TextEncoder, teacher: TextEncoder, english: Sequence[str]
) -> dict[str, float | int]:
    """How close the student's embeddings of English sentences are to the teacher's.

    Args:
        student: the distilled encoder (L2-normalised rows).
        teacher: the teacher (L2-normalised rows of the same size).
        english: held-out English sentences; each distinct one counts once.

    Returns:
        ``{"sentences", "cosine", "mse"}``: the number of distinct sentences, the mean cosine
        of student and teacher rows, and the mean squared error over rows and dimensions (the
        distillation loss, ``losses.mse_loss``).

    Raises:
        ValueError: no sentence, or the two encoders' sizes differ.
    """
    texts = list(dict.fromkeys(english))
    if not texts:
        raise ValueError("no English sentence to compare student and teacher on")
    s = np.asarray(student.encode(texts), dtype=np.float32)  # (n, d)
    t = np.asarray(teacher.encode(texts), dtype=np.float32)  # (n, d')
    if s.shape != t.shape:
        raise ValueError(f"the student gives {s.shape[1]}-d embeddings, the teacher {t.shape[1]}-d")
    cosine = float(np.mean(np.sum(s * t, axis=1)))
    mse = float(np.mean((s - t) ** 2))
    return {"sentences": len(texts), "cosine": cosine, "mse": mse}


def _lines(path: Path) -> list[str]:
    """The file's lines, split on line feeds only.

    ``str.splitlines`` would also split inside a sentence that holds U+2028 or U+0085 and shift
    every later line out of alignment.
    """
    text = path.read_text(encoding="utf-8")
    if not text:
        return []
    return [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")]
