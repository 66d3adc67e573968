"""``corpusforge eval``: score an encoder on the ranking benchmarks or on an STS file.

    corpusforge eval ranking --benchmarks RELEASE/benchmarks --model lexical --json scores.json
    corpusforge eval sts --data ../shared/realdata/stsbenchmark/sts-dev.csv --model lexical
    corpusforge eval bitext --heldout RELEASE/heldout --model models/student --teacher TEACHER

``--model lexical`` is the TF-IDF baseline; any other value is handed to the trainer's
model loader (see :func:`corpusforge.eval.load_encoder`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from corpusforge.eval import Encoder

app = typer.Typer(
    help="Score a sentence encoder on the ranking benchmarks (nDCG, MAP, MRR@10), STS or bitext.",
    no_args_is_help=True,
)

ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        help="'lexical' for the TF-IDF baseline, or a trained model for the trainer's loader.",
    ),
]
JsonOption = Annotated[
    Path | None,
    typer.Option("--json", dir_okay=False, help="Also write the full report as JSON here."),
]


@app.command()
def ranking(
    benchmarks: Annotated[
        str,
        typer.Option(
            "--benchmarks",
            help="Folder with dq/dr/cq/cr.parquet (RELEASE/benchmarks); on s3:// the "
            "current version of the release, downloaded once.",
        ),
    ],
    model: ModelOption,
    json_out: JsonOption = None,
) -> None:
    """Rank each query's candidates by cosine similarity; report nDCG, MAP and MRR@10.

    Exits with status 1 when no benchmark in the folder could be scored.
    """
    from corpusforge.eval import BENCHMARKS, evaluate_ranking
    from corpusforge.release.reading import local_release_path

    try:
        folder = local_release_path(benchmarks)
    except FileNotFoundError as exc:
        typer.echo(f"error: --benchmarks {exc}", err=True)
        raise typer.Exit(2) from None
    encoder = _load(model)
    report = evaluate_ranking(folder, encoder)
    table = Table(
        title=f"ranking: {model} on {benchmarks}",
        caption="tied: queries where a positive ties a negative (ranked below it)",
    )
    for column in ("benchmark", "status", "queries", "nDCG", "MAP", "MRR@10", "tied"):
        table.add_column(column, justify="left" if column in ("benchmark", "status") else "right")
    for name in BENCHMARKS:
        r = report["benchmarks"][name]
        values = (_fmt(r["ndcg"]), _fmt(r["map"]), _fmt(r["mrr@10"]))
        table.add_row(name, r["status"], str(r["queries"]), *values, str(r["tied_queries"]))
    average = report["average"]
    table.add_row(
        "average",
        f"{len(average['benchmarks'])} scored",
        "",
        _fmt(average["ndcg"]),
        _fmt(average["map"]),
        _fmt(average["mrr@10"]),
        "",
    )
    console = Console()
    console.print(table)
    for name, r in report["benchmarks"].items():
        if r["status"] == "invalid":
            console.print(f"[red]{name}[/red]: {r['error']}")
    if json_out is not None:
        _write_json(json_out, {"model": model, "benchmark_dir": str(benchmarks), **report})
    if not average["benchmarks"]:
        console.print(f"[red]no benchmark could be scored in {benchmarks}[/red]")
        raise typer.Exit(1)


@app.command()
def sts(
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            exists=True,
            dir_okay=False,
            help="STS file: the STS benchmark layout or 'score<TAB>s1<TAB>s2' lines.",
        ),
    ],
    model: ModelOption,
    format: Annotated[
        str | None,
        typer.Option("--format", help="'stsb' or 'sts'; detected from the first line if unset."),
    ] = None,
    json_out: JsonOption = None,
) -> None:
    """Correlate cosine similarity with the gold scores: Pearson and Spearman."""
    from corpusforge.eval import evaluate_sts

    encoder = _load(model)
    try:
        report = evaluate_sts(data, encoder, format=format)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    table = Table(title=f"sts: {model} on {data.name}")
    for column in ("pairs", "Pearson", "Spearman"):
        table.add_column(column, justify="right")
    table.add_row(str(report["pairs"]), _fmt(report["pearson"]), _fmt(report["spearman"]))
    Console().print(table)
    if json_out is not None:
        _write_json(json_out, {"model": model, "data": str(data), **report})


@app.command()
def bitext(
    model: ModelOption,
    english: Annotated[
        Path | None,
        typer.Option("--en", exists=True, dir_okay=False, help="English side, one per line."),
    ] = None,
    other: Annotated[
        Path | None,
        typer.Option("--x", exists=True, dir_okay=False, help="Other side, line-aligned."),
    ] = None,
    heldout: Annotated[
        Path | None,
        typer.Option(
            "--heldout",
            exists=True,
            file_okay=False,
            help="A release's held-out pairs (RELEASE/heldout, from --holdout), or one dataset "
            "or language pair of it: anchors are the English side, positives the other; "
            "scored per language pair.",
        ),
    ] = None,
    tsv: Annotated[
        Path | None,
        typer.Option(
            "--tsv",
            exists=True,
            dir_okay=False,
            help="Held-out pairs as 'lang<TAB>english<TAB>other' (or 'english<TAB>other') "
            "lines, scored per language.",
        ),
    ] = None,
    teacher: Annotated[
        str | None,
        typer.Option(
            "--teacher",
            help="A distillation teacher: also report teacher fidelity, the mean cosine and "
            "MSE of the model's and the teacher's embeddings of the held-out English side.",
        ),
    ] = None,
    json_out: JsonOption = None,
) -> None:
    """Bitext matching accuracy en->x and x->en (nearest neighbour by cosine), as CT-XLMR-SE.

    Give one source of pairs: --en and --x, --heldout, or --tsv.
    """
    from corpusforge.eval.lexical import CorpusFitted
    from corpusforge.train.bitext_eval import (
        BitextSets,
        bitext_report,
        heldout_sets,
        read_aligned_lines,
        read_tsv_sets,
        teacher_fidelity,
    )

    sources = [english is not None and other is not None, heldout is not None, tsv is not None]
    try:
        if sum(sources) != 1 or (english is None) != (other is None):
            raise ValueError("give --en and --x, or --heldout, or --tsv")
        sets: BitextSets
        if heldout is not None:
            sets = heldout_sets(heldout)
            source = str(heldout)
        elif tsv is not None:
            sets = read_tsv_sets(tsv)
            source = tsv.name
        else:
            assert english is not None and other is not None
            sets = {"x": read_aligned_lines(english, other)}
            source = f"{english.name} / {other.name}"
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    all_english = [text for en_texts, _ in sets.values() for text in en_texts]
    encoder = _load(model)
    if isinstance(encoder, CorpusFitted) and not encoder.fitted:
        encoder = encoder.fit(
            [*all_english, *(text for _, x_texts in sets.values() for text in x_texts)]
        )
    report: dict[str, Any] = bitext_report(encoder, sets)
    table = Table(title=f"bitext: {model} on {source}")
    for column in ("set", "pairs", "en->x", "x->en", "mean"):
        table.add_column(column, justify="left" if column == "set" else "right")
    for name, r in report["sets"].items():
        table.add_row(
            name, str(r["pairs"]), _fmt(r["en_to_x"]), _fmt(r["x_to_en"]), _fmt(r["mean"])
        )
    if len(sets) > 1:
        table.add_row("mean", "", "", "", _fmt(report["mean"]))
    console = Console()
    console.print(table)
    if teacher is not None:
        try:
            fidelity = teacher_fidelity(encoder, _load(teacher), all_english)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        report["teacher_fidelity"] = {"teacher": teacher, **fidelity}
        console.print(
            f"teacher fidelity on {fidelity['sentences']} English sentences: "
            f"cosine {fidelity['cosine']:.4f}, MSE {fidelity['mse']:.6f}"
        )
    if json_out is not None:
        (only,) = report["sets"].values() if len(sets) == 1 else ({},)  # one set: also flat
        _write_json(json_out, {"model": model, "data": source, **only, **report})


def _load(spec: str) -> Encoder:
    from corpusforge.eval import EncoderLoadError, load_encoder

    try:
        return load_encoder(spec)
    except EncoderLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _write_json(path: Path, document: dict[str, Any]) -> None:
    """Write ``document`` as indented JSON; NaN becomes null."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
