"""The ``corpusforge`` command line -> its flag reference in Markdown (``docs/flags.md``).

    python -m corpusforge.flagdocs            # rewrite docs/flags.md from the commands
    python -m corpusforge.flagdocs --check    # exit 1 when docs/flags.md is out of date

The reference is generated from the command objects the CLI runs (typer's click commands:
each parameter's name, type, default and help), never from a hand-written list, so a flag
cannot be added without appearing here; ``tests/docs`` regenerates it and fails when the
committed file differs. The build commands' options are generated from the settings declared
in the config dataclasses (:mod:`corpusforge.config.settings`), so a setting's help, unit,
choices and default reach this reference from that one declaration.
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

REFERENCE = Path("docs") / "flags.md"
"""Where the reference lives, relative to the repository root."""

HEADER = """\
# Flag reference

Generated from the command line by `python -m corpusforge.flagdocs`; do not edit by hand
(`tests/docs` fails when this file and the commands differ). The same text is
`corpusforge COMMAND --help`.
"""

_TYPE_NAMES: dict[Any, str] = {
    str: "text",
    int: "integer",
    float: "number",
    bool: "flag",
    Path: "path",
    datetime: "date-time",
}


def _root_command() -> Any:
    """The click command of ``corpusforge`` (imports the CLI, not Beam)."""
    import typer

    from corpusforge.cli import app

    return typer.main.get_command(app)


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf command under ``command`` with its path of names, in registration order.

    Args:
        command: a click command or group (anything with ``commands`` is a group).
        path: the names that lead to ``command``.
    """
    children = getattr(command, "commands", None)
    if children is None:
        yield path, command
        return
    for name, child in children.items():
        yield from walk(child, (*path, name))


def _annotation(param: Any) -> Any:
    """The parameter's Python type: typer keeps it on ``type_descriptor``; plain click does
    not, and its ``ParamType`` is used instead."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        return descriptor.annotation
    return getattr(param, "type", None)


def _strip_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return annotation


def type_name(param: Any) -> str:
    """A reader's name for the parameter's type: ``integer``, ``text, repeatable``, ``one of:
    a, b``…

    Args:
        param: a click parameter.
    """
    annotation = _strip_optional(_annotation(param))
    many = ""
    if typing.get_origin(annotation) in (list, tuple):
        args = typing.get_args(annotation)
        annotation = args[0] if args else str
        is_argument = param.param_type_name == "argument"
        many = ", one or more" if is_argument else ", repeatable"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        name = "one of: " + ", ".join(str(m.value) for m in annotation)
    elif annotation in _TYPE_NAMES:
        name = _TYPE_NAMES[annotation]
    else:
        name = str(getattr(annotation, "name", annotation))
    return name + many


def default_text(param: Any) -> str:
    """The parameter's default as a reader would type it; ``required`` or ``–`` (none).

    Args:
        param: a click parameter.
    """
    if param.required:
        return "required"
    value = param.default
    if callable(value):
        return "computed"
    if value is None or value == () or value == []:
        return "–"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, list | tuple):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def flag_text(param: Any) -> str:
    """``--min-chars``, ``--lowercase`` / ``--no-lowercase``, or ``INPUTS`` for an argument."""
    if param.param_type_name == "argument":
        return f"`{param.name.upper()}`"
    names = [*param.opts, *param.secondary_opts]
    return " / ".join(f"`{n}`" for n in names)


def _cell(text: str | None) -> str:
    """One Markdown table cell: one line, no bare ``|``, reST literals as Markdown code, and
    ``<`` outside code written as ``&lt;`` (``score<TAB>s1`` is not an HTML tag)."""
    parts = " ".join((text or "").split()).replace("``", "`").replace("|", "\\|").split("`")
    return "`".join(p if i % 2 else p.replace("<", "&lt;") for i, p in enumerate(parts))


def _summary(command: Any) -> list[str]:
    """The command's help as Markdown paragraphs (its docstring, reST literals converted)."""
    text = (command.help or "").replace("``", "`")
    return ["\n".join(p.strip().splitlines()) for p in text.split("\n\n") if p.strip()]


def _usage(path: tuple[str, ...], command: Any) -> str:
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    words = ["corpusforge", *path, "[OPTIONS]"]
    for arg in arguments:
        words.append(arg.name.upper() + ("..." if arg.nargs == -1 else ""))
    return " ".join(words)


def command_section(path: tuple[str, ...], command: Any) -> str:
    """The Markdown section of one command: usage, summary and a table of its parameters.

    Args:
        path: the command's names below ``corpusforge`` (``("twitter", "build")``).
        command: its click command.
    """
    lines = [f"## corpusforge {' '.join(path)}", "", f"`{_usage(path, command)}`", ""]
    for paragraph in _summary(command):
        lines += [paragraph, ""]
    rows = [
        f"| {flag_text(p)} | {type_name(p)} | {default_text(p)} | {_cell(getattr(p, 'help', ''))} |"
        for p in command.params
        if not getattr(p, "hidden", False) and p.name != "help"
    ]
    if rows:
        lines += ["| flag | type | default | what it sets |", "|---|---|---|---|", *rows, ""]
    return "\n".join(lines)


def entry_points_section() -> str:
    """The Beam entry points' flags: each build's settings, spelled as Beam spells them.

    They come from the same declarations as the build commands' options
    (:func:`corpusforge.config.settings.flags`), so only their names are listed here.
    """
    from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
    from corpusforge.config.settings import flags
    from corpusforge.config.twitter import TwitterConfig

    lines = [
        "## Beam entry points",
        "",
        "Each takes the settings of its build command, spelled with underscores (`--min_chars`),",
        "the inputs as a repeated `--input`, and Beam's own pipeline options (`--runner`,",
        "`--project`, …); what each sets, and its default, is in its build command's table.",
        "",
    ]
    for module, command, config in [
        ("pipelines.twitter_pairs", "twitter build", TwitterConfig),
        ("pipelines.bitext_pairs", "bitext build", BitextConfig),
        ("pipelines.paranmt_pairs", "paranmt build", ParaphraseConfig),
    ]:
        names = []
        for flag in flags(config):
            names.append(f"`--{flag.name}`")
            if flag.value_type is bool:
                names.append(f"`--no_{flag.name}`")
        lines += [f"`python -m {module}` (as `corpusforge {command}`): {', '.join(names)}", ""]
    return "\n".join(lines)


def render(root: Any | None = None) -> str:
    """The whole reference: the build commands first, then every other command, then the
    Beam entry points (when ``root`` is ``corpusforge``'s).

    Args:
        root: the click command to document (default: ``corpusforge``'s).
    """
    commands = list(walk(_root_command() if root is None else root))
    builds = [c for c in commands if c[0][-1:] == ("build",)]
    others = [c for c in commands if c[0][-1:] != ("build",)]
    sections = [command_section(path, command) for path, command in [*builds, *others]]
    if root is None:
        sections.append(entry_points_section())
    return HEADER + "\n" + "\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    """Write the reference to ``docs/flags.md`` under the current folder, or check it.

    Args:
        argv: ``["--check"]`` to compare instead of writing; ``[PATH]`` for another file.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    target = Path(paths[0]) if paths else REFERENCE
    text = render()
    if check:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
        if current != text:
            print(f"{target} is out of date: run python -m corpusforge.flagdocs", file=sys.stderr)
            return 1
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
