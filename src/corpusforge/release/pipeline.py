"""Pairs, dead letters and count elements of one Beam pipeline -> the published release.

The release step of the builds that run as one pipeline on every runner (bitext and ParaNMT,
:mod:`corpusforge.builds.bitext`, :mod:`corpusforge.builds.paranmt`; a Dataflow Flex
Template included): :class:`~corpusforge.release.beam_step.WriteRelease` writes the shards
into ``_staging/`` and, in a last step of the pipeline, moves them into place, writes an
empty shard where a dataset or the dead letters have no row, sums the counts, checks the
accounting and writes the manifest, then commits the draft
(:func:`corpusforge.release.manifest.publish`). When no input yielded a pair, or the
accounting does not balance, that step leaves a note in the draft instead of a manifest and
commits nothing; :func:`corpusforge.release.driver.finish` reports the note and abandons the
draft, so the current release stays. This module is Beam-free (the local engine publishes
through :func:`publish_release`); the Beam transform is in :mod:`corpusforge.release.beam_step`.

The driver that starts such a pipeline and reports what its last step did is
:mod:`corpusforge.release.driver`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from corpusforge.release.accounting import AccountingError, pair_accounting
from corpusforge.release.deadletter import empty_dead_letters
from corpusforge.release.io import (
    delete,
    delete_tree,
    exists,
    join,
    relative,
    write_json,
)
from corpusforge.release.layout import (
    CARD,
    CARD_PLOTS,
    DEAD_LETTERS,
    HELDOUT,
    MANIFEST_NAME,
    NOTHING_READ,
    PAIRS,
    REJECTED,
    STAGING,
    UNBALANCED,
    heldout_folder,
    pair_folder,
    rejected_folder,
)
from corpusforge.release.manifest import (
    LID_PACKAGES,
    assemble,
    file_entries,
    publish,
    software_versions,
)
from corpusforge.release.publish import ReleaseStore
from corpusforge.release.staging import empty_shard, place_staged
from corpusforge.schemas import DEAD_LETTER, SchemaRef
from corpusforge.schemas import REJECTED as REJECTED_SCHEMA

if TYPE_CHECKING:  # the Beam half is release.beam_step: a local build never imports Beam
    from corpusforge.transforms.bitext import CountKey

log = logging.getLogger(__name__)

REBUILT = (
    MANIFEST_NAME,
    STAGING,
    PAIRS,
    DEAD_LETTERS,
    REJECTED,
    HELDOUT,
    CARD,
    CARD_PLOTS,
    NOTHING_READ,
    UNBALANCED,
)
"""What every build writes anew; anything else in a release is carried into the new one."""


@dataclass(frozen=True)
class ReleaseSpec:
    """What the release step needs to know: where, which kind, and what to record.

    Attributes:
        kind: manifest ``kind`` (``bitext-pairs``, ``paranmt-pairs``).
        out: the folder the build writes (the draft of a local release).
        pair_schema: the schema of the pair files.
        per_lang_pair: pairs go to ``pairs/<dataset>/<l1>-<l2>/`` (else ``pairs/<dataset>/``)
            and the manifest's datasets are broken down by language pair.
        config: the configuration, as recorded in the manifest.
        plan: the read units, as recorded in the manifest.
        runner: the Beam runner's name.
        store: publishes ``out`` once the manifest is written (none: ``out`` is the release).
        keep_rejected: the dropped pairs are written too, under ``rejected/`` as under
            ``pairs/`` (``schemas/rejected.v1``), and accounted for.
        holdout: pairs of each dataset (and language pair) are set aside under
            ``heldout/`` as under ``pairs/`` (the pairs' schema), and accounted for.
    """

    kind: str
    out: str
    pair_schema: SchemaRef
    per_lang_pair: bool
    config: dict[str, Any]
    plan: list[dict[str, Any]]
    runner: str
    store: ReleaseStore | None = None
    keep_rejected: bool = False
    holdout: bool = False

    @property
    def staging(self) -> str:
        return join(self.out, STAGING)

    def pair_folder(self, dataset: str, group: str) -> str:
        """``pairs/<dataset>[/<group>]``, relative to the release directory."""
        return pair_folder(dataset, group if self.per_lang_pair else "")

    def rejected_folder(self, dataset: str, group: str) -> str:
        """``rejected/<dataset>[/<group>]``, relative to the release directory."""
        return rejected_folder(dataset, group if self.per_lang_pair else "")

    def heldout_folder(self, dataset: str, group: str) -> str:
        """``heldout/<dataset>[/<group>]``, relative to the release directory."""
        return heldout_folder(dataset, group if self.per_lang_pair else "")

    @property
    def folders(self) -> tuple[str, ...]:
        """The folders of shards this build writes anew."""
        rejected = (REJECTED,) if self.keep_rejected else ()
        return (PAIRS, DEAD_LETTERS, *rejected, *((HELDOUT,) if self.holdout else ()))

    @property
    def schemas(self) -> tuple[SchemaRef, ...]:
        """The schemas of its files, as the manifest lists them."""
        own = (self.pair_schema, DEAD_LETTER)
        return (*own, REJECTED_SCHEMA) if self.keep_rejected else own


def prepare_release(spec: ReleaseSpec) -> None:
    """Before the pipeline: no leftover staging, and no manifest until this build's is written."""
    delete_tree(spec.staging)
    manifest = join(spec.out, MANIFEST_NAME)
    if exists(manifest):
        delete([manifest])


def publish_release(
    spec: ReleaseSpec,
    staged: list[dict[str, Any]],
    counts: Iterable[tuple[CountKey, int]],
    inputs: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """Move the staged shards into place, fill the gaps, write the manifest and publish.

    Every dataset (and language pair) that had candidates gets at least one shard, and so
    do the dead letters, so a reader always finds the schema. When no input yielded a
    pair, or the accounting does not balance, nothing is published: a note
    (``_nothing_read.json``, ``_unbalanced.json``) takes the manifest's place in the draft,
    for :func:`corpusforge.release.driver.finish` to report, and ``None`` is returned.

    Args:
        spec: the release.
        staged: ShardInfo dicts of the staged shards.
        counts: ``(key, n)`` count elements of the pipeline.
        inputs: :func:`~corpusforge.release.manifest.describe_input` of every input file.

    Returns:
        The manifest published, or ``None``.
    """
    count_doc, datasets = assemble_counts(counts, per_lang_pair=spec.per_lang_pair)
    if not count_doc["pairs_read"]:
        note = {"inputs": sorted(i["name"] for i in inputs), "counts": count_doc}
        write_json(join(spec.out, NOTHING_READ), note)
        delete_tree(spec.staging)
        return None
    published = place_staged(staged, spec.staging, spec.out, spec.folders)
    present = {relative(i["path"], spec.out).rsplit("/", 1)[0] for i in published}
    for dataset, ds in datasets.items():
        groups = ds["lang_pairs"] if spec.per_lang_pair else {"": ds}
        for group in groups:
            folder = spec.pair_folder(dataset, group)
            if folder not in present:
                published.append(empty_shard(spec.out, folder, spec.pair_schema))
            folder = spec.rejected_folder(dataset, group)
            if spec.keep_rejected and folder not in present:
                published.append(empty_shard(spec.out, folder, REJECTED_SCHEMA))
            folder = spec.heldout_folder(dataset, group)
            if spec.holdout and folder not in present:
                published.append(empty_shard(spec.out, folder, spec.pair_schema))
    if DEAD_LETTERS not in present:
        published.append(empty_dead_letters(spec.out))
    delete_tree(spec.staging)
    manifest, accounting = build_manifest(spec, published, count_doc, datasets, inputs)
    try:
        publish(spec.store, spec.out, manifest, accounting)
    except AccountingError as exc:  # the driver reports it (a worker's log says it too)
        log.info("%s", exc)
        write_json(join(spec.out, UNBALANCED), {"error": str(exc)})
        return None
    return manifest


def build_manifest(
    spec: ReleaseSpec,
    published: list[dict[str, Any]],
    counts: dict[str, Any],
    datasets: dict[str, dict[str, Any]],
    inputs: list[dict[str, Any]],
) -> tuple[dict[str, Any], Any]:
    """The release manifest (``schemas/manifest.v1.schema.json``) and its accounting.

    Args:
        spec: the release.
        published: ShardInfo dicts of the published files (absolute paths).
        counts: from :func:`assemble_counts`.
        datasets: from :func:`assemble_counts`; each gets its ``files``.
        inputs: :func:`~corpusforge.release.manifest.describe_input` of every input file.
    """

    def schema_of(path: str) -> SchemaRef:
        rel = relative(path, spec.out)
        if rel.startswith(f"{REJECTED}/"):
            return REJECTED_SCHEMA
        return DEAD_LETTER if rel.startswith(f"{DEAD_LETTERS}/") else spec.pair_schema

    files = file_entries(published, spec.out, schema_of)
    for dataset, ds in datasets.items():
        prefix = pair_folder(dataset) + "/"
        ds["files"] = [f["path"] for f in files if f["path"].startswith(prefix)]
    accounting = pair_accounting(
        counts, datasets, files, rejected=spec.keep_rejected, heldout=spec.holdout
    )
    manifest = assemble(
        kind=spec.kind,
        software=software_versions(LID_PACKAGES),
        schemas=spec.schemas,
        config=spec.config,
        runner=spec.runner,
        inputs=sorted(inputs, key=lambda i: (i["name"], i["sha256"])),
        plan=spec.plan,
        files=files,
        datasets=datasets,
        counts=counts,
        accounting=accounting,
    )
    return manifest, accounting


# ---------------------------------------------------------------------------------------
# Counts


def _sorted(counter: Mapping[str, int]) -> dict[str, int]:
    return {k: counter[k] for k in sorted(counter)}


def _tally() -> dict[str, Any]:
    return {"rows": 0, "candidates": 0, "dropped": Counter()}


def assemble_counts(
    counts: Iterable[tuple[CountKey, int]], *, per_lang_pair: bool
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Sum the pipeline's count elements into the manifest's ``counts`` and ``datasets``.

    Args:
        counts: ``(key, n)`` elements (see :mod:`corpusforge.transforms.bitext`).
        per_lang_pair: break every dataset down by language pair (``lang_pairs``).

    Returns:
        ``counts``: ``lines_read`` (lines or records read: pairs, skips, and the lines the
        dead letters stand for, ``dead_letter_lines``: a refused file pair all its lines,
        a note about a whole input none), ``units_read``,
        ``pairs_read``, ``rows``, ``dead_letter``, ``dead_letter_reasons``, ``skipped`` and
        ``dropped`` by reason; ``datasets``: per dataset ``rows``, ``candidates`` and
        ``dropped`` by reason (and ``lang_pairs`` with the same for each language pair).
    """
    total: Counter[CountKey] = Counter()
    for key, n in counts:
        total[tuple(key)] += n
    dead: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    datasets: dict[str, dict[str, Any]] = {}
    for key, n in total.items():
        kind = key[0]
        if kind == "dead":
            dead[key[1]] += n
        elif kind == "skip":
            skipped[key[1]] += n
        elif kind in ("cand", "rows", "drop", "held"):
            dataset, group = key[1], key[2]
            ds = datasets.setdefault(dataset, {**_tally(), "lang_pairs": {}})
            for tally in (ds, ds["lang_pairs"].setdefault(group, _tally())):
                if kind == "cand":
                    tally["candidates"] += n
                elif kind == "rows":
                    tally["rows"] += n
                elif kind == "held":  # with --holdout only, so other manifests keep their bytes
                    tally["heldout"] = tally.get("heldout", 0) + n
                else:
                    tally["dropped"][key[3]] += n
    dropped: Counter[str] = Counter()
    for ds in datasets.values():
        dropped.update(ds["dropped"])
        for tally in (ds, *ds["lang_pairs"].values()):
            tally["dropped"] = _sorted(tally["dropped"])
        ds["lang_pairs"] = {g: ds["lang_pairs"][g] for g in sorted(ds["lang_pairs"])}
        if not per_lang_pair:
            del ds["lang_pairs"]
    count_doc = {
        "lines_read": total[("read", "records")],
        "dead_letter_lines": total[("read", "dead_letter_lines")],
        "units_read": total[("read", "units")],
        "pairs_read": sum(ds["candidates"] for ds in datasets.values()),
        "rows": sum(ds["rows"] for ds in datasets.values()),
        "dead_letter": sum(dead.values()),
        "dead_letter_reasons": _sorted(dead),
        "skipped": _sorted(skipped),
        "dropped": _sorted(dropped),
    }
    if any("heldout" in ds for ds in datasets.values()):
        count_doc["heldout"] = sum(ds.get("heldout", 0) for ds in datasets.values())
    return count_doc, {d: datasets[d] for d in sorted(datasets)}
