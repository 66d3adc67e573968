"""Shards a build staged in ``_staging/`` -> their places in the release, gaps filled.

A build writes its shards under ``_staging/`` (relative paths as in the release), then
:func:`place_staged` moves them into place and deletes the files of an earlier release
that are not rewritten; :func:`empty_shard` writes a file with no row where a dataset or
the dead letters have none, so a reader always finds the schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from corpusforge.release.io import delete, ensure_dir, exists, files_under, join, relative, rename
from corpusforge.schemas import SchemaRef, arrow_schema
from corpusforge.sinks.shards import shard_name, write_rows


def place_staged(
    staged: Iterable[dict[str, Any]], staging: str, root: str, folders: Sequence[str]
) -> list[dict[str, Any]]:
    """Staged shards -> their places under ``root``; files of an earlier release under
    ``folders`` that are not rewritten go.

    Safe to run again after a failure half-way (a retried pipeline step): a shard already
    moved is found in place.

    Args:
        staged: ShardInfo dicts (``path`` under ``staging``, ``rows``, ``bytes``, ``sha256``).
        staging: the staging folder.
        root: the release (or its draft).
        folders: the release's folders the staged shards replace (``pairs``, …).

    Returns:
        The ShardInfo dicts with their published paths, sorted by staged path.

    Raises:
        FileNotFoundError: a staged shard is neither in staging nor in place.
    """
    staged = list(staged)
    targets = {info["path"]: join(root, relative(info["path"], staging)) for info in staged}
    keep = set(targets.values())
    for folder in folders:
        stale = [path for path in files_under(join(root, folder)) if path not in keep]
        if stale:
            delete(stale)
    published = []
    for info in sorted(staged, key=lambda i: i["path"]):
        source, target = info["path"], targets[info["path"]]
        if exists(source):
            ensure_dir(target.rsplit("/", 1)[0])
            if exists(target):
                delete([target])
            rename(source, target)
        elif not exists(target):
            raise FileNotFoundError(f"staged shard {source} is gone and {target} is missing")
        published.append({**info, "path": target})
    return published


def empty_shard(root: str, folder: str, schema: SchemaRef) -> dict[str, Any]:
    """Write ``folder/part-00000-of-00001.parquet`` with no row; its ShardInfo.

    Args:
        root: the release (or its draft).
        folder: relative to ``root`` (``dead_letter``, ``pairs/<dataset>``).
        schema: the file's schema.
    """
    target = join(root, folder)
    ensure_dir(target)
    return write_rows(join(target, shard_name(0, 1)), [], arrow_schema(schema))
