"""``docs/flags.md`` is what ``python -m corpusforge.flagdocs`` generates from the commands."""

from __future__ import annotations

from pathlib import Path

import typer

from corpusforge import flagdocs
from corpusforge.cli import app

REPO = Path(__file__).resolve().parents[2]


def test_committed_reference_is_generated_from_the_commands() -> None:
    committed = (REPO / flagdocs.REFERENCE).read_text(encoding="utf-8")
    assert committed == flagdocs.render(), (
        "docs/flags.md is out of date: run PYTHONPATH=src python -m corpusforge.flagdocs"
    )


def test_every_option_of_every_command_is_in_the_reference() -> None:
    text = flagdocs.render()
    for path, command in flagdocs.walk(typer.main.get_command(app)):
        assert f"## corpusforge {' '.join(path)}\n" in text
        for param in command.params:
            for name in param.opts if param.param_type_name == "option" else ():
                assert f"`{name}`" in text, f"{name} of {' '.join(path)} is not documented"


def test_a_row_names_flag_type_default_and_help() -> None:
    text = flagdocs.render()
    twitter = text.split("## corpusforge twitter build\n")[1].split("\n## ")[0]
    row = "| `--min-chars` | integer | `20` | minimum cleaned text length (characters) |"
    assert row in twitter
    assert "| `--lang` | text, repeatable | `en` |" in twitter
    assert "| `INPUTS` | text, one or more | required |" in twitter
    assert "field\\|fasttext" in twitter  # a bare | would split the table cell
    sts = text.split("## corpusforge eval sts\n")[1].split("\n## ")[0]
    assert "'score&lt;TAB>s1&lt;TAB>s2' lines" in sts  # not an HTML tag
    bitext = text.split("## corpusforge bitext build\n")[1].split("\n## ")[0]
    assert "| `--lowercase` / `--no-lowercase` | flag | – |" in bitext
    synth = text.split("## corpusforge synth twitter\n")[1].split("\n## ")[0]
    layouts = "one of: zip-2020, tar-2019, tar-2022, tar-2013, tar-gz"
    assert f"| `--layout` | {layouts} | `zip-2020` |" in synth


def test_the_beam_entry_points_list_their_flags_in_beam_spelling() -> None:
    beam = flagdocs.render().split("## Beam entry points\n")[1]
    twitter = beam.split("`python -m pipelines.twitter_pairs`")[1].split("\n")[0]
    assert "`--min_chars`" in twitter and "`--benchmark_queries`" in twitter
    assert "`--clean`" in twitter and "`--no_lowercase`" not in twitter
    bitext = beam.split("`python -m pipelines.bitext_pairs`")[1].split("\n")[0]
    assert "`--lowercase`, `--no_lowercase`" in bitext


def test_build_commands_come_first() -> None:
    sections = [line for line in flagdocs.render().splitlines() if line.startswith("## ")]
    builds = [s for s in sections if s.endswith(" build")]
    assert sections[: len(builds)] == builds
    assert "## corpusforge twitter build" in builds


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "flags.md"
    stale.write_text("# Flag reference\n", encoding="utf-8")
    assert flagdocs.main(["--check", str(stale)]) == 1
    assert flagdocs.main([str(stale)]) == 0
    assert flagdocs.main(["--check", str(stale)]) == 0


def test_no_option_help_loses_words_to_rich_markup() -> None:
    # `--help` renders help through rich, which takes `[word ...]` for a style tag and drops it
    # (the synth and train defaults once vanished that way)
    from rich.text import Text

    for path, command in flagdocs.walk(typer.main.get_command(app)):
        for param in command.params:
            help_text = getattr(param, "help", None) or ""
            shown = Text.from_markup(help_text).plain
            assert shown == help_text, f"{param.name} of {' '.join(path)}: --help shows {shown!r}"
