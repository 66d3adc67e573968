"""The typed runner description: read once from a build's Beam flags, handed back to Beam
unchanged in meaning, and the one place that says what a runner is (issue 37)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from corpusforge.config.runner import IN_PROCESS_RUNNER, Runner

FLAG_LISTS = [
    [],
    ["--project=p"],
    ["--runner", "flink", "--flink_master", "localhost:8081", "--parallelism=2"],
    ["--runner=PortableRunner", "--job_endpoint=localhost:8099", "--environment_type=LOOPBACK"],
    [
        "--environment_type=EXTERNAL",
        "--environment_config",
        "localhost:50000",
        "--runner=PortableRunner",
        "--job_endpoint=localhost:1",
    ],
    ["--runner=FlinkRunner", "--s3_endpoint_url=http://127.0.0.1:1", "--runner", "prism"],
    ["--direct_num_workers", "2", "--direct_running_mode=multi_processing"],
    ["--experiments=a", "--experiments=b", "--save_main_session"],
]


def test_flags_are_read_into_fields_and_the_rest_kept_in_order() -> None:
    runner = Runner.parse(
        [
            "--runner",
            "DataflowRunner",
            "--project=p",
            "--flink_master=h:1",
            "--region",
            "eu",
            "--runner=flink",
            "--environment_type",
            "EXTERNAL",
            "--environment_config=localhost:5",
        ]
    )
    assert runner == Runner(
        name="flink",  # the last --runner, as Beam reads it
        master="h:1",
        environment_type="EXTERNAL",
        environment_config="localhost:5",
        options=("--project=p", "--region", "eu"),
    )
    assert runner.named and not Runner().named
    assert Runner.parse(["--job_endpoint", "localhost:9"]).endpoint == "localhost:9"
    # a typed flag with no value left is Beam's to refuse, so it is kept as given
    assert Runner.parse(["--runner"]) == Runner(options=("--runner",))


@pytest.mark.parametrize("flags", FLAG_LISTS)
def test_beam_reads_the_description_as_it_read_the_flags(flags: list[str]) -> None:
    runner = Runner.parse(flags)
    assert Runner.parse(runner.beam_args()) == runner
    given = PipelineOptions(flags).get_all_options()
    assert PipelineOptions(runner.beam_args()).get_all_options() == given


@pytest.mark.parametrize(
    ("flags", "class_name"),
    [
        ([], IN_PROCESS_RUNNER),
        (["--runner="], IN_PROCESS_RUNNER),
        (["--runner=DataflowRunner"], "DataflowRunner"),
        (["--runner=prism"], "PrismRunner"),
        (["--runner=PrismRunner"], "PrismRunner"),
        (["--runner=DirectRunner"], "DirectRunner"),
        (["--runner=flink", "--job_endpoint=localhost:1"], "FlinkRunner"),
        (["--runner=apache_beam.runners.FlinkRunner", "--job_endpoint=x:1"], "FlinkRunner"),
        (["--runner=a.b.FnApiRunner"], "a.b.FnApiRunner"),
    ],
)
def test_the_manifests_runner_is_the_one_beam_is_given(flags: list[str], class_name: str) -> None:
    from corpusforge.config.beam import pipeline_options
    from corpusforge.prism import PrismNotFoundError

    runner = Runner.parse(flags)
    assert runner.class_name == class_name
    try:
        options = pipeline_options(runner)
    except PrismNotFoundError:
        pytest.skip("Prism is not built here (bash scripts/prism.sh)")
    assert options.view_as(StandardOptions).runner == class_name


@pytest.mark.parametrize(
    ("name", "in_process", "one_machine", "distributed"),
    [
        (None, True, True, False),
        ("FnApiRunner", True, True, False),
        ("apache_beam.runners.portability.fn_api_runner.FnApiRunner", True, True, False),
        ("BundleBasedDirectRunner", True, True, False),
        ("DirectRunner", False, True, False),
        ("SwitchingDirectRunner", False, True, False),
        ("prism", False, False, False),
        ("PrismRunner", False, False, False),
        ("flink", False, False, True),
        ("FlinkRunner", False, False, True),
        ("PortableRunner", False, False, True),
        ("DataflowRunner", False, False, True),
    ],
)
def test_where_each_runner_runs(
    name: str | None, in_process: bool, one_machine: bool, distributed: bool
) -> None:
    # progress bars (in_process), one extract pipeline per archive (one_machine), and a
    # bucket release's draft in the bucket (distributed)
    runner = Runner(name=name)
    assert (runner.in_process, runner.one_machine, runner.distributed) == (
        in_process,
        one_machine,
        distributed,
    )


@pytest.mark.parametrize(
    ("flags", "prism", "flink"),
    [
        ([], False, False),
        (["--runner=prism"], True, False),
        (["--runner=DirectRunner"], True, False),
        (["--runner", "flink"], False, True),
        (["--runner=FlinkRunner"], False, True),
        (["--runner=PortableRunner"], False, False),
    ],
)
def test_prism_and_flink_are_recognised(flags: list[str], prism: bool, flink: bool) -> None:
    runner = Runner.parse(flags)
    assert (runner.uses_prism, runner.uses_flink) == (prism, flink)


def test_has_option_names_typed_and_other_flags() -> None:
    runner = Runner.parse(["--job_endpoint=x:1", "--prism_location", "/bin/prism"])
    assert runner.has_option("--job_endpoint")
    assert runner.has_option("--prism_location")
    assert not runner.has_option("--flink_master")
    assert not runner.has_option("--prism")


@pytest.mark.parametrize(
    "module", ["corpusforge.config.runner", "corpusforge.beamflags", "corpusforge.config.beam"]
)
def test_each_module_imports_alone_and_the_runner_flags_form_no_cycle(module: str) -> None:
    # beamflags and config.beam once imported each other; the runner description imports
    # neither, and never Beam.
    probe = (
        "import sys\n"
        f"import {module}\n"
        "print(sorted(m for m in ('corpusforge.config.beam', 'corpusforge.beamflags', "
        "'apache_beam') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = {
        "corpusforge.config.runner": "[]",
        "corpusforge.beamflags": "['corpusforge.beamflags']",
        "corpusforge.config.beam": "['apache_beam', 'corpusforge.config.beam']",
    }
    assert done.stdout.strip() == expected[module]
