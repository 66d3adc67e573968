"""Helpers of the training tests: a tiny topical release written with the real schemas.

Until the synthetic archive runs through the whole pipeline, ``write_topical_release`` makes
what a release's trainer and evaluator read: ``pairs/all/*.parquet`` (``pair.v1``) and
``benchmarks/{dq,dr,cq,cr}.parquet`` (``benchmark.v1``). Each topic has its own vocabulary of
made-up words; a sentence mixes topic words with words common to all topics. Pairs join two
sentences of one topic; each benchmark query has 5 same-topic positives and 25 other-topic
negatives, all sentences unseen in the pairs. Two sentences of one topic share few words, so a
bag-of-pieces model has to learn which words go together to rank well.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from corpusforge.schemas import BENCHMARK, PAIR, arrow_schema

_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def write_pairs(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    """Write ``pair.v1`` rows (dicts with every column) to the Parquet file ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema(PAIR)
    pq.write_table(pa.Table.from_pylist(list(rows), schema=schema), path)
    return path


def pair_row(anchor: str, positive: str, anchor_id: int, positive_id: int) -> dict[str, object]:
    """A ``pair.v1`` row of the ``rp`` dataset in English."""
    return {
        "anchor": anchor,
        "positive": positive,
        "anchor_id": anchor_id,
        "positive_id": positive_id,
        "root_id": anchor_id,
        "dataset": "rp",
        "lang": "en",
    }


class TopicalCorpus:
    """Sentences drawn from ``topics`` vocabularies plus a shared one, seeded.

    Args:
        seed: seed of the vocabularies and of every sentence drawn.
        topics: number of topics.
        topic_words: words of each topic's vocabulary.
        common_words: words shared by all topics.
    """

    def __init__(
        self, seed: int = 0, topics: int = 8, topic_words: int = 30, common_words: int = 40
    ) -> None:
        self.rng = random.Random(seed)
        words = self._words(topics * topic_words + common_words)
        self.topics = topics
        self.vocab = [words[t * topic_words : (t + 1) * topic_words] for t in range(topics)]
        self.common = words[topics * topic_words :]

    def _words(self, n: int) -> list[str]:
        seen: dict[str, None] = {}
        while len(seen) < n:
            seen["".join(self.rng.choices(_SYLLABLES, k=self.rng.randint(2, 3)))] = None
        return list(seen)

    def sentence(self, topic: int) -> str:
        """Four words of ``topic`` and four common words, shuffled."""
        words = self.rng.sample(self.vocab[topic], 4) + self.rng.sample(self.common, 4)
        self.rng.shuffle(words)
        return " ".join(words)


def write_topical_release(
    root: Path, *, seed: int = 0, pairs: int = 2000, queries: int = 8, shards: int = 2
) -> Path:
    """Write a tiny release under ``root``: ``pairs/all/`` shards and four benchmarks.

    Args:
        root: the release folder (created).
        seed: seed of the whole corpus.
        pairs: training pairs, spread over the topics in turn.
        queries: queries in each benchmark.
        shards: number of pair shards.

    Returns:
        ``root``.
    """
    corpus = TopicalCorpus(seed)
    rows = []
    for i in range(pairs):
        topic = i % corpus.topics
        rows.append(pair_row(corpus.sentence(topic), corpus.sentence(topic), 2 * i, 2 * i + 1))
    for shard in range(shards):
        write_pairs(root / "pairs" / "all" / f"part-{shard:05d}.parquet", rows[shard::shards])
    next_id = 10**6
    for name in ("dq", "dr", "cq", "cr"):
        records = []
        for q in range(queries):
            topic = q % corpus.topics
            others = [t for t in range(corpus.topics) if t != topic]
            labelled = [(corpus.sentence(topic), 1) for _ in range(5)]
            labelled += [(corpus.sentence(corpus.rng.choice(others)), 0) for _ in range(25)]
            corpus.rng.shuffle(labelled)
            records.append(
                {
                    "query": corpus.sentence(topic),
                    "query_id": next_id,
                    "candidates": [text for text, _ in labelled],
                    "candidate_ids": list(range(next_id + 1, next_id + 31)),
                    "labels": [label for _, label in labelled],
                    "root_id": next_id,
                }
            )
            next_id += 31
        path = root / "benchmarks" / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(records, schema=arrow_schema(BENCHMARK)), path)
    return root


TEACHER_DIM = 32


def write_teacher(folder: Path, words: list[str], seed: int) -> Path:
    """A tiny BERT teacher: seeded random weights, 32 dimensions, a vocabulary of ``words``.

    Needs torch and transformers (imported here, so importing this package needs neither).
    """
    import torch
    import transformers

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    transformers.BertTokenizerFast(str(folder / "vocab.txt")).save_pretrained(str(folder))
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=TEACHER_DIM,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    transformers.BertModel(config).save_pretrained(str(folder))
    return folder
