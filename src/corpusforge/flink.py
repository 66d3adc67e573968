"""Where Beam's Flink job server jar is, and the options a build on Flink gets: built once by
``scripts/flink.sh``, never downloaded.

Maven Central serves Beam's Flink runner for Flink 1.19 at 2.70.0 but no job server jar;
``bash scripts/flink.sh`` shades the runner with our job service (``tools/flink/``) into
``build/flink/beam-flink-job-server.jar``. ``--runner flink`` (Beam's ``FlinkRunner``) then
starts that jar itself on free ports with the Java 17 flags Flink needs, submits, and stops it
when the job ends; with no ``--flink_master`` the job runs on Flink embedded in the job server
(``[local]``), and with ``--job_endpoint`` on a job server the user started. Workers are
``LOOPBACK`` (in this process) unless ``--environment_type`` says otherwise.

A job on a cluster never hangs the build: Beam's runner waits for ever for an SDK worker that
died before it connected, so :func:`watchdog` follows the job through the cluster's REST API
and cancels it once nothing in it has moved for ``--flink_stall_timeout`` seconds (default
:data:`STALL_SECONDS`); the build then fails in one line, exit 1, nothing published. Nor does
a job outlive its build: each build's job has a name no other has (``--job_name`` or
``corpusforge``, then a random suffix; the job server adds one more), by which the watchdog
and the job server find it on the cluster and cancel it alone, and its options ask the job
server to cancel it once the build stops watching it (``--cancel_job_with_client``: killed,
or its connection gone), as a job server started by hand for ``--job_endpoint`` would not.

    bash scripts/flink.sh && bash scripts/flink-cluster.sh start      # prints localhost:PORT
    corpusforge twitter build day.zip --out release/ --runner flink --flink_master localhost:PORT
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Beam is imported when a job runs, not when a command starts
    from apache_beam.options.pipeline_options import PipelineOptions

    from corpusforge.config.runner import Runner  # which imports this module

FLINK_JAR_ENV = "CORPUSFORGE_FLINK_JOB_SERVER_JAR"
FLINK_VERSION = "1.19"
"""The Flink minor version of the job server ``scripts/flink.sh`` builds (and of the cluster
``scripts/flink-cluster.sh`` runs): a cluster must run the same minor version."""
EMBEDDED_MASTER = "[local]"
JAVA_17_FLAGS = (
    *(
        f"--add-opens=java.base/{package}=ALL-UNNAMED"
        for package in (
            "java.lang", "java.net", "java.io", "java.nio", "sun.nio.ch", "java.lang.reflect",
            "java.text", "java.time", "java.util", "java.util.concurrent",
            "java.util.concurrent.atomic", "java.util.concurrent.locks",
        )
    ),
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
)  # fmt: skip
"""Flink's usual module flags on Java 17: without them a streaming job fails with
``InaccessibleObjectException`` (``scripts/flink-cluster.sh`` gives its JVMs the same)."""
EXIT_WITH_PARENT = "-Dcorpusforge.job-server.exit-with-parent=true"
"""Given to a job server the build starts: it watches the build's process and, once that has
exited (even by SIGKILL), cancels its jobs, on the cluster too, and exits
(``tools/flink/job-service``'s ``ParentWatch``). A job server started by hand has no such flag."""
_REPO = Path(__file__).resolve().parents[2]
STALL_SECONDS = 600.0
"""How long a job on a cluster may show no progress (no vertex's status, records or bytes in
or out changing) before the build cancels it: ``--flink_stall_timeout``; 0 never."""
POLL_SECONDS = 5.0
"""How often :func:`watchdog` reads the job (Flink refreshes its metrics every 10 s)."""
_TERMINAL = frozenset({"FINISHED", "FAILED", "CANCELED", "SUSPENDED"})
BATCH_MODES = ("PIPELINED", "PIPELINED_FORCED", "BATCH", "BATCH_FORCED")
"""Flink's ``ExecutionMode`` values, which ``--execution_mode_for_batch`` takes. The Java
runner's default, ``PIPELINED``, stays: ``BATCH_FORCED`` (a stage starts once its inputs are
done) did not keep an SDK worker's peak from growing with the input (benchmarks/RESULTS.md,
issue 37, fourth session)."""
log = logging.getLogger(__name__)


class FlinkNotFoundError(FileNotFoundError):
    """No Flink job server jar was built or given."""


def built_job_server() -> Path:
    """Where ``scripts/flink.sh`` puts the job server jar of this checkout."""
    return _REPO / "build" / "flink" / "beam-flink-job-server.jar"


def locate_job_server(wanted_by: str = "Flink") -> Path:
    """The job server jar: ``$CORPUSFORGE_FLINK_JOB_SERVER_JAR`` where set (and nothing else
    then), else this checkout's build.

    Args:
        wanted_by: what asks for it, for the message (``--runner flink``).

    Raises:
        FlinkNotFoundError: there is none; the message says how to build it.
    """
    given = os.environ.get(FLINK_JAR_ENV)
    if given:  # the user's choice: never passed over for another jar
        if Path(given).is_file():
            return Path(given)
        raise FlinkNotFoundError(
            f"{wanted_by} needs Beam's Flink job server, and ${FLINK_JAR_ENV} names {given}, "
            "which is not a file: point it at the jar `bash scripts/flink.sh` builds "
            "(build/flink/beam-flink-job-server.jar), or unset it"
        )
    jar = built_job_server()
    if jar.is_file():
        return jar
    raise FlinkNotFoundError(
        f"{wanted_by} needs Beam's Flink job server, which is not built here: run "
        f"`bash scripts/flink.sh` (Java 17 and Maven), set ${FLINK_JAR_ENV}, or pass "
        "--job_endpoint=HOST:PORT of a running one"
    )


def uses_flink(runner: str | None) -> bool:
    """Whether ``runner`` is Beam's Flink runner (``flink``, ``FlinkRunner``)."""
    name = (runner or "").rsplit(".", 1)[-1].lower()
    return name in ("flink", "flinkrunner")


def needs_job_server(runner: Runner) -> bool:
    """Whether a Flink build on ``runner`` needs the jar ``scripts/flink.sh`` builds: neither
    ``--job_endpoint`` (a running job server) nor ``--flink_job_server_jar`` is given.

    Args:
        runner: the build's runner description.
    """
    return not (runner.has_option("--job_endpoint") or runner.has_option("--flink_job_server_jar"))


def configure(options: PipelineOptions) -> None:
    """Fill in what ``--runner flink`` needs and the user left out: the runner's class name,
    the job server jar (unless ``--job_endpoint`` names a running job server), Flink 1.19, the
    Java 17 flags, the embedded Flink when no ``--flink_master`` is given (a running job
    server named by ``--job_endpoint`` uses its own), and ``LOOPBACK`` workers when no
    ``--environment_type`` is.

    Args:
        options: a build's pipeline options whose runner is Flink; changed in place.

    Raises:
        FlinkNotFoundError: the job server jar is needed and not built.
    """
    import uuid

    _quiet_job_server_lifecycle()
    from apache_beam.options.pipeline_options import (
        FlinkRunnerOptions,
        GoogleCloudOptions,
        JobServerOptions,
        PortableOptions,
        StandardOptions,
    )

    declare_options()  # --flink_stall_timeout and the others, before Beam reads the flags
    options.view_as(StandardOptions).runner = "FlinkRunner"
    flink = options.view_as(FlinkRunnerOptions)
    portable = options.view_as(PortableOptions)
    flink.flink_version = FLINK_VERSION
    if not portable.job_endpoint:  # the build starts the job server
        if flink.flink_master in (None, "", "[auto]"):  # Beam's default: the embedded Flink
            flink.flink_master = EMBEDDED_MASTER
        if not flink.flink_job_server_jar:
            flink.flink_job_server_jar = str(locate_job_server("--runner flink"))
    # else ``[auto]`` (Beam's default) lets the running job server use its own --flink-master
    server = options.view_as(JobServerOptions)
    given = list(server.job_server_jvm_properties or [])
    ours = (*JAVA_17_FLAGS, EXIT_WITH_PARENT)
    server.job_server_jvm_properties = [*given, *(f for f in ours if f not in given)]
    if not portable.environment_type:
        portable.environment_type = "LOOPBACK"
    options.view_as(batch_options())  # --execution_mode_for_batch goes to the job server
    options.view_as(stall_options()).cancel_job_with_client = True  # a build always waits
    cloud = options.view_as(GoogleCloudOptions)
    # a name of its own, by which the watchdog finds it on the cluster: a user's --job_name,
    # reused, would otherwise name another build's job too
    cloud.job_name = f"{cloud.job_name or 'corpusforge'}-{uuid.uuid4().hex[:16]}"


@contextmanager
def watchdog(options: PipelineOptions) -> Iterator[None]:
    """Runs the ``with`` body (start a job and wait for it) under a watchdog when the job goes
    to a Flink cluster (``--flink_master`` a REST address): a thread reads the job through the
    cluster's REST API every :data:`POLL_SECONDS` and cancels it (``PATCH /jobs/ID``) once
    nothing in it has moved for ``--flink_stall_timeout`` seconds. Beam's runner waits for
    ever for an SDK worker that died before it connected; with the watchdog such a job ends.
    Elsewhere (the embedded Flink, other runners, a timeout of 0) the body runs alone.

    Args:
        options: the job's pipeline options, as :func:`configure` left them.

    Raises:
        JobFailed: the watchdog cancelled the job; the message says why, in one line.
    """
    from apache_beam.options.pipeline_options import (
        FlinkRunnerOptions,
        GoogleCloudOptions,
        StandardOptions,
    )

    from corpusforge.jobs import JobFailed

    runner = options.view_as(StandardOptions).runner
    master = options.view_as(FlinkRunnerOptions).flink_master or ""
    seconds = options.view_as(stall_options()).flink_stall_timeout
    name = options.view_as(GoogleCloudOptions).job_name
    on_cluster = ":" in master and not master.startswith("[")
    if not (isinstance(runner, str) and uses_flink(runner) and on_cluster and seconds > 0):
        yield
        return
    dog = _Watchdog(master, name, seconds)
    try:
        yield
    except Exception as exc:
        if dog.reason is None:
            raise
        raise JobFailed(runner, dog.reason) from exc
    finally:
        dog.stop()


class _Watchdog:
    """A thread that cancels the job named ``name`` on the cluster at ``master`` once its
    progress (:func:`_progress`) has not changed for ``seconds``; ``reason`` says it did."""

    def __init__(self, master: str, name: str | None, seconds: float) -> None:
        self.reason: str | None = None
        self._master = master
        self._name = name
        self._seconds = seconds
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="flink-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        job: str | None = None
        last: object = None
        since = time.monotonic()
        while not self._done.wait(POLL_SECONDS):
            try:
                job = job or _job_named(self._master, self._name)
                if job is None:  # not submitted yet: the clock starts with the job
                    continue
                state, progress = _progress(self._master, job)
            except (OSError, ValueError, KeyError) as exc:  # the REST API did not answer
                log.debug("the Flink watchdog could not read the cluster: %s", exc)
                continue
            now = time.monotonic()
            if state in _TERMINAL:
                return
            if progress != last:
                last, since = progress, now
            elif now - since >= self._seconds:
                self._cancel(job, now - since)
                return

    def _cancel(self, job: str, idle: float) -> None:
        self.reason = (
            f"the Flink job {job} made no progress for {idle:.0f} s (--flink_stall_timeout "
            f"{self._seconds:g}; an SDK worker that never connected?), so the build cancelled it"
        )
        log.debug(self.reason)
        try:
            _rest(self._master, f"/jobs/{job}?mode=cancel", method="PATCH")
        except OSError as exc:
            self.reason += f" (the cancel request failed: {exc})"


def _rest(master: str, path: str, method: str = "GET") -> Any:
    import urllib.request  # here, not at start-up: a build that reads no cluster skips it

    request = urllib.request.Request(f"http://{master}{path}", method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


def _job_named(master: str, name: str | None) -> str | None:
    """The id of the latest job called ``name`` on the cluster, or ``None``. Our job server
    names the cluster's job ``name``, a dash and a suffix of its own (``FlinkClusterJob``);
    ``name`` being unique (:func:`configure`), no other job's name starts so."""
    jobs = [
        j
        for j in _rest(master, "/jobs/overview")["jobs"]
        if j["name"] == name or j["name"].startswith(f"{name}-")
    ]
    return str(max(jobs, key=lambda j: j["start-time"])["jid"]) if jobs else None


def _progress(master: str, job: str) -> tuple[str, list[tuple[Any, ...]]]:
    """A job's state and what moves while it works: each vertex's status and its records and
    bytes in and out."""
    found = _rest(master, f"/jobs/{job}")
    keys = ("read-records", "write-records", "read-bytes", "write-bytes")
    vertices = [
        (v["id"], v["status"], *(v.get("metrics", {}).get(k) for k in keys))
        for v in found["vertices"]
    ]
    return str(found["state"]), vertices


@functools.cache
def batch_options() -> Any:
    """The pipeline option class of ``--execution_mode_for_batch`` (:func:`_options_class`).

    The option is the Java runner's (``FlinkPipelineOptions``); Beam's Python SDK learns it
    from the job server only when it submits, so a build's flag check would refuse it without
    this declaration. Declared here with no default, it reaches the job server only when set.
    """
    return _options_class(
        "FlinkBatchOptions",
        _Flag(
            "--execution_mode_for_batch",
            choices=BATCH_MODES,
            default=None,
            help="how Flink exchanges data between the stages of a batch job: PIPELINED "
            "(the Flink runner's default) runs every stage at once, BATCH_FORCED one "
            "after another through blocking exchanges",
        ),
    )


@functools.cache
def stall_options() -> Any:
    """The pipeline option class of corpusforge's own Flink options (:func:`_options_class`):
    ``--flink_stall_timeout`` (the build's watchdog) and ``--cancel_job_with_client`` (the job
    server's; :func:`configure` sets it for every build)."""
    return _options_class(
        "FlinkWatchdogOptions",
        _Flag(
            "--flink_stall_timeout",
            type=float,
            default=STALL_SECONDS,
            help="seconds a job on a Flink cluster may show no progress before the build "
            "cancels it (a worker that never connected hangs it otherwise); 0: never",
        ),
        _Flag(
            "--cancel_job_with_client",
            action="store_true",
            default=None,
            help="the job server (scripts/flink.sh's) cancels the job once no client "
            "watches it (the submitting process died); corpusforge builds always set it. "
            "Without it a job runs on when its client goes (a detached submission)",
        ),
    )


def declare_options() -> None:
    """Make corpusforge's Flink options (:func:`stall_options`, :func:`batch_options`) known
    to Beam before it reads a build's flags, whatever the runner: Beam drops a flag no
    declared class takes (``Discarding unparseable args``), so ``--cancel_job_with_client``
    given to ``PortableRunner`` (``deploy/flink/submit.sh``) would never reach the job server.
    """
    stall_options()
    batch_options()


class _Flag:
    """One ``add_argument`` call: the flag and argparse's keywords for it."""

    def __init__(self, flag: str, **settings: Any) -> None:
        self.flag = flag
        self.settings = settings


def _options_class(name: str, *flags: _Flag) -> Any:
    """A Beam ``PipelineOptions`` subclass called ``name`` that declares ``flags``.

    Made when called, so that Beam is imported when a job runs, not when a command starts.
    Beam reads the flags of every subclass it has seen, and argparse refuses a flag declared
    twice: each caller makes its class once (``functools.cache``).

    Args:
        name: the class's name.
        flags: the options it declares, in order.
    """
    from apache_beam.options.pipeline_options import PipelineOptions

    class Options(PipelineOptions):
        @classmethod
        def _add_argparse_args(cls, parser: Any) -> None:
            for option in flags:
                parser.add_argument(option.flag, **option.settings)

    Options.__name__ = Options.__qualname__ = name
    return Options


class _JobServerLifecycle(logging.Filter):
    """Drops Beam's warnings that it starts and stops the job server (``Really starting
    service at … with cmd: (…)``, hundreds of characters each): the stop comes after the
    build's one-line error, which must stay the last line a failed build prints."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(("Really starting", "Really destroying"))


def _quiet_job_server_lifecycle() -> None:
    logger = logging.getLogger("apache_beam.utils.subprocess_server")
    if not any(isinstance(f, _JobServerLifecycle) for f in logger.filters):
        logger.addFilter(_JobServerLifecycle())
