"""``corpusforge train``: a release's pairs -> a trained sentence encoder folder.

    corpusforge train --data release/pairs/all --out models/fast
    corpusforge train --data release/pairs/all --out models/minilm \
        --model ../models/all-MiniLM-L6-v2
    corpusforge train --data bitext/pairs/tatoeba --out models/student --model fast \
        --loss mse --teacher ../models/all-MiniLM-L6-v2

The model folder evaluates with ``corpusforge eval ... --model models/fast``. Torch and the
other training libraries (the ``train`` extra) are imported only when the command runs; where
one is missing the command says how to install it instead of failing on an import.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

INSTALL_HINT = "install with pip install 'corpusforge[train]'"

console = Console(stderr=True)


def missing_modules(model: str, teacher: str | None = None) -> list[str]:
    """The training libraries that ``model`` needs and this environment lacks.

    Args:
        model: ``"fast"`` (needs torch and sentencepiece) or a Hugging Face model folder
            (needs torch and transformers).
        teacher: a distillation teacher's folder (needs transformers too).
    """
    needed = ["torch", "sentencepiece" if model == "fast" else "transformers"]
    if teacher is not None and "transformers" not in needed:
        needed.append("transformers")
    return [name for name in needed if importlib.util.find_spec(name) is None]


def train(
    data: Annotated[
        str,
        typer.Option(
            help="folder of pair Parquet shards, e.g. RELEASE/pairs/all; on s3:// the "
            "current version of the release, downloaded once"
        ),
    ],
    out: Annotated[Path, typer.Option(help="model folder to write (new or empty)")],
    model: Annotated[
        str,
        typer.Option(
            help="'fast' (built-in P-SP style encoder) or a local Hugging Face model folder"
        ),
    ] = "fast",
    loss: Annotated[
        str | None,
        typer.Option(
            help="mnrl, triplet or mse, which distils --teacher (default: mse with "
            "--teacher, else triplet for fast as P-SP, mnrl otherwise)"
        ),
    ] = None,
    teacher: Annotated[
        str | None,
        typer.Option(
            help="local Hugging Face model folder the student learns from with --loss mse: "
            "both sides of each pair regress on its embedding of the English anchor"
        ),
    ] = None,
    teacher_cache: Annotated[
        Path | None,
        typer.Option(
            help="folder caching the teacher's embeddings across runs "
            "(default: teacher-embeddings beside --out)"
        ),
    ] = None,
    batch_size: Annotated[int, typer.Option(help="pairs per step")] = 50,
    lr: Annotated[
        float | None,
        typer.Option(
            help="peak learning rate (default by loss for fast: 0.001 triplet as P-SP, "
            "0.2 mnrl, 0.5 mse; 2e-05 transformer)"
        ),
    ] = None,
    epochs: Annotated[int, typer.Option(help="passes over the pairs")] = 1,
    seed: Annotated[int, typer.Option(help="seed of initialisation, data order and sampling")] = 0,
    max_steps: Annotated[
        int | None, typer.Option(help="stop after this many steps (0: save the untrained model)")
    ] = None,
    margin: Annotated[
        float | None, typer.Option(help="triplet margin (default: 0.4 cosine, 5 euclidean)")
    ] = None,
    distance: Annotated[str, typer.Option(help="triplet distance: cosine or euclidean")] = "cosine",
    mega_batches: Annotated[
        int | None,
        typer.Option(help="batches per hard-negative mega-batch (default: 60 fast, 1 transformer)"),
    ] = None,
    dim: Annotated[
        int, typer.Option(help="fast encoder embedding size (with --teacher: the teacher's)")
    ] = 1024,
    vocab_size: Annotated[int, typer.Option(help="fast encoder sentencepiece vocabulary")] = 8000,
    device: Annotated[
        str | None, typer.Option(help="cpu, cuda, ... (default: cuda when available)")
    ] = None,
) -> None:
    """Train a sentence encoder on a release's pairs and save it to a model folder."""
    from corpusforge.release.reading import local_release_path

    try:
        pairs = local_release_path(data)
    except FileNotFoundError as exc:
        typer.echo(f"error: --data {exc}", err=True)
        raise typer.Exit(2) from None
    missing = missing_modules(model, teacher)
    if missing:
        needs = ", ".join(missing)
        typer.echo(f"error: corpusforge train needs {needs}: {INSTALL_HINT}", err=True)
        raise typer.Exit(1)
    from corpusforge.train.data import NoPairs, open_pairs
    from corpusforge.train.losses import Distance
    from corpusforge.train.trainer import Loss, TrainConfig
    from corpusforge.train.trainer import train as run_training

    try:
        config = TrainConfig(
            model=model,
            loss=Loss(loss) if loss is not None else None,
            batch_size=batch_size,
            lr=lr,
            epochs=epochs,
            seed=seed,
            max_steps=max_steps,
            margin=margin,
            distance=Distance(distance),
            mega_batches=mega_batches,
            dim=dim,
            vocab_size=vocab_size,
            device=device,
            teacher=teacher,
            teacher_cache=str(teacher_cache) if teacher_cache is not None else None,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc

    try:  # before the progress bar, which leaves a line of its own
        if open_pairs(pairs).count_rows() == 0:
            raise NoPairs(data)
        if out.exists() and any(out.iterdir()):
            raise FileExistsError(f"{out} is not empty: give train a new --out folder")
    except NoPairs:
        failure = f"{data} holds no pairs to train on"
    except (FileNotFoundError, FileExistsError, NotADirectoryError) as exc:
        failure = str(exc)
    else:
        failure = ""
    if failure:
        typer.echo(f"error: {failure}", err=True)
        raise typer.Exit(2)

    columns = (
        TextColumn("training"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.4f}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("train", total=None, loss=float("nan"))

        def on_step(step: int, total: int, value: float) -> None:
            bar.update(task, completed=step, total=total, loss=value)

        try:
            summary = run_training(pairs, out, config, progress=on_step)
        except NoPairs:  # named as the user gave it, not as the local copy of a bucket's
            failure = f"{data} holds no pairs to train on"
        except (FileNotFoundError, FileExistsError, ValueError) as exc:
            failure = str(exc)
        else:
            failure = ""
    if failure:  # one line, once the progress bar is gone
        typer.echo(f"error: {failure}", err=True)
        raise typer.Exit(2)
    if teacher is not None:
        cached = summary.teacher_anchors - summary.teacher_embedded
        console.print(
            f"teacher: {summary.teacher_anchors} distinct anchors, "
            f"{summary.teacher_embedded} embedded now, {cached} from the cache"
        )
    console.print(
        f"{summary.steps} steps on {summary.pairs} pairs in {summary.seconds:.1f} s; "
        f"loss {summary.loss_first} -> {summary.loss_last}; model in {out}"
    )
