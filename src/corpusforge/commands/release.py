"""``corpusforge validate|stats|card DIR``: check, describe and document a built release.

    corpusforge validate release/          # exit 0 only when every check holds
    corpusforge stats release/ --json      # counts, lengths, languages, funnel
    corpusforge card release/              # release/README.md and release/card/*.svg

Each function is registered on the main app as a top-level command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from corpusforge.release.bucketnames import is_bucket_uri
from corpusforge.sources.uris import is_uri

ReleaseDir = Annotated[
    str, typer.Argument(help="release directory (the folder holding manifest.json)")
]
EXIT_INVALID = 1
"""Exit status of ``validate`` when a check fails (2 is a usage error)."""


def _existing(release_dir: str) -> str:
    """The release folder to read: ``release_dir``, or the old release in the instant of a
    two-rename publish (:func:`corpusforge.release.publish.current_release`); for ``s3://``
    and ``gs://``, a local copy of the current version
    (:func:`corpusforge.release.reading.local_copy`)."""
    from corpusforge.release.publish import current_release

    if is_bucket_uri(release_dir):  # the current version, read through a local copy
        from corpusforge.release.publish import ReleaseError
        from corpusforge.release.reading import local_copy

        try:
            return local_copy(release_dir)
        except (FileNotFoundError, ReleaseError) as exc:  # the bucket, the store: one line
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(code=2) from None
    release_dir = current_release(release_dir)
    if not is_uri(release_dir) and not Path(release_dir).is_dir():
        raise typer.BadParameter(f"{release_dir!r} is not a directory", param_hint="RELEASE_DIR")
    return release_dir


def validate(
    release_dir: ReleaseDir,
    json_output: Annotated[
        bool, typer.Option("--json", help="print the report as one JSON document")
    ] = False,
) -> None:
    """Check a release against its manifest and schemas; exit 1 with a report if any fails.

    Checks: files present with their recorded bytes, rows and sha256; no unlisted file in
    pairs/ or benchmarks/; schemas; no empty text; no duplicate pair in a dataset; no
    benchmark tweet in training pairs (by id or text); accounting identities recomputed.
    """
    from corpusforge.inspect.validate import validate_release

    report = validate_release(_existing(release_dir))
    if json_output:
        typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        _print_report(report.to_json())
    if not report.ok:
        raise typer.Exit(code=EXIT_INVALID)


def _print_report(doc: dict[str, Any]) -> None:
    console = Console()
    head = f"{doc['release']}: {doc['files_checked']:,} files, {doc['rows_scanned']:,} rows scanned"
    if doc["ok"]:
        console.print(f"[green]valid[/green]  {head}")
        return
    console.print(f"[red]INVALID[/red]  {head}")
    table = Table("check", "path", "count", "detail")
    for f in doc["failures"]:
        table.add_row(f["check"], f["path"], f"{f['count']:,}", f["detail"])
    console.print(table)
    failed = ", ".join(f"{name} ({n})" for name, n in doc["failed"].items())
    console.print(f"failed checks: {failed}")


def stats(
    release_dir: ReleaseDir,
    json_output: Annotated[
        bool, typer.Option("--json", help="print one JSON document instead of tables")
    ] = False,
) -> None:
    """Pairs per dataset, text lengths (chars, tokens), languages and the funnel."""
    from corpusforge.inspect.stats import release_stats

    try:
        doc = release_stats(_existing(release_dir))
    except FileNotFoundError as exc:
        raise typer.BadParameter(str(exc), param_hint="RELEASE_DIR") from exc
    if json_output:
        typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    _print_stats(doc)


def _dist(d: dict[str, Any]) -> str:
    if not d or d.get("min") is None:
        return "–"
    return f"{d['min']}/{d['p5']}/{d['p50']}/{d['p95']}/{d['max']} ({d['mean']})"


def _print_stats(doc: dict[str, Any]) -> None:
    console = Console()
    table = Table(
        "dataset", "pairs", "side", "chars min/p5/p50/p95/max (mean)", "tokens", "languages"
    )
    for name, ds in doc["datasets"].items():
        top = list(ds["languages"].items())[:4]
        langs = ", ".join(f"{k} {v:,}" for k, v in top)
        for i, side in enumerate(("anchor", "positive")):
            lengths = ds["lengths"].get(side, {})
            table.add_row(
                name if i == 0 else "",
                f"{ds['rows']:,}" if i == 0 else "",
                side,
                _dist(lengths.get("chars", {})),
                _dist(lengths.get("tokens", {})),
                langs if i == 0 else "",
            )
    console.print(table)
    scored = {name: ds["scores"] for name, ds in doc["datasets"].items() if ds.get("scores")}
    if scored:
        scores = Table("dataset", "score", "min/p5/p50/p95/max (mean)", title="filter scores")
        for name, values in scored.items():
            for i, (score, d) in enumerate(values.items()):
                scores.add_row(name if i == 0 else "", score, _dist(d))
        console.print(scores)
    if doc["benchmarks"]:
        bench = Table("benchmark", "queries", "candidates per query", "query chars")
        for name, b in doc["benchmarks"].items():
            query = b["lengths"].get("query", {})
            bench.add_row(
                name, f"{b['rows']:,}", _dist(b["candidates"]), _dist(query.get("chars", {}))
            )
        console.print(bench)
    funnel = Table("stage", "count", "removed on the way", title="funnel", title_justify="left")
    for s in doc["funnel"]["stages"]:
        removed = ", ".join(f"{k} {v:,}" for k, v in s["removed"].items() if v)
        funnel.add_row(s["label"], f"{s['count']:,}", removed)
    console.print(funnel)
    drops = Table("dataset", "candidates", "pairs", "dropped, by reason")
    for name, d in doc["funnel"]["datasets"].items():
        dropped = ", ".join(f"{k} {v:,}" for k, v in d["dropped"].items())
        drops.add_row(name, f"{d['candidates']:,}", f"{d['rows']:,}", dropped)
    console.print(drops)


def card(release_dir: ReleaseDir) -> None:
    """Write the dataset card: DIR/README.md and its plots in DIR/card/."""
    from corpusforge.inspect.card import write_card

    if is_bucket_uri(release_dir):
        _card_in_bucket(release_dir)
        return
    if is_uri(release_dir):
        raise typer.BadParameter("the card is written to local, s3:// and gs:// releases only")
    try:
        path = write_card(_existing(release_dir))
    except FileNotFoundError as exc:
        raise typer.BadParameter(str(exc), param_hint="RELEASE_DIR") from exc
    typer.echo(str(path))


def _card_in_bucket(uri: str) -> None:
    """``card s3://…`` (or ``gs://…``): the card written into a new version of the release,
    committed like a build's (:func:`corpusforge.release.objectstore.new_version_with`); its
    URI printed."""
    from corpusforge.inspect.card import CARD, PLOTS, write_card
    from corpusforge.release.bucketnames import Location
    from corpusforge.release.objectstore import new_version_with
    from corpusforge.release.publish import ReleaseError

    where = Location.parse(uri.rstrip("/"))
    name = where.prefix.rsplit("/", 1)[-1] or where.bucket
    try:
        version = new_version_with(uri, (CARD, PLOTS), lambda folder: write_card(folder, name=name))
    except (FileNotFoundError, ReleaseError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(f"{version}/{CARD}")
