"""Sentence encoders to train and evaluate: texts -> ``(n, d)`` float32 L2-normalised rows.

- ``FastEncoder``: P-SP style (Wieting et al. 2019, "Simple and Effective Paraphrastic
  Similarity from Parallel Translations", arXiv:1909.13872): a sentencepiece model trained on the
  release's texts, and the mean of the pieces' embeddings (``EmbeddingBag``). Trains on CPU in
  minutes and encodes tens of thousands of sentences a second on one core
  (``benchmarks/bench_encoder.py``).
- ``TransformerEncoder``: a Hugging Face transformer read from a local folder (nothing is
  downloaded), mean-pooled over the attention mask as sentence-transformers does.
- ``load_encoder(path)``: a model folder written by ``save`` (or a plain Hugging Face model
  folder) -> an encoder that ``corpusforge.eval`` scores through its ``Encoder`` protocol.

A model folder holds ``encoder.json`` (``{"format": "corpusforge-encoder", "version": 1,
"kind": "fast" | "transformer", ...}``) beside the model's own files: ``spm.model`` and
``embeddings.npy`` for the fast encoder, the Hugging Face files for a transformer.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ENCODER_FILE = "encoder.json"
ENCODER_FORMAT = "corpusforge-encoder"
ENCODER_FORMAT_VERSION = 1
DEFAULT_MAX_SEQ_LENGTH = 128
_TEXTS_PER_THREAD = 2048


class SentenceEncoder(nn.Module):
    """A trainable encoder: ``forward`` embeds texts with gradients, ``encode`` for evaluation."""

    kind: ClassVar[str]
    encode_batch_size: ClassVar[int]

    def forward(self, texts: Sequence[str]) -> torch.Tensor:
        """Embed ``B`` texts as a ``(B, d)`` tensor, not normalised, with gradients."""
        raise NotImplementedError

    @property
    def dim(self) -> int:
        """The embedding size ``d``."""
        raise NotImplementedError

    @property
    def device(self) -> torch.device:
        """Where the parameters are."""
        return next(self.parameters()).device

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts for evaluation: ``(n, d)`` float32, rows L2-normalised.

        A text with nothing to embed (e.g. empty for the fast encoder) gets a zero row.
        """
        was_training = self.training
        self.eval()
        rows: list[np.ndarray] = []
        texts = list(texts)
        try:
            with torch.inference_mode():
                for start in range(0, len(texts), self.encode_batch_size):
                    batch = self(texts[start : start + self.encode_batch_size])  # (b, d)
                    rows.append(F.normalize(batch.float(), dim=-1).cpu().numpy())
        finally:
            self.train(was_training)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(rows).astype(np.float32, copy=False)

    def save(self, out: Path) -> None:
        """Write the model folder ``out`` (created if missing), ``encoder.json`` included."""
        raise NotImplementedError


def _write_encoder_config(out: Path, kind: str, **fields: Any) -> None:
    config = {
        "format": ENCODER_FORMAT,
        "version": ENCODER_FORMAT_VERSION,
        "kind": kind,
        **fields,
    }
    (out / ENCODER_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def read_encoder_config(folder: Path) -> dict[str, Any]:
    """Parse and check ``folder/encoder.json``."""
    path = Path(folder) / ENCODER_FILE
    config: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if config.get("format") != ENCODER_FORMAT:
        raise ValueError(f"{path} is not a corpusforge encoder config")
    if config.get("version") != ENCODER_FORMAT_VERSION:
        raise ValueError(f"{path} has version {config.get('version')!r}, this corpusforge reads 1")
    return config


def train_sentencepiece(
    texts: Iterable[str], vocab_size: int, seed: int, num_threads: int = 4
) -> bytes:
    """Train a sentencepiece unigram model on ``texts`` and return its serialised bytes.

    Args:
        texts: training sentences (line breaks inside one are turned into spaces).
        vocab_size: the wanted number of pieces; fewer when the texts cannot fill it.
        seed: sentencepiece's random seed.
        num_threads: trainer threads. Piece scores depend on it (float sums in another
            order), so it is a fixed setting, not the machine's core count.

    Returns:
        The model, as ``SentencePieceProcessor(model_proto=...)`` reads it.
    """
    import sentencepiece as spm

    def sentences() -> Iterable[str]:
        for text in texts:
            line = " ".join(text.split())
            if line:
                yield line

    spm.set_random_generator_seed(seed)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences()),
        model_writer=model,
        model_type="unigram",
        vocab_size=vocab_size,
        hard_vocab_limit=False,
        character_coverage=0.9995,
        num_threads=num_threads,
        minloglevel=2,
    )
    return model.getvalue()


class FastEncoder(SentenceEncoder):
    """Mean of sentencepiece piece embeddings (P-SP's averaging model).

    Unknown pieces are left out of the mean, as P-SP's ``--zero-unk`` does.

    Args:
        spm_model: a serialised sentencepiece model.
        embeddings: ``(vocab_size, dim)`` piece embeddings.
    """

    kind = "fast"
    encode_batch_size = 8192

    def __init__(self, spm_model: bytes, embeddings: torch.Tensor) -> None:
        super().__init__()
        import sentencepiece as spm

        self.spm_model = spm_model
        self.sp = spm.SentencePieceProcessor(model_proto=spm_model)
        if embeddings.shape[0] != self.sp.get_piece_size():
            raise ValueError(
                f"{embeddings.shape[0]} embedding rows for {self.sp.get_piece_size()} pieces"
            )
        self.unk_id = self.sp.unk_id()
        self.embedding = nn.EmbeddingBag.from_pretrained(
            embeddings.float(), freeze=False, mode="mean"
        )

    @classmethod
    def initialise(cls, spm_model: bytes, dim: int, seed: int) -> FastEncoder:
        """A new encoder with ``N(0, 1)`` piece embeddings (``nn.Embedding``'s init, as P-SP)."""
        import sentencepiece as spm

        vocab = spm.SentencePieceProcessor(model_proto=spm_model).get_piece_size()
        generator = torch.Generator().manual_seed(seed)
        return cls(spm_model, torch.randn(vocab, dim, generator=generator))

    @property
    def dim(self) -> int:
        return int(self.embedding.embedding_dim)

    def tokenize(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Piece ids of ``B`` texts, flat, with each text's start: ``EmbeddingBag``'s input.

        Returns:
            ``(ids, offsets)``: ``(T,)`` int64 piece ids of all texts one after the other,
            unknown pieces dropped, and ``(B,)`` int64 index in ``ids`` where each text starts.
        """
        # Threads only pay for themselves on large batches; training batches stay on one.
        threads = max(1, min(torch.get_num_threads(), len(texts) // _TEXTS_PER_THREAD))
        pieces = self.sp.encode(list(texts), out_type=int, num_threads=threads)
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))  # (B,)
        ids = np.fromiter(
            chain.from_iterable(pieces), dtype=np.int64, count=int(lengths.sum())
        )  # (T,)
        known = ids != self.unk_id  # (T,)
        if not known.all():
            owner = np.repeat(np.arange(len(pieces)), lengths)  # (T,): text of each piece
            lengths = np.bincount(owner[known], minlength=len(pieces))  # (B,)
            ids = ids[known]
        offsets = np.zeros(len(pieces), dtype=np.int64)  # (B,)
        np.cumsum(lengths[:-1], out=offsets[1:])
        return torch.from_numpy(ids), torch.from_numpy(offsets)

    def forward(self, texts: Sequence[str]) -> torch.Tensor:
        ids, offsets = self.tokenize(texts)  # (T,), (B,)
        device = self.device
        # (B, dim): mean of each text's piece embeddings; zeros for a text with no known piece
        return self.embedding(ids.to(device), offsets.to(device))

    def save(self, out: Path) -> None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "spm.model").write_bytes(self.spm_model)
        np.save(out / "embeddings.npy", self.embedding.weight.detach().cpu().numpy())
        _write_encoder_config(
            out,
            self.kind,
            dim=self.dim,
            vocab_size=int(self.embedding.num_embeddings),
            pooling="mean",
            files={"tokenizer": "spm.model", "embeddings": "embeddings.npy"},
        )

    @classmethod
    def load(cls, folder: Path) -> FastEncoder:
        """Read a folder written by ``save``."""
        folder = Path(folder)
        embeddings = torch.from_numpy(np.load(folder / "embeddings.npy"))
        return cls((folder / "spm.model").read_bytes(), embeddings)


def folder_max_seq_length(folder: Path) -> int:
    """A Hugging Face folder's token limit: its sentence-transformers setting
    (``sentence_bert_config.json``) or ``DEFAULT_MAX_SEQ_LENGTH``; loads nothing else."""
    st_config = Path(folder) / "sentence_bert_config.json"
    if st_config.is_file():
        return int(json.loads(st_config.read_text(encoding="utf-8"))["max_seq_length"])
    return DEFAULT_MAX_SEQ_LENGTH


class TransformerEncoder(SentenceEncoder):
    """A Hugging Face transformer, mean-pooled over the attention mask.

    Args:
        model: a ``transformers`` model whose output has ``last_hidden_state``.
        tokenizer: its tokenizer.
        max_seq_length: texts are cut to this many tokens.
    """

    kind = "transformer"
    encode_batch_size = 64

    def __init__(self, model: Any, tokenizer: Any, max_seq_length: int) -> None:
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length

    @classmethod
    def from_local(cls, folder: Path, max_seq_length: int | None = None) -> TransformerEncoder:
        """Load a local Hugging Face model folder; never downloads.

        Args:
            folder: a folder with ``config.json``, the weights and the tokenizer files.
            max_seq_length: token limit; by default the folder's sentence-transformers setting
                (``sentence_bert_config.json``) or 128.
        """
        folder = Path(folder)
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(
                f"{folder} is not a local Hugging Face model folder (no config.json); "
                "corpusforge never downloads models"
            )
        from transformers import AutoModel, AutoTokenizer

        if max_seq_length is None:
            max_seq_length = folder_max_seq_length(folder)
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModel.from_pretrained(str(folder), local_files_only=True)
        return cls(model, tokenizer, max_seq_length)

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    def forward(self, texts: Sequence[str]) -> torch.Tensor:
        batch = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self.max_seq_length,
            return_tensors="pt",
        ).to(self.device)
        hidden = self.model(**batch).last_hidden_state  # (B, T, H)
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)  # (B, T, 1): 1 = token
        summed = (hidden * mask).sum(dim=1)  # (B, H)
        return summed / mask.sum(dim=1).clamp(min=1e-9)  # (B, H): mean over real tokens

    def save(self, out: Path) -> None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(out))
        self.tokenizer.save_pretrained(str(out))
        _write_encoder_config(
            out, self.kind, dim=self.dim, max_seq_length=self.max_seq_length, pooling="mean"
        )

    @classmethod
    def load(cls, folder: Path) -> TransformerEncoder:
        """Read a folder written by ``save``."""
        config = read_encoder_config(folder)
        return cls.from_local(folder, int(config["max_seq_length"]))


def load_encoder(path: str | Path) -> SentenceEncoder:
    """Load a trained model folder as an encoder, in evaluation mode.

    Args:
        path: a folder written by ``corpusforge train`` (with ``encoder.json``), or a plain
            local Hugging Face model folder (read as a mean-pooled transformer).

    Returns:
        An encoder whose ``encode(texts)`` gives ``(n, d)`` float32 L2-normalised rows.

    Raises:
        FileNotFoundError: when ``path`` is neither kind of folder.
        ValueError: when ``encoder.json`` names an unknown kind.
    """
    folder = Path(path)
    encoder: SentenceEncoder
    if (folder / ENCODER_FILE).is_file():
        kind = read_encoder_config(folder)["kind"]
        if kind == FastEncoder.kind:
            encoder = FastEncoder.load(folder)
        elif kind == TransformerEncoder.kind:
            encoder = TransformerEncoder.load(folder)
        else:
            raise ValueError(f"{folder / ENCODER_FILE}: unknown encoder kind {kind!r}")
    elif (folder / "config.json").is_file():
        encoder = TransformerEncoder.from_local(folder)
    else:
        raise FileNotFoundError(f"{folder} holds no {ENCODER_FILE} nor a Hugging Face config.json")
    return encoder.eval()
