"""Progress of long local runs: archives and members done, lines per second, ETA, a summary.

Pipeline steps report through a few module-level calls that do nothing (one global lookup)
unless a reporter is installed in this process::

    progress.members_listed("twitter-stream-2021-01-01.zip", 1440)    # in a DoFn
    progress.member_done("twitter-stream-2021-01-01.zip", "2021/01/01/10/29.json.bz2", 3210)
    progress.stage("pairs")                                            # in the driver

The command line installs one around a build, only when the runner runs the DoFns in its
own process (Beam's in-process ``FnApiRunner``) and ``--quiet`` was not given::

    with progress.local_reporter(enabled=not quiet and runner.in_process):
        build(config, runner)

On any other runner the DoFns run in worker processes where no reporter is installed, so
the calls cost nothing and show nothing. DoFns may call from several threads: the reporter
takes a lock, and a member reported twice (a retried bundle) is counted once. The display is
``rich.progress`` on stderr; when the run ends (or fails) it gives way to a summary table.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

_active: Reporter | None = None
_install_lock = threading.Lock()


# ---------------------------------------------------------------------------------------
# The calls pipeline steps make


def archives_planned(n: int) -> None:
    """The run will read ``n`` archives (sets the archives bar's total).

    Args:
        n: archives to read in this run.
    """
    reporter = _active
    if reporter is not None:
        reporter.archives_planned(n)


def members_listed(archive: str, n: int) -> None:
    """Archive ``archive`` has been listed: ``n`` members will be read from it.

    Args:
        archive: the archive's name (the same string ``member_done`` gets).
        n: members to read.
    """
    reporter = _active
    if reporter is not None:
        reporter.members_listed(archive, n)


def member_done(archive: str, member: str, lines: int) -> None:
    """Member ``member`` of ``archive`` has been read: ``lines`` lines.

    Args:
        archive: the archive's name.
        member: the member's name inside the archive.
        lines: lines read from it.
    """
    reporter = _active
    if reporter is not None:
        reporter.member_done(archive, member, lines)


def stage(name: str) -> None:
    """The run enters stage ``name`` (ends the previous stage).

    Args:
        name: a short label, e.g. ``extract``, ``pairs``, ``publish``.
    """
    reporter = _active
    if reporter is not None:
        reporter.stage(name)


@contextlib.contextmanager
def local_reporter(
    enabled: bool = True,
    *,
    console: Console | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Reporter | None]:
    """Install a progress reporter in this process for the duration of the block.

    While it is installed, log records of the root logger's console handlers are printed
    above the bars instead of through them. A nested ``local_reporter`` reuses the outer one.

    Args:
        enabled: ``False`` (``--quiet``, or a distributed runner) installs nothing.
        console: where to draw; stderr by default.
        clock: seconds, for the rates and the summary (tests pass a fake one).

    Yields:
        The reporter, or ``None`` when disabled.
    """
    global _active
    if not enabled:
        yield None
        return
    with _install_lock:
        outer = _active
        reporter = outer or Reporter(console or Console(stderr=True), clock=clock)
        _active = reporter
    if outer is not None:
        yield outer
        return
    reporter.start()
    try:
        with _logs_through(reporter.console):
            yield reporter
    finally:
        with _install_lock:
            _active = None
        reporter.stop()


@contextlib.contextmanager
def _logs_through(console: Console) -> Iterator[None]:
    """Route the root logger's stream handlers through ``console`` while bars are drawn."""
    root = logging.getLogger()
    swapped = [h for h in root.handlers if type(h) is logging.StreamHandler]
    if not swapped:
        yield
        return
    bridge = RichHandler(console=console, show_time=False, show_path=False, markup=False)
    bridge.setLevel(min(h.level for h in swapped))
    bridge.setFormatter(swapped[0].formatter or logging.Formatter("%(message)s"))
    for h in swapped:
        root.removeHandler(h)
    root.addHandler(bridge)
    try:
        yield
    finally:
        root.removeHandler(bridge)
        for h in swapped:
            root.addHandler(h)


# ---------------------------------------------------------------------------------------
# The reporter


@dataclass
class _Archive:
    listed: int | None = None
    done: int = 0
    lines: int = 0
    first: float | None = None
    last: float | None = None


@dataclass
class _Stage:
    name: str
    start: float
    end: float | None = None


@dataclass
class Summary:
    """What a reporter saw: per archive ``(members done, members listed, lines, seconds)``
    and per stage ``(name, seconds)``."""

    archives: dict[str, tuple[int, int | None, int, float]] = field(default_factory=dict)
    stages: list[tuple[str, float]] = field(default_factory=list)

    @property
    def lines(self) -> int:
        return sum(a[2] for a in self.archives.values())

    @property
    def members(self) -> int:
        return sum(a[0] for a in self.archives.values())


class Reporter:
    """Draws the bars; thread-safe. Made by :func:`local_reporter`, not directly."""

    def __init__(self, console: Console, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self._clock = clock
        self._lock = threading.Lock()
        self._archives: dict[str, _Archive] = {}
        self._done: set[tuple[str, str]] = set()
        self._stages: list[_Stage] = []
        self._planned: int | None = None
        self._first_event: float | None = None
        self._lines = 0
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description:<9}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._stage_task = self._progress.add_task("starting", total=None, info="")
        self._archive_task = self._progress.add_task("archives", total=None, info="", visible=False)
        self._member_task = self._progress.add_task("members", total=None, info="", visible=False)

    def start(self) -> None:
        self._progress.start()

    def stop(self) -> None:
        """End the last stage, remove the bars and print the summary table (none when
        nothing was reported: a build refused before its first stage ends in its one line)."""
        with self._lock:
            now = self._clock()
            if self._stages and self._stages[-1].end is None:
                self._stages[-1].end = now
            reported = bool(self._stages or self._archives)
        if reported:
            self._progress.stop()
            self.console.print(summary_table(self.summary()))
        else:
            with self.console.capture():  # the bars' last (empty) frame: not even a newline
                self._progress.stop()

    def archives_planned(self, n: int) -> None:
        with self._lock:
            self._planned = n
            self._refresh_archives()

    def members_listed(self, archive: str, n: int) -> None:
        with self._lock:
            self._archive(archive).listed = n
            self._refresh_archives()
            listed = sum(a.listed or 0 for a in self._archives.values())
            self._progress.update(self._member_task, total=listed, visible=True)

    def member_done(self, archive: str, member: str, lines: int) -> None:
        with self._lock:
            if (archive, member) in self._done:
                return
            self._done.add((archive, member))
            now = self._clock()
            tally = self._archive(archive)
            tally.done += 1
            tally.lines += lines
            tally.last = now
            self._lines += lines
            elapsed = now - (self._first_event if self._first_event is not None else now)
            rate = f", {self._lines / elapsed:,.0f} lines/s" if elapsed > 0 else ""
            self._progress.update(
                self._member_task, advance=1, visible=True, info=f"{self._lines:,} lines{rate}"
            )
            self._refresh_archives()

    def stage(self, name: str) -> None:
        with self._lock:
            now = self._clock()
            if self._stages and self._stages[-1].end is None:
                self._stages[-1].end = now
            self._stages.append(_Stage(name, now))
            self._progress.update(self._stage_task, description=name)

    def summary(self) -> Summary:
        """What has been reported so far."""
        with self._lock:
            now = self._clock()
            archives = {
                name: (
                    a.done,
                    a.listed,
                    a.lines,
                    (a.last or now) - (a.first if a.first is not None else now),
                )
                for name, a in sorted(self._archives.items())
            }
            stages = [(s.name, (s.end or now) - s.start) for s in self._stages]
        return Summary(archives, stages)

    def _archive(self, name: str) -> _Archive:
        """The tally of ``name``, made on first sight (callers hold the lock)."""
        tally = self._archives.get(name)
        if tally is None:
            now = self._clock()
            tally = self._archives[name] = _Archive(first=now)
            if self._first_event is None:
                self._first_event = now
        return tally

    def _refresh_archives(self) -> None:
        done = sum(
            1 for a in self._archives.values() if a.listed is not None and a.done >= a.listed
        )
        total = max(self._planned or 0, len(self._archives))
        self._progress.update(self._archive_task, completed=done, total=total, visible=True)


def summary_table(summary: Summary) -> Table:
    """The end-of-run table: per archive members, lines, lines per second; stage times."""
    table = Table(title="run summary", title_justify="left")
    table.add_column("archive or stage")
    for column in ("members", "lines", "lines/s", "time"):
        table.add_column(column, justify="right")
    for name, (done, listed, lines, seconds) in summary.archives.items():
        members = f"{done:,}" if listed is None else f"{done:,}/{listed:,}"
        table.add_row(name, members, f"{lines:,}", _rate(lines, seconds), _duration(seconds))
    if len(summary.archives) > 1:
        table.add_row("all archives", f"{summary.members:,}", f"{summary.lines:,}", "", "")
    for name, seconds in summary.stages:
        table.add_row(f"stage: {name}", "", "", "", _duration(seconds), style="dim")
    return table


def _duration(seconds: float) -> str:
    """Seconds with two decimals below ten seconds (a small build's stages take tenths)."""
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:,.1f} s"


def _rate(lines: int, seconds: float) -> str:
    return f"{lines / seconds:,.0f}" if seconds > 0 else "-"
