"""Multilingual distillation targets: a frozen teacher and a bitext release -> cached embeddings.

Reimers & Gurevych 2020, "Making Monolingual Sentence Embeddings Multilingual using Knowledge
Distillation" (arXiv:2004.09813), as CT-XLMR-SE trains its students: for a pair (English
``anchor``, its translation ``positive``) the student learns ``student(anchor) ~ teacher(anchor)``
and ``student(positive) ~ teacher(anchor)`` under mean squared error (``losses.mse_loss``).

    corpusforge train --data RELEASE/pairs/tatoeba --out models/student \\
        --loss mse --teacher /path/to/all-MiniLM-L6-v2

The teacher only ever embeds, in evaluation mode and without gradients, before the first step:
each distinct anchor once. Its parameters are never handed to the optimiser. The embeddings
(the teacher's ``encode``: mean pooling, L2-normalised, as all-MiniLM-L6-v2's ``Normalize``
module) are cached beside the model folder, in ``<out>/../teacher-embeddings/<teacher>.parquet``:

- ``<teacher>`` is ``teacher_identity(folder)``, a sha256 of every file of the teacher's folder
  (config, weights, tokenizer) and its token limit, so another teacher never reads them;
- each row is ``(key, embedding)``, ``key`` the sha256 of the anchor's UTF-8 text;
- later epochs and later runs with the same teacher read the cache and embed only the anchors
  it lacks; the file is replaced in one rename, so a crash leaves the old cache or the new one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from corpusforge.train.models import TransformerEncoder, folder_max_seq_length

log = logging.getLogger(__name__)

CACHE_FOLDER = "teacher-embeddings"
CACHE_FORMAT = b"corpusforge-teacher-embeddings/1"
_TEACHER_BATCH = 256  # texts per teacher forward pass


def text_key(text: str) -> str:
    """The cache key of one text: the hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def teacher_identity(folder: Path, max_seq_length: int) -> str:
    """A sha256 naming the teacher: every file of its folder, by relative path, and its limit.

    Args:
        folder: the teacher's local Hugging Face model folder.
        max_seq_length: the token limit the teacher embeds with.
    """
    folder = Path(folder)
    digest = hashlib.sha256(CACHE_FORMAT + b"\0" + str(max_seq_length).encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(b"\0" + path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def load_teacher(folder: Path) -> TransformerEncoder:
    """The frozen teacher: a local Hugging Face folder, in evaluation mode, without gradients.

    Args:
        folder: a local Hugging Face model folder (``config.json``, weights, tokenizer).
    """
    teacher = TransformerEncoder.from_local(Path(folder))
    teacher.eval()
    teacher.requires_grad_(False)
    return teacher


def cache_schema(dim: int) -> pa.Schema:
    """The cache file's schema: the text's key and its ``dim`` float32 teacher embedding."""
    return pa.schema(
        [("key", pa.string()), ("embedding", pa.list_(pa.float32(), dim))],
        metadata={b"format": CACHE_FORMAT},
    )


class TeacherTargets:
    """The teacher's embeddings of a set of texts, looked up by text.

    Args:
        keys: ``text_key`` of each row.
        embeddings: ``(n, d)`` float32, L2-normalised teacher embeddings, row ``i`` of
            ``keys[i]``.
        computed: how many of the rows the teacher embedded in this run (the rest came from
            the cache).
    """

    def __init__(self, keys: Sequence[str], embeddings: np.ndarray, computed: int) -> None:
        if len(keys) != embeddings.shape[0]:
            raise ValueError(f"{len(keys)} keys but {embeddings.shape[0]} embeddings")
        self.row = {key: i for i, key in enumerate(keys)}
        self.embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)  # (n, d)
        self.computed = computed

    @property
    def dim(self) -> int:
        """The teacher's embedding size ``d``."""
        return int(self.embeddings.shape[1])

    def __len__(self) -> int:
        return len(self.row)

    def lookup(self, texts: Sequence[str]) -> torch.Tensor:
        """The ``(B, d)`` teacher embeddings of ``texts``, each of which must be known."""
        rows = [self.row[text_key(text)] for text in texts]
        return torch.from_numpy(self.embeddings[rows])  # (B, d)


def teacher_targets(
    teacher_folder: Path, anchors: Iterable[str], cache_dir: Path
) -> TeacherTargets:
    """Embed every distinct anchor with the teacher once, reading and extending the cache.

    The teacher is loaded only when the cache lacks an anchor, and released before returning.

    Args:
        teacher_folder: the teacher's local Hugging Face model folder.
        anchors: the English anchors of the training pairs, repeats allowed.
        cache_dir: the folder of the cache files (created when missing).

    Returns:
        The targets of every distinct anchor; ``computed`` says how many the teacher embedded.
    """
    teacher_folder = Path(teacher_folder)
    wanted: dict[str, str] = {}
    for text in anchors:
        wanted.setdefault(text_key(text), text)
    max_seq_length = folder_max_seq_length(teacher_folder)
    cache = Path(cache_dir) / f"{teacher_identity(teacher_folder, max_seq_length)}.parquet"
    keys, embeddings = _read_cache(cache)
    known = set(keys)
    missing = [key for key in wanted if key not in known]
    if missing:
        log.info("teacher embeds %d of %d distinct anchors", len(missing), len(wanted))
        teacher = load_teacher(teacher_folder)
        texts = [wanted[key] for key in missing]
        with torch.no_grad():
            rows = [
                teacher.encode(texts[start : start + _TEACHER_BATCH])
                for start in range(0, len(texts), _TEACHER_BATCH)
            ]
        del teacher
        new = np.concatenate(rows)  # (m, d), L2-normalised
        if embeddings is not None and embeddings.shape[1] != new.shape[1]:
            raise ValueError(
                f"{cache} holds {embeddings.shape[1]}-d rows, teacher gives {new.shape[1]}"
            )
        keys = keys + missing
        embeddings = new if embeddings is None else np.concatenate([embeddings, new])
        _write_cache(cache, keys, embeddings)
    if embeddings is None:  # no anchor at all
        raise ValueError("no anchor to embed with the teacher")
    return TeacherTargets(keys, embeddings, computed=len(missing))


def _read_cache(path: Path) -> tuple[list[str], np.ndarray | None]:
    """The keys and ``(n, d)`` embeddings of a cache file; none when it does not exist."""
    if not path.is_file():
        return [], None
    table = pq.read_table(path)
    if table.schema.metadata is None or table.schema.metadata.get(b"format") != CACHE_FORMAT:
        raise ValueError(f"{path} is not a corpusforge teacher-embedding cache")
    column = table.column("embedding").combine_chunks()
    dim = column.type.list_size
    values = column.values.to_numpy(zero_copy_only=False)
    return table.column("key").to_pylist(), values.reshape(-1, dim).astype(np.float32)


def _write_cache(path: Path, keys: list[str], embeddings: np.ndarray) -> None:
    """Write the whole cache next to ``path`` and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    dim = int(embeddings.shape[1])
    values = pa.array(embeddings.reshape(-1), type=pa.float32())
    table = pa.table(
        [pa.array(keys, type=pa.string()), pa.FixedSizeListArray.from_arrays(values, dim)],
        schema=cache_schema(dim),
    )
    handle, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".parquet", dir=path.parent)
    os.close(handle)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
