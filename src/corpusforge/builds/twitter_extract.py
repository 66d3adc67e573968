"""Twitter archives -> per-archive extracts: the first stage of a Twitter build.

    corpusforge twitter build twitter-stream-2021-01-01.zip --out release/

Each archive becomes ``tweets/<archive>-<key>/{tweets,deletes}/part-*.parquet``
(``schemas/tweet.v1``, ``schemas/delete.v1``), with ``_files.json``, ``_counts.json`` and a
``_SUCCESS`` marker, and ``dead_letter/<archive>-<key>/part-*.parquet`` for what could not be
read. ``<key>`` hashes the archive's sha256 and the extract settings, so a rebuild skips the
archives already extracted with the same settings. The stage runs in this process (the
local engine, :mod:`corpusforge.local.extract`, one archive at a time on ``--workers``
processes) or as Beam pipelines
(:class:`~corpusforge.transforms.twitter.ExtractedTweets`); both write the same files. The
driver is :mod:`corpusforge.builds.twitter`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from corpusforge.beamflags import choose_engine, runner_name
from corpusforge.config.twitter import TwitterConfig
from corpusforge.local.extract import extract_archive, partition_bytes
from corpusforge.local.machine import default_workers, memory_budget
from corpusforge.release.deadletter import extract_dead_letter_key
from corpusforge.release.io import (
    COUNTS,
    FILES,
    delete_tree,
    exists,
    file_digest,
    join,
    read_json,
    write_json,
)
from corpusforge.release.layout import DEAD_LETTERS, TWEETS, folder_name
from corpusforge.schemas import DEAD_LETTER, DELETE, TWEET
from corpusforge.sources.twitter.archive import archive_name

EXTRACT_VERSION = 2
"""Bump when extraction output changes for the same input: old extracts are then rebuilt."""

_SUCCESS = "_SUCCESS"


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


def describe_input(uri: str, config: TwitterConfig) -> InputArchive:
    """Size, sha256 and extract folder name of one archive (reads it once, streaming)."""
    size, sha = file_digest(uri)
    settings = {
        "archive_sha256": sha,
        "extract_version": EXTRACT_VERSION,
        "schemas": [str(TWEET), str(DELETE), str(DEAD_LETTER)],
        **config.extract_settings(),
    }
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]
    name = archive_name(uri)
    return InputArchive(uri, name, size, sha, f"{folder_name(name, 'archive')}-{key}")


def run_extract(todo: list[InputArchive], config: TwitterConfig, beam_args: list[str]) -> None:
    """Stage 1: extract ``todo`` into their folders under ``tweets/``: one archive at a time
    in this process (the local engine), or one Beam pipeline for them all.

    Each archive's folder gets ``tweets/``, ``deletes/`` shards, ``_files.json`` and
    ``_counts.json``; ``_SUCCESS`` is written last, only once the pipeline has finished, so
    a folder without it is a killed run's leftover and is rebuilt.
    """
    tweet_dirs = {a.uri: join(config.out, TWEETS, a.extract) for a in todo}
    dead_dirs = {
        join(config.out, TWEETS, a.extract): join(config.out, DEAD_LETTERS, a.extract) for a in todo
    }
    for a in todo:  # leftovers of a killed run are never mixed with a fresh extract
        delete_tree(tweet_dirs[a.uri])
        delete_tree(dead_dirs[tweet_dirs[a.uri]])
    if extract_engine(config, beam_args) == "local":
        workers = config.workers or default_workers()
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
                archive_bytes_per_partition=partition_bytes(
                    memory_budget(config.memory_limit), workers
                ),
                release_root=config.out,
            )
            write_json(join(folder, _SUCCESS), a.to_json())
        return
    from corpusforge.builds.twitter_beam import extract_on_beam

    extract_on_beam(tweet_dirs, dead_dirs, config, beam_args, _tweet_key)
    for a in todo:
        folder = tweet_dirs[a.uri]
        if not exists(join(folder, FILES)):
            write_json(join(folder, FILES), [])
        write_json(join(folder, _SUCCESS), a.to_json())


ONE_MACHINE_RUNNERS = frozenset(
    {"FnApiRunner", "DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner"}
)
"""Runners that hold a pipeline's data in this machine's memory (Beam's direct runners, with
any ``--direct_running_mode``): an extract pipeline per archive there. Not
``progress.IN_PROCESS_RUNNERS``, which asks where the DoFns run."""


def extract_batches(todo: list[InputArchive], beam_args: list[str]) -> list[list[InputArchive]]:
    """One extract pipeline per archive on the in-process runner, one for all elsewhere.

    The in-process runner holds a grouping's data in memory, so extracting one daily archive
    at a time bounds memory by a day, not by the whole input; a distributed runner spreads
    the grouping over workers and is best given everything at once.
    """
    if not todo:
        return []
    if runner_name(beam_args).rsplit(".", 1)[-1] in ONE_MACHINE_RUNNERS:
        return [[archive] for archive in todo]
    return [todo]


def _tweet_key(row: Mapping[str, Any]) -> int:
    return int(row["id"])


def extract_is_complete(folder: str) -> bool:
    """Whether an extract folder was finished (a killed run's leftover is not)."""
    return all(exists(join(folder, n)) for n in (_SUCCESS, FILES, COUNTS))


def read_extract_files(root: str, archive: InputArchive) -> list[dict[str, Any]]:
    """An extract's ``_files.json`` with paths under ``root``.

    The list holds paths relative to the release; one written before releases could move
    holds the paths the build was given, whose part from ``tweets/<extract>/`` or
    ``dead_letter/<extract>/`` on is the relative path.
    """
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
        located.append({**info, "path": join(root, path)})
    return located


def extract_engine(config: TwitterConfig, beam_args: list[str]) -> str:
    """The engine of the extract stage (``--extract-engine``)."""
    return choose_engine(config.extract_engine, (config.out, *config.inputs), beam_args)
