"""The progress reporter: no-op unless installed, exact under threads, a summary at the end."""

from __future__ import annotations

import io
import itertools
import logging
import threading
from collections.abc import Callable, Iterator

import apache_beam as beam
import pytest
from rich.console import Console

from corpusforge import progress
from corpusforge.config.runner import Runner


def fake_console() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=120)


def output(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def ticking_clock(step: float = 0.5) -> Callable[[], float]:
    ticks = itertools.count()
    return lambda: next(ticks) * step


def test_calls_without_a_reporter_do_nothing() -> None:
    assert progress._active is None
    progress.archives_planned(1)
    progress.members_listed("a.zip", 3)
    progress.member_done("a.zip", "m1", 10)
    progress.stage("extract")
    assert progress._active is None


def test_disabled_reporter_installs_nothing() -> None:
    console = fake_console()
    with progress.local_reporter(False, console=console) as reporter:
        assert reporter is None and progress._active is None
        progress.member_done("a.zip", "m1", 10)
    assert output(console) == ""


def test_reporter_counts_members_lines_and_stages() -> None:
    console = fake_console()
    with progress.local_reporter(True, console=console, clock=ticking_clock()) as reporter:
        assert reporter is not None and progress._active is reporter
        progress.archives_planned(2)
        progress.stage("extract")
        progress.members_listed("a.zip", 2)
        progress.members_listed("b.zip", 1)
        progress.member_done("a.zip", "00.json.bz2", 100)
        progress.member_done("a.zip", "01.json.bz2", 50)
        progress.member_done("a.zip", "01.json.bz2", 50)  # a retried bundle: counted once
        progress.member_done("b.zip", "00.json.bz2", 7)
        progress.stage("pairs")
        summary = reporter.summary()
    assert progress._active is None
    assert {name: a[:3] for name, a in summary.archives.items()} == {
        "a.zip": (2, 2, 150),
        "b.zip": (1, 1, 7),
    }
    assert (summary.members, summary.lines) == (3, 157)
    assert [name for name, _ in summary.stages] == ["extract", "pairs"]
    assert all(seconds > 0 for _, seconds in summary.stages)
    text = output(console)
    assert "run summary" in text
    for needle in ("a.zip", "2/2", "150", "b.zip", "1/1", "all archives", "157", "stage: pairs"):
        assert needle in text, needle


def test_reporter_is_exact_under_threads() -> None:
    archives, members, lines = 4, 200, 3

    def work(archive: str) -> None:
        progress.members_listed(archive, members)
        for m in range(members):
            progress.member_done(archive, f"{m:04d}", lines)
            progress.member_done(archive, f"{m:04d}", lines)  # duplicates from another retry

    with progress.local_reporter(True, console=fake_console()) as reporter:
        assert reporter is not None
        threads = [threading.Thread(target=work, args=(f"{a}.zip",)) for a in range(archives)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        summary = reporter.summary()
    assert summary.members == archives * members
    assert summary.lines == archives * members * lines
    assert all(a[0] == a[1] == members for a in summary.archives.values())


def test_nested_reporters_share_the_outer_one() -> None:
    with progress.local_reporter(True, console=fake_console()) as outer:
        with progress.local_reporter(True, console=fake_console()) as inner:
            assert inner is outer
        assert progress._active is outer
    assert progress._active is None


def test_the_reporter_is_removed_when_the_run_fails() -> None:
    console = fake_console()
    with pytest.raises(RuntimeError), progress.local_reporter(True, console=console):
        progress.members_listed("a.zip", 1)
        raise RuntimeError("boom")
    assert progress._active is None
    assert "a.zip" in output(console)  # the summary says how far it got


def test_log_records_go_through_the_console_while_drawing() -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler(io.StringIO())
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)
    try:
        console = fake_console()
        with progress.local_reporter(True, console=console):
            assert handler not in root.handlers
            logging.getLogger("corpusforge.test").info("extracting 3 archives")
        assert handler in root.handlers
        assert "extracting 3 archives" in output(console)
        stream = handler.stream
        assert isinstance(stream, io.StringIO) and stream.getvalue() == ""
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


@pytest.mark.parametrize(
    ("args", "local"),
    [
        ([], True),
        (["--runner=FnApiRunner"], True),
        (["--runner", "FnApiRunner"], True),
        (["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"], True),
        (["--runner=DataflowRunner", "--project=p"], False),
        (["--runner", "FlinkRunner"], False),
        (["--runner=PrismRunner"], False),
    ],
)
def test_runs_in_process(args: list[str], local: bool) -> None:
    assert Runner.parse(args).in_process is local


class _ReadFn(beam.DoFn):
    def process(self, element: tuple[str, str]) -> Iterator[int]:
        archive, member = element
        progress.member_done(archive, member, 10)
        yield 10


def test_dofns_on_the_in_process_runner_reach_the_reporter() -> None:
    members = [("a.zip", f"{m:02d}") for m in range(6)]
    options = beam.options.pipeline_options.PipelineOptions(["--runner=FnApiRunner"])
    with progress.local_reporter(True, console=fake_console()) as reporter:
        assert reporter is not None
        progress.members_listed("a.zip", len(members))
        with beam.Pipeline(options=options) as p:
            _ = p | beam.Create(members) | beam.Reshuffle() | beam.ParDo(_ReadFn())
        summary = reporter.summary()
    assert summary.archives["a.zip"][:3] == (6, 6, 60)
