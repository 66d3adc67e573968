"""Each setting is declared once, in its config's field; every surface agrees with it.

The ``corpusforge … build`` options, the Beam entry points' flags and the configs they
build are generated from the declarations (:mod:`corpusforge.config.settings`), so the
same flags, with the same defaults, reach the same config from either command line.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import pytest
import typer

from corpusforge.cli import app
from corpusforge.config.beam import (
    BitextPairsOptions,
    ParanmtPairsOptions,
    PipelineFlags,
    TwitterPairsOptions,
)
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.config.flags import BeamFlagError, FlagError
from corpusforge.config.settings import SETTING, flag_name, flags, from_flags
from corpusforge.config.twitter import TwitterConfig
from corpusforge.pairing.filters import LanguageFilterConfig

BUILDS: list[tuple[str, type, type[PipelineFlags]]] = [
    ("twitter", TwitterConfig, TwitterPairsOptions),
    ("bitext", BitextConfig, BitextPairsOptions),
    ("paranmt", ParaphraseConfig, ParanmtPairsOptions),
]
COMMAND_OWN = {"--runner", "--quiet"}


def _command(name: str) -> Any:
    return typer.main.get_command(app).commands[name].commands["build"]  # type: ignore[attr-defined]


def _dashed(name: str) -> str:
    return "--" + name.replace("_", "-")


def _fields(config: type) -> list[dataclasses.Field[Any]]:
    found = []
    for field in dataclasses.fields(config):
        found.append(field)
        if field.metadata[SETTING].group:
            found += _fields(field.default_factory)  # type: ignore[arg-type]
    return found


@pytest.mark.parametrize(("command", "config", "options"), BUILDS)
def test_every_field_is_a_declared_setting(command: str, config: type, options: type) -> None:
    for field in _fields(config):
        setting = field.metadata.get(SETTING)
        assert setting is not None, f"{config.__name__}.{field.name} is not declared"
        assert setting.group or setting.help, f"{field.name} has no help"


@pytest.mark.parametrize(("command", "config", "options"), BUILDS)
def test_the_command_and_the_pipeline_take_the_same_flags(
    command: str, config: type, options: type[PipelineFlags]
) -> None:
    names = [f.name for f in flags(config)]
    cli = {
        opt
        for p in _command(command).params
        for opt in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])]
        if opt.startswith("--")
    }
    negated = {"--no-" + _dashed(f.name)[2:] for f in flags(config) if f.value_type is bool}
    positional = {_dashed(f.name) for f in flags(config) if f.setting.positional}
    assert cli == ({_dashed(n) for n in names} - positional) | negated | COMMAND_OWN
    parser = argparse.ArgumentParser()
    options._add_argparse_args(parser)
    beam = {a.dest for a in parser._actions if a.dest != "help"}
    assert beam == set(names)


@pytest.mark.parametrize(("command", "config", "options"), BUILDS)
def test_defaults_are_the_same_from_either_command_line(
    command: str, config: type, options: type[PipelineFlags]
) -> None:
    direct = config(inputs=("a",), out="o")
    beam = options(["--input=a", "--out=o"]).to_config()
    cli_defaults = {
        p.name: p.default for p in _command(command).params if p.name not in ("runner", "quiet")
    }
    cli = from_flags(config, {**cli_defaults, "input": ["a"], "out": "o"})
    assert beam == direct
    assert cli == direct
    assert cli.to_json() == direct.to_json()


def test_flags_keep_their_spelling_on_each_command_line() -> None:
    twitter = {p.name: p for p in _command("twitter").params}
    assert twitter["min_chars"].opts == ["--min-chars"]
    assert twitter["lang"].default == ["en"] and twitter["lang"].multiple
    assert twitter["benchmark_queries"].default == 5000
    bitext = {p.name: p for p in _command("bitext").params}
    assert bitext["lowercase"].opts == ["--lowercase"]
    assert bitext["lowercase"].secondary_opts == ["--no-lowercase"]
    config = TwitterPairsOptions(["--input=a", "--out=o", "--min_chars=5", "--lang=es"])
    assert (config.to_config().min_chars, config.to_config().langs) == (5, ("es",))
    paranmt = ParanmtPairsOptions(["--input=a", "--out=o", "--max_overlap=0.5"]).to_config()
    assert paranmt.filters.max_trigram_overlap == 0.5


def test_a_zero_flag_is_no_limit() -> None:
    config = BitextPairsOptions(
        ["--input=a", "--out=o", "--max_pairs_per_lang=0", "--max_length_ratio=0"]
    ).to_config()
    assert (config.max_pairs_per_lang, config.filters.max_length_ratio) == (None, None)


def test_errors_name_the_flag_in_each_spelling() -> None:
    with pytest.raises(FlagError, match=r"^--min-chars must be >= 0, got -3$"):
        TwitterConfig(inputs=("a",), out="o", min_chars=-3)
    with pytest.raises(BeamFlagError, match=r"^--min_chars must be >= 0, got -3$"):
        TwitterPairsOptions(["--input=a", "--out=o", "--min_chars=-3"]).to_config()
    with pytest.raises(BeamFlagError, match=r"^--min_lid_confidence must be in"):
        ParanmtPairsOptions(["--input=a", "--out=o", "--min_lid_confidence=2"]).to_config()
    with pytest.raises(BeamFlagError, match=r"^--out is required$"):
        BitextPairsOptions(["--input=a"]).to_config()
    assert flag_name(TwitterConfig, "langs") == "lang"
    assert flag_name(LanguageFilterConfig, "min_confidence") == "min_lid_confidence"


def test_the_clean_profile_is_resolved_once_into_the_config() -> None:
    twitter = TwitterConfig(inputs=("a",), out="o", clean="ct")
    assert twitter.profile is twitter.profile and twitter.profile.name == "ct"
    kept = BitextConfig(inputs=("a",), out="o", clean="paper", lowercase=False)
    assert kept.profile is not None and kept.profile.lowercase is False
    assert not kept.lowercase_only
    lowered = ParaphraseConfig(inputs=("a",), out="o", lowercase=True)
    assert lowered.profile is None and lowered.lowercase_only
    assert "profile" not in lowered.to_json()  # the manifest records clean_profile only
