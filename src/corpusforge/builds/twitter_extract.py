"""Twitter archives -> per-archive extracts: the first stage of a Twitter build.

    corpusforge twitter build twitter-stream-2021-01-01.zip --out release/

Each archive becomes ``tweets/<archive>-<key>/{tweets,deletes}/part-*.parquet``
(``schemas/tweet.v1``, ``schemas/delete.v1``), with ``_files.json``, ``_counts.json`` and a
``_SUCCESS`` marker, and ``dead_letter/<archive>-<key>/part-*.parquet`` for what could not be
read. ``<key>`` hashes the archive's sha256 and the extract settings, so a rebuild skips the
archives already extracted with the same settings, once it has checked each reused extract
against the record made when it was written (:func:`extract_problem`): the current release's
manifest, else ``_files.json`` sealed by the sha256 in ``_SUCCESS``; a planted or changed file
gets the archive extracted again, never read. The stage runs in this process (the
local engine, :mod:`corpusforge.local.extract`, one archive at a time on ``--workers``
processes) or as Beam pipelines
(:class:`~corpusforge.transforms.twitter.ExtractedTweets`); both write the same files. The
driver is :mod:`corpusforge.builds.twitter`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from corpusforge.beamflags import choose_engine
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig
from corpusforge.local import pairs
from corpusforge.local.extract import extract_archive, floor_bytes, partition_bytes, read_workers
from corpusforge.local.machine import check_floor, default_workers, memory_budget
from corpusforge.release.deadletter import extract_dead_letter_key
from corpusforge.release.io import (
    COUNTS,
    FILES,
    delete_tree,
    exists,
    file_digest,
    files_under,
    join,
    read_json,
    relative,
    write_json,
)
from corpusforge.release.layout import DEAD_LETTERS, TWEETS, folder_name
from corpusforge.schemas import DEAD_LETTER, DELETE, TWEET
from corpusforge.sources.twitter.archive import archive_name

log = logging.getLogger(__name__)

EXTRACT_VERSION = 2
"""Bump when extraction output changes for the same input: old extracts are then rebuilt."""

_SUCCESS = "_SUCCESS"
_MARKERS = (_SUCCESS, FILES, COUNTS)
"""The files of a finished extract beside its shards; ``_SUCCESS`` is written last."""


@dataclass(frozen=True)
class InputArchive:
    """One input archive as the manifest records it."""

    uri: str
    name: str
    bytes: int
    sha256: str
    extract: str

    def to_json(self) -> dict[str, Any]:
        """As the manifest records it: by name, size and hash, never by path."""
        return {
            "name": self.name,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "extract": f"{TWEETS}/{self.extract}",
        }


def describe_input(
    uri: str,
    config: TwitterConfig,
    digest: Callable[[str], tuple[int, str]] = file_digest,
) -> InputArchive:
    """Size, sha256 and extract folder name of one archive (reads it once, streaming, or asks
    ``digest``: one that hashed it ahead, :class:`~corpusforge.release.io.DigestsAhead`)."""
    size, sha = digest(uri)
    settings = {
        "archive_sha256": sha,
        "extract_version": EXTRACT_VERSION,
        "schemas": [str(TWEET), str(DELETE), str(DEAD_LETTER)],
        **config.extract_settings(),
    }
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]
    name = archive_name(uri)
    return InputArchive(uri, name, size, sha, f"{folder_name(name, 'archive')}-{key}")


def check_budget(config: TwitterConfig) -> None:
    """Refuse a ``--memory-limit`` below the least a Twitter build keeps: the extract's floor
    or the pair stage's (this process and its smallest partition, built here), whichever is
    more. The pair stage's benchmark choice is left out: it grows with the input up to
    ``--benchmark-queries`` and sizes the partitions once known.

    Raises:
        MemoryBudgetError: the limit is below that floor.
    """
    least_pairs = pairs.MAIN_BYTES + pairs.rows_per_partition(0) * pairs.BYTES_PER_PARTITION_RECORD
    check_floor(config.memory_limit, max(floor_bytes(), least_pairs), "a Twitter build")


def run_extract(todo: list[InputArchive], config: TwitterConfig, runner: Runner) -> None:
    """Stage 1: extract ``todo`` into their folders under ``tweets/``: one archive at a time
    in this process (the local engine), or one Beam pipeline for them all.

    Each archive's folder gets ``tweets/``, ``deletes/`` shards, ``_files.json`` and
    ``_counts.json``; ``_SUCCESS`` is written last, only once the pipeline has finished, so
    a folder without it is a killed run's leftover and is rebuilt; it seals the two lists
    (:func:`seal_extract`).
    """
    tweet_dirs = {a.uri: join(config.out, TWEETS, a.extract) for a in todo}
    dead_dirs = {
        join(config.out, TWEETS, a.extract): join(config.out, DEAD_LETTERS, a.extract) for a in todo
    }
    for a in todo:  # leftovers of a killed run are never mixed with a fresh extract
        delete_tree(tweet_dirs[a.uri])
        delete_tree(dead_dirs[tweet_dirs[a.uri]])
    if extract_engine(config, runner) == "local":
        budget = memory_budget(config.memory_limit)
        workers = read_workers(budget, config.workers or default_workers())
        for a in todo:
            folder = tweet_dirs[a.uri]
            extract_archive(
                a.uri,
                folder,
                dead_dirs[folder],
                config.limits,
                config.rows_per_shard,
                tweet_key=_tweet_key,
                dead_key=extract_dead_letter_key,
                workers=workers,
                archive_bytes_per_partition=partition_bytes(budget),
                release_root=config.out,
            )
            seal_extract(folder, a)
        return
    from corpusforge.builds.twitter_beam import extract_on_beam

    extract_on_beam(tweet_dirs, dead_dirs, config, runner, _tweet_key)
    for a in todo:
        folder = tweet_dirs[a.uri]
        if not exists(join(folder, FILES)):
            write_json(join(folder, FILES), [])
        seal_extract(folder, a)


def extract_batches(todo: list[InputArchive], runner: Runner) -> list[list[InputArchive]]:
    """One extract pipeline per archive on a runner that holds its data in this machine's
    memory (:attr:`Runner.one_machine`), one for all elsewhere.

    The in-process runner holds a grouping's data in memory, so extracting one daily archive
    at a time bounds memory by a day, not by the whole input; a distributed runner spreads
    the grouping over workers and is best given everything at once.
    """
    if not todo:
        return []
    if runner.one_machine:  # Beam's direct runners, with any --direct_running_mode
        return [[archive] for archive in todo]
    return [todo]


def _tweet_key(row: Mapping[str, Any]) -> int:
    return int(row["id"])


def extract_is_complete(folder: str) -> bool:
    """Whether an extract folder was finished (a killed run's leftover is not)."""
    return all(exists(join(folder, n)) for n in _MARKERS)


def seal_extract(folder: str, archive: InputArchive) -> None:
    """Write an extract's ``_SUCCESS``, last: the archive it was read from (name, size,
    sha256, extract folder) and the sha256 of its ``_files.json`` and ``_counts.json``, the
    record a later build checks the extract against before reusing it
    (:func:`extract_problem`).

    Args:
        folder: the extract folder, ``tweets/<extract>``, holding its shards and lists.
        archive: the archive it was read from.
    """
    seal = {
        **archive.to_json(),
        "files_sha256": _sha256_if_there(join(folder, FILES)),
        "counts_sha256": _sha256_if_there(join(folder, COUNTS)),
    }
    write_json(join(folder, _SUCCESS), seal)


def _sha256_if_there(path: str) -> str | None:
    """The sha256 of a file, ``None`` where a pipeline that did not run left none (such
    an extract is never complete)."""
    return file_digest(path)[1] if exists(path) else None


def reusable_extract(
    root: str, archive: InputArchive, published: Mapping[str, Any] | None = None
) -> bool:
    """Whether the finished extract of ``archive`` under ``root`` can be reused as it is.

    An unfinished extract (a killed run's leftover) is not, silently; a finished one that
    fails :func:`extract_problem` is not either, with one warning naming the extract and
    what is wrong. Either is extracted again, never read.

    Args:
        root: the release (or its draft) holding ``tweets/<extract>``.
        archive: the input archive.
        published: the manifest of the release the extract was carried from (the current
            release), or ``None``.
    """
    if not extract_is_complete(join(root, TWEETS, archive.extract)):
        return False
    try:
        recorded = recorded_files(published, archive)
    except (KeyError, TypeError, AttributeError):  # a manifest no build wrote vouches for nothing
        recorded = None
    problem = extract_problem(root, archive, recorded)
    if problem is None:
        return True
    log.warning("%s/%s: %s; extracting the archive again", TWEETS, archive.extract, problem)
    return False


def recorded_files(
    manifest: Mapping[str, Any] | None, archive: InputArchive
) -> dict[str, dict[str, Any]] | None:
    """The files of ``archive``'s extract as ``manifest`` records them, by relative path;
    ``None`` where the manifest did not publish that extract of that archive.

    Args:
        manifest: a release's manifest, or ``None``.
        archive: the input archive.
    """
    if not manifest:
        return None
    extract = f"{TWEETS}/{archive.extract}"
    if not any(
        i.get("extract") == extract and i.get("sha256") == archive.sha256
        for i in manifest.get("inputs", [])
    ):
        return None
    prefixes = (f"{extract}/", f"{DEAD_LETTERS}/{archive.extract}/")
    return {
        f["path"]: _recorded(f) for f in manifest.get("files", []) if f["path"].startswith(prefixes)
    }


def _recorded(info: Mapping[str, Any]) -> dict[str, Any]:
    """What a record holds of a file: its path, rows, size and sha256."""
    return {k: info[k] for k in ("path", "rows", "bytes", "sha256")}


def extract_problem(
    root: str, archive: InputArchive, published: Mapping[str, Mapping[str, Any]] | None = None
) -> str | None:
    """What makes a finished extract unfit for reuse, or ``None``: read before any of its
    rows is.

    The trusted record of an extract is the manifest that published it (``published``),
    else its ``_files.json`` as sealed by the sha256 in its ``_SUCCESS``
    (:func:`seal_extract`). ``_SUCCESS`` must name ``archive`` (its sha256, size and extract
    folder); every file the record lists must be there with its size and sha256; no other
    file may sit in ``tweets/<extract>/`` or ``dead_letter/<extract>/``.

    Args:
        root: the release (or its draft) holding ``tweets/<extract>``.
        archive: the input archive.
        published: the extract's files as the current release's manifest records them
            (:func:`recorded_files`), or ``None`` where it did not publish this extract.
    """
    folder = join(root, TWEETS, archive.extract)
    try:
        seal = read_json(join(folder, _SUCCESS))
        files_doc = read_json(join(folder, FILES))
        if not isinstance(seal, dict) or not isinstance(files_doc, list):
            return f"{_SUCCESS} or {FILES} is not what an extract writes"
        expected = archive.to_json()
        for field in ("sha256", "bytes", "extract"):
            if seal.get(field) != expected[field]:
                return (
                    f"{_SUCCESS} names another archive ({field} {seal.get(field)}, "
                    f"the input's is {expected[field]})"
                )
        if "files_sha256" in seal:
            for name, field in ((FILES, "files_sha256"), (COUNTS, "counts_sha256")):
                got = file_digest(join(folder, name))[1]
                if seal.get(field) != got:
                    return f"{name} changed since it was written (sha256 {got[:12]})"
        elif published is None:
            return f"{_SUCCESS} holds no sha256 of {FILES} (written by an older corpusforge)"
        listed = {
            entry["path"]: entry
            for entry in (
                {**_recorded(i), "path": relative(i["path"], root)}
                for i in read_extract_files(root, archive, files_doc)
            )
        }
        if published is not None and listed != published:
            return f"{FILES} differs from the current release's manifest"
        return _files_problem(root, folder, archive, listed)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"its record cannot be read ({exc})"


def _files_problem(
    root: str, folder: str, archive: InputArchive, listed: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """The first listed file missing or changed, or a file the list does not hold."""
    present = {
        relative(p, root)
        for p in (*files_under(folder), *files_under(join(root, DEAD_LETTERS, archive.extract)))
    }
    markers = {f"{TWEETS}/{archive.extract}/{m}" for m in _MARKERS}
    for path in sorted(present - markers):
        if path not in listed:
            return f"{_shown(path, archive)} is not in its {FILES}"
    for path in sorted(listed):
        if path not in present:
            return f"{_shown(path, archive)} is missing"
    for path, info in sorted(listed.items()):
        size, sha = file_digest(join(root, path))
        if size != info["bytes"] or sha != info["sha256"]:
            return (
                f"{_shown(path, archive)} changed since it was written "
                f"(sha256 {sha[:12]}, recorded {str(info['sha256'])[:12]})"
            )
    return None


def _shown(path: str, archive: InputArchive) -> str:
    """A path relative to the release, shown relative to the extract where it is in it."""
    return relative(path, f"{TWEETS}/{archive.extract}")


def read_extract_files(
    root: str, archive: InputArchive, infos: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """An extract's ``_files.json`` with paths under ``root``.

    The list holds paths relative to the release; one written before releases could move
    holds the paths the build was given, whose part from ``tweets/<extract>/`` or
    ``dead_letter/<extract>/`` on is the relative path.

    Args:
        root: the release (or its draft) holding ``tweets/<extract>``.
        archive: the input archive.
        infos: the list as read already; read from the extract when ``None``.

    Raises:
        ValueError: the list names a path outside the extract.
    """
    if infos is None:
        infos = read_json(join(root, TWEETS, archive.extract, FILES))
    anchors = (f"{TWEETS}/{archive.extract}/", f"{DEAD_LETTERS}/{archive.extract}/")
    located = []
    for info in infos:
        path = info["path"]
        if not path.startswith(anchors):
            at = max(path.rfind("/" + a) for a in anchors)
            if at < 0:
                raise ValueError(f"{archive.extract}/{FILES}: {path} is outside the extract")
            path = path[at + 1 :]
        if {"", ".", ".."} & set(path.split("/")):
            raise ValueError(f"{archive.extract}/{FILES}: {path} is outside the extract")
        located.append({**info, "path": join(root, path)})
    return located


def extract_engine(config: TwitterConfig, runner: Runner) -> str:
    """The engine of the extract stage (``--extract-engine``)."""
    return choose_engine(config.extract_engine, (config.out, *config.inputs), runner)
