"""Extra Beam flags: they reach Beam from every ``… build`` command, on either side of the
inputs, and a mistyped one is one line and exit 2 (issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpusforge.beamflags import UnknownFlag, choose_engine, split_inputs
from corpusforge.builds import twitter_extract
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import TwitterConfig

from .conftest import GOOD, member, write_zip
from .readers import quiet_cli


def test_flags_are_taken_out_of_the_inputs_wherever_they_stand() -> None:
    words = ["--s3_endpoint_url=http://127.0.0.1:1", "a.zip", "--region", "eu", "b.zip"]
    inputs, flags = split_inputs(words, ["--save_main_session"])
    assert inputs == ["a.zip", "b.zip"]
    assert flags == [
        "--s3_endpoint_url=http://127.0.0.1:1",
        "--region",
        "eu",
        "--save_main_session",
    ]


def test_an_unknown_flag_names_the_closest_known_one() -> None:
    with pytest.raises(UnknownFlag, match="--s3_endpoint_url"):
        split_inputs(["a.zip", "--s3_endpoint=http://x"], own=["--out"])
    with pytest.raises(UnknownFlag, match="did you mean --min-chars"):
        split_inputs(["a.zip", "--min-char=3"], own=["--min-chars"])


@pytest.mark.parametrize("command", ["twitter", "bitext", "paranmt"])
def test_a_mistyped_flag_is_one_line_and_exit_2(command: str, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    code, lines = quiet_cli(
        command, "build", str(source), "--direct_num_worker=2", "--out", str(tmp_path / "r")
    )
    assert code == 2
    assert lines == [
        "error: unknown option --direct_num_worker: neither this command's nor a Beam "
        "pipeline option; did you mean --direct_num_workers?"
    ]
    assert not (tmp_path / "r").exists()


@pytest.mark.slow  # two Beam builds of 7 s each: run by .ci/run
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_beam_flag_changes_the_build_from_either_side(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--direct_num_workers=2`` asks Beam for two workers, so the extract runs on Beam
    rather than in the local engine; without the flag it runs locally."""
    archive = write_zip(
        tmp_path / "twitter-stream-2021-01-01.zip", [("2021/01/01/00/00.json.bz2", member(GOOD))]
    )
    engines: list[str] = []
    original = twitter_extract.extract_engine

    def spy(config: TwitterConfig, runner: Runner) -> str:
        engines.append(original(config, runner))
        return engines[-1]

    monkeypatch.setattr(twitter_extract, "extract_engine", spy)
    flag = ["--direct_num_workers=2"]
    common = ["--benchmark-queries", "0", "--out"]
    args = (
        [*flag, archive, *common, str(tmp_path / "r")]
        if where == "before"
        else [archive, *common, str(tmp_path / "r"), *flag]
    )
    code, lines = quiet_cli("twitter", "build", *args)
    assert code == 0, lines
    assert set(engines) == {"beam"}
    engines.clear()
    code, lines = quiet_cli("twitter", "build", archive, *common, str(tmp_path / "local"))
    assert code == 0, lines
    assert set(engines) == {"local"}


@pytest.mark.parametrize(
    ("flags", "runner"),
    [
        ([], "FnApiRunner"),
        (["--project=p"], "FnApiRunner"),
        (["--runner=DataflowRunner", "--project=p"], "DataflowRunner"),
        (["--runner", "PortableRunner", "--job_endpoint=localhost:1"], "PortableRunner"),
    ],
)
def test_every_build_names_the_runner_the_same_way(flags: list[str], runner: str) -> None:
    # One function for the manifests of every source and for the extract's batching.
    assert Runner.parse(flags).class_name == runner


def test_no_flags_name_the_in_process_runner_without_importing_beam() -> None:
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from corpusforge.config.runner import Runner\n"
        "print(Runner.parse([]).class_name, 'apache_beam' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.split() == ["FnApiRunner", "False"], done.stderr[-2000:]


@pytest.mark.parametrize(
    ("flags", "runner"),
    [
        ([], None),
        (["--project=p"], None),
        (["--runner=DataflowRunner"], "DataflowRunner"),
        (["--runner", "prism", "--job_endpoint=x"], "prism"),
        (["--runner=FlinkRunner", "--runner", "PrismRunner"], "PrismRunner"),
        (["--runner"], None),
    ],
)
def test_runner_flag_reads_the_flag_as_written(flags: list[str], runner: str | None) -> None:
    assert Runner.parse(flags).name == runner


@pytest.mark.parametrize(
    ("choice", "paths", "flags", "engine"),
    [
        ("auto", ["a.zip", "out"], [], "local"),
        ("auto", ["a.zip", "out"], ["--runner=PrismRunner"], "beam"),
        ("auto", ["a.zip", "out"], ["--direct_num_workers=2"], "beam"),
        ("auto", ["a.zip", "out"], ["--direct_num_workers=1"], "local"),
        ("auto", ["a.zip", "s3://bucket/out"], [], "beam"),
        ("local", ["a.zip", "s3://bucket/out"], ["--runner=PrismRunner"], "local"),
        ("beam", ["a.zip", "out"], [], "beam"),
    ],
)
def test_every_build_chooses_its_engine_by_one_rule(
    choice: str, paths: list[str], flags: list[str], engine: str
) -> None:
    # Twitter's two stages and the bitext and ParaNMT builds: several direct workers ask for
    # Beam everywhere (the bitext builds once ran locally and dropped the flag).
    assert choose_engine(choice, paths, Runner.parse(flags)) == engine
