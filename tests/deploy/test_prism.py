"""Prism is pinned to the Python SDK's version and found with no flag; never downloaded."""

from __future__ import annotations

import os
import re
import stat
from importlib import metadata
from pathlib import Path

import pytest
from apache_beam.options.pipeline_options import (
    PipelineOptions,
    PrismRunnerOptions,
    StandardOptions,
)

from corpusforge import prism
from corpusforge.config.beam import with_default_runner

REPO = Path(__file__).resolve().parents[2]


def _fake_binary(path: Path) -> Path:
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_go_module_pins_the_beam_version_of_the_python_sdk() -> None:
    go_mod = (REPO / "tools" / "prism" / "go.mod").read_text()
    pinned = re.search(r"^require github\.com/apache/beam/sdks/v2 v(\S+)$", go_mod, re.M)
    assert pinned is not None, "tools/prism/go.mod must require the Beam Go module directly"
    assert pinned.group(1) == metadata.version("apache-beam")
    pyproject = (REPO / "pyproject.toml").read_text()
    spec = re.search(r'"apache-beam==([0-9.]+)\.\*"', pyproject)
    assert spec is not None and pinned.group(1).startswith(spec.group(1) + ".")
    go_sum = (REPO / "tools" / "prism" / "go.sum").read_text()
    assert f"github.com/apache/beam/sdks/v2 v{pinned.group(1)} h1:" in go_sum
    tools = (REPO / "tools" / "prism" / "tools.go").read_text()
    assert '"github.com/apache/beam/sdks/v2/go/cmd/prism"' in tools
    script = (REPO / "scripts" / "prism.sh").read_text()
    builder = (REPO / "scripts" / "go-tool.sh").read_text()  # prism.sh builds through it
    assert 'go-tool.sh" prism Prism' in script and "go install" not in script
    assert "go build" in builder and "go install" not in builder  # go.sum decides, not @latest
    assert "build/tools/$name" in builder and "build/tools/prism" in script


@pytest.mark.parametrize(
    ("given", "runner"),
    [("prism", "PrismRunner"), ("PrismRunner", "PrismRunner"), ("DirectRunner", "DirectRunner")],
)
def test_prism_runners_find_the_binary_with_no_flag(
    given: str, runner: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = _fake_binary(tmp_path / "prism")
    monkeypatch.setenv(prism.PRISM_ENV, str(binary))
    options = with_default_runner(PipelineOptions([f"--runner={given}"]))
    assert options.view_as(StandardOptions).runner == runner
    assert options.view_as(PrismRunnerOptions).prism_location == str(binary)


def test_a_given_prism_location_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(prism.PRISM_ENV, raising=False)
    options = with_default_runner(
        PipelineOptions(["--runner=PrismRunner", "--prism_location=/opt/prism"])
    )
    assert options.view_as(PrismRunnerOptions).prism_location == "/opt/prism"


def test_other_runners_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(prism.PRISM_ENV, "/nonexistent/prism")
    for args, runner in [([], "FnApiRunner"), (["--runner=PortableRunner"], "PortableRunner")]:
        options = with_default_runner(PipelineOptions(args))
        assert options.view_as(StandardOptions).runner == runner
        assert options.view_as(PrismRunnerOptions).prism_location is None


def test_missing_prism_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(prism.PRISM_ENV, str(tmp_path / "absent"))
    monkeypatch.setattr(prism, "built_prism", lambda: tmp_path / "also-absent")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(prism.PrismNotFoundError) as caught:
        with_default_runner(PipelineOptions(["--runner=prism"]))
    message = str(caught.value)
    assert message.startswith("--runner PrismRunner needs the Prism runner")
    assert "bash scripts/prism.sh" in message and prism.PRISM_ENV in message
    assert isinstance(caught.value, FileNotFoundError)  # build commands report it in one line


def test_prism_on_path_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(prism.PRISM_ENV, raising=False)
    monkeypatch.setattr(prism, "built_prism", lambda: tmp_path / "absent")
    binary = _fake_binary(tmp_path / "prism")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin")
    assert prism.locate_prism() == binary
