"""A release's counts, datasets and files -> its accounting identities, and whether they close.

Nothing is dropped silently: every record read is a row, a drop with its reason, or a dead
letter, and the rows counted are the rows in the files. The identities that say so are
computed here, from the numbers a manifest records (``counts``, ``datasets``,
``benchmarks``, ``files``), by the build before it publishes (an unbalanced build raises
:class:`AccountingError` and the old release stays) and by ``corpusforge validate`` on a
published release (:func:`recompute_identities`), with the same functions.

Two lists come out of each computation: ``recorded``, the identities the manifest's
``accounting`` block holds (their names, order and sides are part of every release's bytes),
and ``checked``, further identities the build and ``validate`` check without recording
them (``records_in == …``, the dead-letter total, Twitter's ``pairs/all``, the files each
dataset names). A number a manifest lacks (an older or edited release) is noted in
``missing`` rather than raised.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from corpusforge.pairing.conversations import CHILDREN_PER_PAIR
from corpusforge.release.layout import (
    DEAD_LETTERS,
    HELDOUT,
    PAIRS,
    REJECTED,
    benchmark_file,
    heldout_folder,
    pair_folder,
    rejected_folder,
    rows_under,
)

TWITTER_CHILDREN = CHILDREN_PER_PAIR
"""Children of a conversation used by one pair of each Twitter dataset (the co-datasets pair
two children), in the order the manifest's identities name the datasets."""

TWITTER_KIND = "twitter-pairs"


class AccountingError(RuntimeError):
    """A build's accounting does not balance: nothing was published."""


def identity(name: str, lhs: int, rhs: int) -> dict[str, Any]:
    """One identity as the manifest records it: both sides and whether they are equal."""
    return {"name": name, "lhs": lhs, "rhs": rhs, "holds": lhs == rhs}


@dataclass
class Accounting:
    """The identities of one release.

    Attributes:
        recorded: identities the manifest's ``accounting.identities`` holds, in its order.
        checked: identities checked but not recorded.
        missing: ``(name, why)`` of identities the numbers given lack a side of.
    """

    recorded: list[dict[str, Any]] = field(default_factory=list)
    checked: list[dict[str, Any]] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)

    @property
    def identities(self) -> list[dict[str, Any]]:
        """Every identity computed, recorded ones first."""
        return [*self.recorded, *self.checked]

    @property
    def balanced(self) -> bool:
        """Every identity could be computed and holds."""
        return not self.missing and all(i["holds"] for i in self.identities)

    def failures(self) -> list[str]:
        """One line per identity that fails or cannot be computed."""
        lines = [f"{name}: {why}" for name, why in self.missing]
        lines += [
            f"{i['name']}: {i['lhs']:,} != {i['rhs']:,}" for i in self.identities if not i["holds"]
        ]
        return lines

    def to_manifest(self) -> dict[str, Any]:
        """The manifest's ``accounting`` block."""
        return {"balanced": self.balanced, "identities": self.recorded}

    @contextlib.contextmanager
    def _identity(
        self, name: str, *, recorded: bool = True
    ) -> Iterator[Callable[[int, int], None]]:
        """``with acc._identity(name) as equal: equal(lhs, rhs)``; a missing key is noted."""
        into = self.recorded if recorded else self.checked

        def equal(lhs: int, rhs: int) -> None:
            into.append(identity(name, lhs, rhs))

        try:
            yield equal
        except (KeyError, TypeError, AttributeError) as exc:
            self.missing.append((name, f"cannot be computed: the manifest lacks {exc}"))


def require_balanced(accounting: Accounting, release: str) -> None:
    """Raise :class:`AccountingError`, in one line, unless ``accounting`` balances.

    Args:
        accounting: the build's identities.
        release: the release (``--out``), for the message.
    """
    if accounting.balanced:
        return
    failures = accounting.failures()
    shown = "; ".join(failures[:3]) + (f"; and {len(failures) - 3} more" if failures[3:] else "")
    raise AccountingError(
        f"{release}: the accounting does not balance ({shown}); nothing published, "
        "the current release is unchanged"
    )


# ---------------------------------------------------------------------------------------
# Twitter


def twitter_accounting(
    counts: Mapping[str, Any],
    datasets: Mapping[str, Mapping[str, Any]],
    files: Sequence[Mapping[str, Any]],
    benchmarks: Mapping[str, Mapping[str, Any]] | None = None,
) -> Accounting:
    """The identities of a Twitter release (kind ``twitter-pairs``).

    Args:
        counts: the manifest's ``counts``.
        datasets: the manifest's ``datasets`` (``qt``, ``rp``, ``coqt``, ``corp``, ``all``).
        files: the manifest's ``files`` (``path`` relative to the release, ``rows``).
        benchmarks: the manifest's ``benchmarks`` (empty when none were asked for).
    """
    acc = Accounting()
    c, ds = counts, datasets
    with acc._identity(
        "lines_read == tweets + delete_notices + other_messages + dead_letter_lines"
    ) as equal:
        equal(
            c["lines_read"],
            c["tweets"] + c["delete_notices"] + c["other_messages"] + c["dead_letter_lines"],
        )
    with acc._identity("members_listed == members_read") as equal:
        equal(c["members_listed"], c["members_read"])
    with acc._identity(f"dead_letter == rows in {DEAD_LETTERS}/") as equal:
        equal(c["dead_letter"], rows_under(files, f"{DEAD_LETTERS}/"))
    with acc._identity("tweets_distinct == tweets_eligible + tweet-level drops") as equal:
        tweet_drops = sum(v for k, v in c["dropped"].items() if "." not in k)
        equal(c["tweets_distinct"], c["tweets_eligible"] + tweet_drops)
    for d, k in TWITTER_CHILDREN.items():
        with acc._identity(f"{d}: candidates == {k} * rows + dropped") as equal:
            equal(ds[d]["candidates"], k * ds[d]["rows"] + sum(ds[d]["dropped"].values()))
    for d, tally in ds.items():
        with acc._identity(f"{d}: rows == rows in {PAIRS}/{d}/") as equal:
            equal(tally["rows"], rows_under(files, f"{PAIRS}/{d}/"))
    for b, bench in (benchmarks or {}).items():
        path = bench.get("file", benchmark_file(b))
        with acc._identity(f"{b}: rows == rows in {path}") as equal:
            equal(bench["rows"], rows_under(files, path))

    # checked, not recorded
    with acc._identity(
        "dead_letter == dead_letter_lines + dead_letter_members + dead_letter_archives"
        " + embedded_skipped",
        recorded=False,
    ) as equal:
        equal(
            c["dead_letter"],
            c["dead_letter_lines"]
            + c["dead_letter_members"]
            + c["dead_letter_archives"]
            + c.get("embedded_skipped", 0),
        )
    if "records_in" in c:  # counted since the local pair engine
        with acc._identity(
            "records_in == records_lang_not_selected + records_outside_conversations + "
            "records_in_conversations",
            recorded=False,
        ) as equal:
            equal(
                c["records_in"],
                c["records_lang_not_selected"]
                + c["records_outside_conversations"]
                + c["records_in_conversations"],
            )
    for d in TWITTER_CHILDREN:
        with acc._identity(f"{d}: dropped == counts.dropped {d}.*", recorded=False) as equal:
            in_counts = sum(v for r, v in c["dropped"].items() if r.startswith(f"{d}."))
            equal(sum(ds[d]["dropped"].values()), in_counts)
    with acc._identity("all: rows == qt + rp + coqt + corp rows", recorded=False) as equal:
        equal(ds["all"]["rows"], sum(ds[d]["rows"] for d in TWITTER_CHILDREN))
    return acc


# ---------------------------------------------------------------------------------------
# Bitext and ParaNMT


def pair_accounting(
    counts: Mapping[str, Any],
    datasets: Mapping[str, Mapping[str, Any]],
    files: Sequence[Mapping[str, Any]],
    *,
    rejected: bool = False,
    heldout: bool = False,
) -> Accounting:
    """The identities of a bitext or ParaNMT release (kinds ``bitext-pairs``,
    ``paranmt-pairs``); a dataset with ``lang_pairs`` is also checked per language pair.

    Args:
        counts: the manifest's ``counts``.
        datasets: the manifest's ``datasets``.
        files: the manifest's ``files`` (``path`` relative to the release, ``rows``).
        rejected: the release keeps its dropped pairs (``--keep-rejected``): every pair
            dropped is a row under ``rejected/``, in its dataset's (and group's) folder.
        heldout: the release sets pairs aside (``--holdout``): a pair read is a row, a
            held-out pair (``heldout`` rows under ``heldout/``) or a drop.
    """
    acc = Accounting()
    c = counts
    if "pairs_read" in c and "dead_letter_lines" not in c:
        # a release written before dead_letter_lines was counted
        with acc._identity("lines_read == pairs_read + dead_letter") as equal:
            equal(c["lines_read"], c["pairs_read"] + c["dead_letter"])
    elif "pairs_read" in c:
        with acc._identity("lines_read == pairs_read + dead_letter_lines + skipped") as equal:
            skipped = sum(c.get("skipped", {}).values())
            equal(c["lines_read"], c["pairs_read"] + c["dead_letter_lines"] + skipped)
    if "pairs_read" in c and heldout:
        with acc._identity("pairs_read == rows + heldout + dropped") as equal:
            equal(c["pairs_read"], c["rows"] + c["heldout"] + sum(c["dropped"].values()))
        with acc._identity(f"heldout == rows in {HELDOUT}/") as equal:
            equal(c["heldout"], rows_under(files, f"{HELDOUT}/"))
    elif "pairs_read" in c:
        with acc._identity("pairs_read == rows + dropped") as equal:
            equal(c["pairs_read"], c["rows"] + sum(c["dropped"].values()))
    if "pairs_read" in c:
        with acc._identity(f"rows == rows in {PAIRS}/") as equal:
            equal(c["rows"], rows_under(files, f"{PAIRS}/"))
        with acc._identity(f"dead_letter == rows in {DEAD_LETTERS}/") as equal:
            equal(c["dead_letter"], rows_under(files, f"{DEAD_LETTERS}/"))
        if rejected:
            with acc._identity(f"dropped == rows in {REJECTED}/") as equal:
                equal(sum(c["dropped"].values()), rows_under(files, f"{REJECTED}/"))
    for dataset, ds in datasets.items():
        parts: list[tuple[str, str, Mapping[str, Any]]] = [(dataset, "", ds)]
        parts += [(f"{dataset} {g}", g, t) for g, t in ds.get("lang_pairs", {}).items()]
        for label, group, tally in parts:
            folder = pair_folder(dataset, group)
            if "candidates" in tally and heldout:
                with acc._identity(f"{label}: candidates == rows + heldout + dropped") as equal:
                    held = tally.get("heldout", 0)
                    equal(
                        tally["candidates"], tally["rows"] + held + sum(tally["dropped"].values())
                    )
                aside = heldout_folder(dataset, group)
                with acc._identity(f"{label}: heldout == rows in {aside}/") as equal:
                    equal(tally.get("heldout", 0), rows_under(files, aside + "/"))
            elif "candidates" in tally:
                with acc._identity(f"{label}: candidates == rows + dropped") as equal:
                    equal(tally["candidates"], tally["rows"] + sum(tally["dropped"].values()))
            with acc._identity(f"{label}: rows == rows in {folder}/") as equal:
                equal(tally["rows"], rows_under(files, folder + "/"))
            if rejected:
                kept_aside = rejected_folder(dataset, group)
                with acc._identity(f"{label}: dropped == rows in {kept_aside}/") as equal:
                    equal(sum(tally["dropped"].values()), rows_under(files, kept_aside + "/"))
    rows_of = {f["path"]: int(f["rows"]) for f in files}
    for dataset, ds in datasets.items():  # checked, not recorded
        if "files" in ds:
            with acc._identity(f"{dataset}: rows == rows in its files", recorded=False) as equal:
                equal(ds["rows"], sum(rows_of.get(p, 0) for p in ds["files"]))
    return acc


# ---------------------------------------------------------------------------------------
# A published release


def accounting_of(manifest: Mapping[str, Any]) -> Accounting:
    """The identities of a release, recomputed from its manifest.

    The stored ``accounting`` block is not read: every side comes from ``counts``,
    ``datasets``, ``benchmarks`` and the rows the manifest records per file.

    Args:
        manifest: a manifest valid against ``schemas/manifest.v1.schema.json``.
    """
    acc = Accounting()
    try:
        counts, datasets, files = manifest["counts"], manifest["datasets"], manifest["files"]
    except KeyError as exc:
        acc.missing.append(("accounting", f"cannot be computed: the manifest lacks {exc}"))
        return acc
    if manifest.get("kind") == TWITTER_KIND:
        return twitter_accounting(counts, datasets, files, manifest.get("benchmarks"))
    config = manifest.get("config", {})
    keep_rejected = bool(config.get("keep_rejected"))
    heldout = config.get("holdout") is not None
    return pair_accounting(counts, datasets, files, rejected=keep_rejected, heldout=heldout)


def recompute_identities(
    manifest: Mapping[str, Any],
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """``(identities, missing)`` of a published release (:func:`accounting_of`).

    Args:
        manifest: a manifest valid against ``schemas/manifest.v1.schema.json``.

    Returns:
        Each identity as ``{name, lhs, rhs, holds}``, named as the build names them so the
        two can be compared, and the ``(name, why)`` of those the manifest lacks numbers for.
    """
    acc = accounting_of(manifest)
    return acc.identities, acc.missing
