"""``corpusforge versions URI``: list the versions of a release on object storage, and prune.

    corpusforge versions s3://bucket/releases/en             # every version, the current marked
    corpusforge versions s3://bucket/releases/en --keep 3    # delete all but the 3 newest
    corpusforge versions s3://bucket/releases/en --local     # the current version, in a folder
    corpusforge versions s3://bucket/releases/en --current   # its pairs, for polars, DuckDB…

A release on ``s3://`` or ``gs://`` keeps every version it published under ``versions/<id>/``
(:mod:`corpusforge.release.objectstore`); ``--keep N`` deletes the versions older than the
current one except the ``N - 1`` committed before it, and the leftovers of killed builds.
A version never committed whose newest object the server wrote less than ``--grace-hours``
ago (default 24) is left alone: a build may be uploading it, whatever its machine's clock.

``--current`` prints where the current version's training pairs are, as a glob that polars
(``scan_parquet``), DuckDB (``read_parquet``) and ``datasets`` (``data_files``) read straight
from the bucket, e.g. ``s3://bucket/releases/en/versions/<version>/pairs/all/*.parquet``
(``--json``: the version's folder and each dataset's glob too); docs/builds.md says how each
reader is set up. Only the pointer and the manifest are read.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer


def versions(
    release: Annotated[
        str, typer.Argument(help="the release: s3://BUCKET/PATH or gs://BUCKET/PATH")
    ],
    keep: Annotated[
        int | None,
        typer.Option(
            help="keep the current version and the N - 1 committed before it; delete the rest "
            "(but what --grace-hours spares)"
        ),
    ] = None,
    grace_hours: Annotated[
        float,
        typer.Option(
            help="with --keep: leave a version never committed whose newest object is younger "
            "than this many hours on the server's clock (a build may be uploading it)"
        ),
    ] = 24.0,
    json_output: Annotated[bool, typer.Option("--json", help="print one JSON document")] = False,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="print only the local folder holding the current version (downloaded once), "
            "for commands that read a folder (train --data, eval --benchmarks)",
        ),
    ] = False,
    current: Annotated[
        bool,
        typer.Option(
            "--current",
            help="print only the current version's training pairs as a glob on the bucket "
            "(--json: each dataset's too), for readers without corpusforge",
        ),
    ] = False,
) -> None:
    """List a bucket release's versions (``*`` marks the current one); ``--keep N`` prunes."""
    from corpusforge.release import objectstore, reading
    from corpusforge.release.bucketnames import is_bucket_uri
    from corpusforge.release.locate import current_pairs
    from corpusforge.release.publish import ReleaseError

    if not is_bucket_uri(release):
        typer.echo(
            f"error: {release}: versions are kept for s3:// and gs:// releases only", err=True
        )
        raise typer.Exit(code=2)
    if current and (local or keep is not None):
        typer.echo("error: --current goes with neither --local nor --keep", err=True)
        raise typer.Exit(code=2)
    try:
        if current:
            located = current_pairs(release)
            typer.echo(json.dumps(located, indent=2) if json_output else located["pairs"])
            return
        if local:
            typer.echo(reading.local_copy(release))
            return
        deleted = (
            objectstore.prune(release, keep, grace_hours=grace_hours) if keep is not None else []
        )
        listed = reading.versions(release)
    except (ValueError, ReleaseError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if json_output:
        typer.echo(json.dumps({"versions": listed, "deleted": deleted}, indent=2))
        return
    for v in listed:
        mark = "*" if v["current"] else " " if v["committed"] else "?"
        typer.echo(f"{mark} {v['version']}")
    for name in deleted:
        typer.echo(f"deleted {name}")
