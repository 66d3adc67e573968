"""``--memory-limit`` bounds the whole process tree (issue 36, point 5).

Every stage starts only the workers that fit the budget beside this process, each with its
own measured memory, and says so in one line when fewer than ``--workers`` start; a budget
below the least a build can keep is refused before anything is written, in one line naming
that floor (exit 2): a bitext build's grows with its shard, a Twitter build's is its pair
stage's smallest partition beside this process. The sizing arithmetic is tested on its own;
one real bitext build at a tight budget asks for 16 workers, starts the two that fit
(counted in ``/proc``) and publishes the bytes a one-worker build publishes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpusforge.local import bitext, extract, pairs
from corpusforge.local.machine import MIB, MemoryBudgetError, check_floor, fitting_workers
from corpusforge.release.io import InputError
from corpusforge.synth.twitter import write_synthetic_archive

COMMAND = os.path.join(os.path.dirname(sys.executable), "corpusforge")
ENDS_WITHIN = 120
"""Seconds a build is given: generous."""


# -- the arithmetic ------------------------------------------------------------------------


def test_only_the_workers_that_fit_start_and_a_line_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="corpusforge.local.machine")
    sizes = {"main": 176 * MIB, "worker": 112 * MIB, "stage": "bitext"}
    assert fitting_workers(512 * MIB, 16, **sizes) == 3  # type: ignore[arg-type]
    assert caplog.messages == ["--memory-limit 512 MiB fits 3 of 16 bitext workers"]
    caplog.clear()
    assert fitting_workers(8192 * MIB, 2, **sizes) == 2  # type: ignore[arg-type]
    assert caplog.messages == []  # all that were asked for start: nothing to say
    assert fitting_workers(256 * MIB, 16, **sizes) == 1  # type: ignore[arg-type]
    assert caplog.messages == ["--memory-limit 256 MiB fits 1 of 16 bitext workers"]


@pytest.mark.parametrize("budget_mib", [256, 512, 1024, 4096])
def test_each_stage_starts_the_most_workers_that_fit(budget_mib: int) -> None:
    budget = budget_mib * MIB
    for fits, main, worker in (
        (bitext.filter_workers, bitext.MAIN_BYTES, bitext.FILTER_WORKER_BYTES),
        (extract.read_workers, extract.READ_MAIN_BYTES, extract.WORKER_BYTES),
    ):
        workers = fits(budget, 16)
        assert workers == 1 or main + workers * worker <= budget
        assert workers == 16 or main + (workers + 1) * worker > budget
    assert bitext.filter_workers(512 * MIB, 16) == 2
    assert extract.read_workers(512 * MIB, 16) == 3


def test_a_tight_budget_leaves_the_partitions_this_process_s_memory_only() -> None:
    """The extract's partitions are merged once the read workers have ended."""
    mib = MIB
    assert extract.partition_bytes(1024 * mib) == int(
        (1024 * mib - extract.MERGE_MAIN_BYTES) / extract.MERGE_BYTES_PER_ARCHIVE_BYTE
    )
    assert extract.partition_bytes(256 * mib) < extract.partition_bytes(1024 * mib)
    assert extract.partition_bytes(extract.MERGE_MAIN_BYTES) == 8 * mib  # never below


def test_the_floor_of_a_bitext_build_grows_with_its_shard() -> None:
    small = bitext.floor_bytes(100_000, 250_000)
    assert small <= 256 * MIB  # a small build keeps the least limit
    large = bitext.floor_bytes(36 * MIB, 250_000)  # a shard of all its rows
    assert large == bitext.WRITE_MAIN_BYTES + bitext.SHARD_BYTES_PER_INPUT_BYTE * 36 * MIB
    assert bitext.floor_bytes(36 * MIB, 20_000) < large  # smaller shards need less
    assert bitext.floor_bytes(8 * 2**30, 250_000) == bitext.floor_bytes(16 * 2**30, 250_000)


def test_a_limit_below_the_floor_is_a_user_error_naming_it() -> None:
    check_floor(None, 10**12, "this bitext build")  # no limit given: nothing refused
    check_floor(512, 512 * MIB, "this bitext build")
    with pytest.raises(MemoryBudgetError) as refused:
        check_floor(256, 300 * MIB + 1, "this bitext build")
    assert (
        str(refused.value) == "--memory-limit 256 MiB is below the 301 MiB this bitext build needs"
    )
    assert isinstance(refused.value, InputError)  # exit 2


# -- real builds ---------------------------------------------------------------------------


def _moses_pair(folder: Path, lines: int) -> list[str]:
    """A German-English Moses pair of ``lines`` distinct lines."""
    folder.mkdir(parents=True, exist_ok=True)
    de = folder / "budget.de-en.de"
    en = folder / "budget.de-en.en"
    de.write_text(
        "".join(f"Das Haus Nummer {i} steht am Ende der langen Straße.\n" for i in range(lines)),
        encoding="utf-8",
    )
    en.write_text(
        "".join(f"House number {i} stands at the end of the long street.\n" for i in range(lines)),
        encoding="utf-8",
    )
    return [str(de), str(en)]


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.add(child)
            todo.append(child)
    return found


def _build(inputs: list[str], out: Path, *flags: str) -> tuple[int, str, int]:
    """``corpusforge bitext build``; its exit status, its stderr and the most processes that
    ran below it at once (sampled every few milliseconds)."""
    err = out.parent / f"{out.name}.stderr"
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            [COMMAND, "bitext", "build", *inputs, "--out", str(out), *flags],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        most = 0
        deadline = time.monotonic() + ENDS_WITHIN
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                most = max(most, len(_descendants(proc.pid)))
                time.sleep(0.005)
            code = proc.wait(timeout=5)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return code, err.read_text(), most


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_tight_budget_starts_the_workers_that_fit_and_publishes_the_same_bytes(
    tmp_path: Path,
) -> None:
    inputs = _moses_pair(tmp_path / "in", 12_000)
    tight = tmp_path / "tight"
    code, stderr, most = _build(inputs, tight, "--memory-limit", "512", "--workers", "16")
    assert code == 0, stderr
    assert "--memory-limit 512 MiB fits 2 of 16 bitext workers" in stderr.splitlines()
    assert most == 2, f"{most} processes ran below the build"
    one = tmp_path / "one"
    code, stderr, most = _build(inputs, one, "--workers", "1")
    assert code == 0, stderr
    assert most == 0
    assert _digests(tight) == _digests(one)


def test_a_budget_below_the_floor_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    inputs = []
    for side in ("de", "en"):  # 20 MiB each, never read: the floor is checked first
        path = folder / f"big.de-en.{side}"
        with path.open("wb") as f:
            f.truncate(20 * MIB)
        inputs.append(str(path))
    out = tmp_path / "release"
    code, stderr, _ = _build(inputs, out, "--memory-limit", "256")
    floor = -(-bitext.floor_bytes(40 * MIB, 250_000) // MIB)
    assert code == 2, stderr
    assert stderr.strip().splitlines() == [
        f"error: --memory-limit 256 MiB is below the {floor} MiB this bitext build needs"
    ]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "in") == ["release.stderr"]


def test_a_twitter_budget_below_its_floor_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=200, layout="zip-2020", seed=1)
    out = tmp_path / "release"
    done = subprocess.run(
        [COMMAND, "twitter", "build", str(archive), "--out", str(out), "--memory-limit", "256"],
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
    )
    floor = max(
        extract.floor_bytes(),
        pairs.MAIN_BYTES + pairs.rows_per_partition(0) * pairs.BYTES_PER_PARTITION_RECORD,
    )
    assert floor > 256 * MIB  # the pair stage's smallest partition beside this process
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()  # the run summary (empty), then the error
    assert "Traceback" not in done.stderr
    assert [line for line in lines if line.startswith("error:")] == [
        f"error: --memory-limit 256 MiB is below the {-(-floor // MIB)} MiB a Twitter build needs"
    ]
    assert lines[-1].startswith("error:")
    assert not out.exists() and [p for p in tmp_path.iterdir() if "release" in p.name] == []
