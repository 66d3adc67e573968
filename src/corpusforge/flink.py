"""Where Beam's Flink job server jar is, and the options a build on Flink gets: built once by
``scripts/flink.sh``, never downloaded.

Maven Central serves Beam's Flink runner for Flink 1.19 at 2.70.0 but no job server jar;
``bash scripts/flink.sh`` shades the runner with our job service (``tools/flink/``) into
``build/flink/beam-flink-job-server.jar``. ``--runner flink`` (Beam's ``FlinkRunner``) then
starts that jar itself on free ports with the Java 17 flags Flink needs, submits, and stops it
when the job ends; with no ``--flink_master`` the job runs on Flink embedded in the job server
(``[local]``), and with ``--job_endpoint`` on a job server the user started. Workers are
``LOOPBACK`` (in this process) unless ``--environment_type`` says otherwise.

    bash scripts/flink.sh && bash scripts/flink-cluster.sh start      # prints localhost:PORT
    corpusforge twitter build day.zip --out release/ --runner flink --flink_master localhost:PORT
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Beam is imported when a job runs, not when a command starts
    from apache_beam.options.pipeline_options import PipelineOptions

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
_REPO = Path(__file__).resolve().parents[2]


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


def needs_job_server(beam_args: list[str]) -> bool:
    """Whether a Flink build with ``beam_args`` needs the jar ``scripts/flink.sh`` builds:
    neither ``--job_endpoint`` (a running job server) nor ``--flink_job_server_jar`` is given."""
    given = ("--job_endpoint", "--flink_job_server_jar")
    return not any(arg.partition("=")[0] in given for arg in beam_args)


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
    _quiet_job_server_lifecycle()
    from apache_beam.options.pipeline_options import (
        FlinkRunnerOptions,
        JobServerOptions,
        PortableOptions,
        StandardOptions,
    )

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
    server.job_server_jvm_properties = [*given, *(f for f in JAVA_17_FLAGS if f not in given)]
    if not portable.environment_type:
        portable.environment_type = "LOOPBACK"


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
