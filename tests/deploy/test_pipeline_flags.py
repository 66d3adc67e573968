"""Each Beam entry point parses its own flags only (issue 17).

Beam gathers the flags of every direct ``PipelineOptions`` subclass into one parser, so the
three pipelines once shared one namespace and ``python -m pipelines.bitext_pairs --clean
none`` failed on the Twitter pipeline's ``--clean`` choices. The modules of all three are
imported here together, as in one process that runs them all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

import pipelines.bitext_pairs
import pipelines.paranmt_pairs
import pipelines.twitter_pairs
from corpusforge.beamflags import UnknownFlag
from corpusforge.config.beam import BitextPairsOptions, ParanmtPairsOptions, TwitterPairsOptions
from corpusforge.config.runner import Runner

BEAM = ["--runner", "DataflowRunner", "--project=p", "--direct_num_workers", "2"]


def test_twitter_flags_parse_and_leave_beam_flags_to_beam() -> None:
    argv = ["--input=a.zip", "--input", "b.zip", "--out=o", "--clean", "ct", "--lang=es", *BEAM]
    options, runner = TwitterPairsOptions.split(argv)
    config = options.to_config()
    assert (config.inputs, config.out, config.clean, config.langs) == (
        ("a.zip", "b.zip"),
        "o",
        "ct",
        ("es",),
    )
    assert runner == Runner.parse(BEAM)
    assert runner.beam_args() == ["--runner=DataflowRunner", *BEAM[2:]]
    assert TwitterPairsOptions.split(["--input=a", "--out=o"])[0].to_config().clean == "paper"
    with pytest.raises(SystemExit):  # none is a bitext profile, not a Twitter one
        TwitterPairsOptions(["--input=a", "--out=o", "--clean", "none"])


def test_bitext_flags_parse_clean_none() -> None:
    argv = ["--input=a.de", "--input=a.en", "--out=o", "--clean", "none", "--seed=3", *BEAM]
    options, runner = BitextPairsOptions.split(argv)
    config = options.to_config()
    assert (config.inputs, config.clean, config.seed, config.profile) == (
        ("a.de", "a.en"),
        "none",
        3,
        None,
    )
    assert runner == Runner.parse(BEAM)
    assert runner.beam_args() == ["--runner=DataflowRunner", *BEAM[2:]]
    assert BitextPairsOptions(["--input=a", "--out=o", "--clean=ct"]).to_config().clean == "ct"
    # a Twitter flag is no bitext flag, nor Beam's: refused, not left to Beam to drop
    with pytest.raises(UnknownFlag, match="unknown option --lang"):
        BitextPairsOptions.split(["--input=a", "--out=o", "--lang=en"])


def test_paranmt_flags_parse() -> None:
    argv = ["--input=p.txt.gz", "--out=o", "--clean", "none", "--min_score=0.5", *BEAM]
    options, runner = ParanmtPairsOptions.split(argv)
    config = options.to_config()
    assert (config.inputs, config.clean, config.filters.min_score, config.dataset) == (
        ("p.txt.gz",),
        "none",
        0.5,
        "paranmt",
    )
    assert runner == Runner.parse(BEAM)
    assert runner.beam_args() == ["--runner=DataflowRunner", *BEAM[2:]]
    lowered = ParanmtPairsOptions(["--input=p", "--out=o", "--clean=paper", "--lowercase"])
    assert lowered.to_config().lowercase is True


def test_pipeline_flags_stay_out_of_beams_shared_parser() -> None:
    shared = PipelineOptions(["--clean", "none", "--runner=DataflowRunner"]).get_all_options()
    assert shared["runner"] == "DataflowRunner"
    assert not {"clean", "inputs", "min_score", "max_pairs_per_lang"} & shared.keys()


def test_bitext_entry_point_runs_with_clean_none(tmp_path: Path) -> None:
    de = tmp_path / "tiny.de-en.de"
    en = tmp_path / "tiny.de-en.en"
    de.write_text("Ich habe heute keine Zeit für das Treffen.\n", encoding="utf-8")
    en.write_text("I have no time for the meeting today.\n", encoding="utf-8")
    out = tmp_path / "release"
    argv = [f"--input={de}", f"--input={en}", f"--out={out}", "--clean", "none"]
    assert pipelines.bitext_pairs.run(argv) == 0
    assert (out / "manifest.json").is_file()
    assert pipelines.paranmt_pairs.run(["--out=o"]) == 2  # --input is required
    assert pipelines.twitter_pairs.run(["--out=o"]) == 2


@pytest.mark.parametrize(
    ("entry", "flag", "meant"),
    [
        (pipelines.twitter_pairs.run, "--flink_mastr=localhost:8081", "--flink_master"),
        (pipelines.bitext_pairs.run, "--runer=FlinkRunner", "--runner"),
        (pipelines.paranmt_pairs.run, "--s3_endpoint_ur=http://x", "--s3_endpoint_url"),
    ],
)
def test_an_unknown_flag_is_refused_not_dropped(
    entry: object, flag: str, meant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt runner flag ends the entry point with one line naming it (exit 2), as the
    build commands do, where Beam alone drops it with a warning and runs without it."""
    argv = [f"--input={tmp_path / 'in'}", f"--out={tmp_path / 'out'}", flag]
    assert entry(argv) == 2  # type: ignore[operator]
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: unknown option {flag.partition('=')[0]}: neither this command's nor a Beam "
        f"pipeline option; did you mean {meant}?"
    ]
    assert not (tmp_path / "out").exists()
