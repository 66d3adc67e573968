"""Fast-encoder encoding throughput on one CPU core: sentences per second, median of runs.

    PYTHONPATH=src python benchmarks/bench_encoder.py
    PYTHONPATH=src python benchmarks/bench_encoder.py --model models/fast --texts tweets.txt

Input by default: every sentence of the real STS benchmark (train, dev and test, both sides,
from ``../shared/realdata/stsbenchmark``), or one sentence a line from ``--texts``. Without
``--model`` the encoder is built as ``corpusforge train`` builds it with the fast model's
defaults (sentencepiece unigram, up to 8,000 pieces, trained on the STSb training pairs;
1,024 dimensions) and saved untrained (``max_steps=0``): the weights do not change the speed.

Torch runs on one thread (``torch.set_num_threads(1)``), which also keeps sentencepiece on one;
the time covers the whole ``encode`` call: tokenising, averaging, normalising, and copying to
numpy. One untimed warm-up run, then ``--runs`` timed runs; prints each and their median.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import torch

from corpusforge.eval.sts import read_sts
from corpusforge.schemas import PAIR, arrow_schema

REPO = Path(__file__).resolve().parents[1]
STSB = REPO.parent / "shared" / "realdata" / "stsbenchmark"
SPLITS = ("sts-train.csv", "sts-dev.csv", "sts-test.csv")


def stsb_sentences(folder: Path) -> list[str]:
    """Both sides of every pair of the three STSb files."""
    sentences: list[str] = []
    for name in SPLITS:
        pairs = read_sts(folder / name)
        sentences += pairs.left + pairs.right
    return sentences


def build_untrained_fast_encoder(folder: Path, out: Path) -> Path:
    """Write the STSb training pairs as a pair shard and run ``train`` for 0 steps."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from corpusforge.train.trainer import TrainConfig, train

    pairs = read_sts(folder / "sts-train.csv")
    n = len(pairs.left)
    table = pa.table(
        {
            "anchor": pairs.left,
            "positive": pairs.right,
            "anchor_id": list(range(0, 2 * n, 2)),
            "positive_id": list(range(1, 2 * n, 2)),
            "root_id": list(range(0, 2 * n, 2)),
            "dataset": ["stsb"] * n,
            "lang": ["en"] * n,
        },
        schema=arrow_schema(PAIR),
    )
    (out / "pairs").mkdir(parents=True)
    pq.write_table(table, out / "pairs" / "stsb-train.parquet")
    train(out / "pairs", out / "model", TrainConfig(max_steps=0, device="cpu"))
    return out / "model"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="a fast-encoder model folder")
    parser.add_argument("--texts", type=Path, help="one sentence a line [default: STSb]")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (>= 3)")
    args = parser.parse_args(argv)
    if args.runs < 3:
        parser.error("--runs must be >= 3")

    torch.set_num_threads(1)
    from corpusforge.train.models import FastEncoder, load_encoder

    if args.texts is not None:
        sentences = args.texts.read_text(encoding="utf-8").split("\n")
        sentences = [s for s in sentences if s.strip()]
        source = str(args.texts)
    else:
        sentences = stsb_sentences(STSB)
        source = f"STSb train+dev+test, both sides ({STSB})"

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or build_untrained_fast_encoder(STSB, Path(tmp))
        encoder = load_encoder(model)
        if not isinstance(encoder, FastEncoder):
            parser.error(f"{model} is not a fast-encoder folder")
        ids, _ = encoder.tokenize(sentences)
        print(f"input: {len(sentences):,} sentences from {source}")
        print(f"       {ids.numel() / len(sentences):.1f} pieces a sentence on average")
        print(
            f"model: {model if args.model else 'fast defaults, untrained'}; "
            f"{encoder.embedding.num_embeddings:,} pieces x {encoder.dim} dimensions"
        )
        print(
            f"host:  {platform.processor() or platform.machine()}, torch {torch.__version__}, "
            f"threads {torch.get_num_threads()}"
        )
        encoder.encode(sentences)  # warm-up, untimed
        rates = []
        for run in range(1, args.runs + 1):
            started = time.perf_counter()
            rows = encoder.encode(sentences)
            seconds = time.perf_counter() - started
            rates.append(len(sentences) / seconds)
            print(f"run {run}: {seconds:.3f} s, {rates[-1]:,.0f} sentences/s")
        assert rows.shape == (len(sentences), encoder.dim)
    median = statistics.median(rates)
    print(f"median of {args.runs} runs: {median:,.0f} sentences/s on one thread")
    print(json.dumps({"sentences": len(sentences), "runs": rates, "median": median}))


if __name__ == "__main__":
    main()
