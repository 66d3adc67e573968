"""Settings declared once, in the fields of the frozen configs -> every surface that sets them.

A setting is a field of a frozen config dataclass (:class:`~corpusforge.config.twitter.
TwitterConfig`, :class:`~corpusforge.config.bitext.BitextConfig`, …) declared with
:func:`setting`: its name, type and default are the field's, its help, unit, choices, flag
name and repetition are the field's metadata. A field declared with :func:`group` holds a
nested config (``limits``, ``benchmarks``, ``filters``) whose fields are settings too. From
that one declaration come:

- the ``corpusforge … build`` options (:func:`corpusforge.commands.common.with_settings`,
  spelled ``--min-chars``), and through them ``docs/flags.md`` (:mod:`corpusforge.flagdocs`);
- each Beam entry point's flags (:func:`add_beam_flags`, spelled ``--min_chars``);
- the config from either command line's values (:func:`from_flags`).

A new flag is one field here and nothing else; its value is checked in the config's
``__post_init__``, with a :class:`~corpusforge.config.flags.FlagError` naming the flag
(:func:`flag_name` gives a field's).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from corpusforge.config.flags import FlagError

C = TypeVar("C")

SETTING = "corpusforge.setting"
"""The key of a field's :class:`Setting` in its metadata."""


@dataclass(frozen=True)
class Setting:
    """What a field's declaration says besides its name, type and default.

    Attributes:
        help: what it sets, in a few words, without its default (each surface shows that).
        flag: the flag's name in snake case where it differs from the field's
            (``langs`` -> ``lang``).
        unit: the unit of the value (``bytes``, ``characters``), shown after the help.
        choices: the values accepted, where they are few.
        repeatable: the flag may be given several times; the field is a tuple.
        required: the flag must be given.
        positional: ``corpusforge`` takes it as the command's arguments, not as an option.
        zero_is_none: the flag's 0 is the field's ``None`` (no limit).
        group: the field holds a nested config whose fields are settings.
    """

    help: str = ""
    flag: str | None = None
    unit: str | None = None
    choices: tuple[str, ...] | None = None
    repeatable: bool = False
    required: bool = False
    positional: bool = False
    zero_is_none: bool = False
    group: bool = False


def setting(
    default: Any = dataclasses.MISSING,
    *,
    help: str,
    flag: str | None = None,
    unit: str | None = None,
    choices: tuple[str, ...] | None = None,
    repeatable: bool = False,
    positional: bool = False,
    zero_is_none: bool = False,
) -> Any:
    """A config field that is a setting: a ``dataclasses.field`` with its :class:`Setting`.

    Args:
        default: the field's default; none makes the flag required.
        help: what it sets (see :class:`Setting`).
        flag: the flag's name in snake case where it differs from the field's.
        unit: the unit of the value.
        choices: the values accepted.
        repeatable: the flag may be repeated; the field is a tuple (``default`` one too).
        positional: ``corpusforge`` takes it as the command's arguments.
        zero_is_none: the flag's 0 is the field's ``None``.
    """
    meta = Setting(
        help=help,
        flag=flag,
        unit=unit,
        choices=choices,
        repeatable=repeatable,
        required=default is dataclasses.MISSING,
        positional=positional,
        zero_is_none=zero_is_none,
    )
    return dataclasses.field(default=default, metadata={SETTING: meta})


def group(config: Callable[[], Any]) -> Any:
    """A config field holding a nested config (``limits``, ``benchmarks``) of settings.

    Args:
        config: the nested config's class; its defaults are the field's default.
    """
    return dataclasses.field(default_factory=config, metadata={SETTING: Setting(group=True)})


@dataclass(frozen=True)
class Flag:
    """One setting as the command lines see it.

    Attributes:
        name: the flag in snake case (``min_chars``); ``--min-chars`` on ``corpusforge``,
            ``--min_chars`` on the Beam entry points.
        path: the field's attribute path in the config (``("limits", "max_line_bytes")``).
        annotation: the field's type (``int``, ``str | None``, ``tuple[str, ...]``).
        default: the field's default (``dataclasses.MISSING`` when required).
        setting: the rest of its declaration.
    """

    name: str
    path: tuple[str, ...]
    annotation: Any
    default: Any
    setting: Setting

    @property
    def value_type(self) -> type:
        """The type of one value: ``int`` for ``int | None``, ``str`` for ``tuple[str, ...]``."""
        annotation = _strip_none(self.annotation)
        if typing.get_origin(annotation) is tuple:
            annotation = typing.get_args(annotation)[0]
        value: type = _strip_none(annotation)
        return value

    @property
    def optional(self) -> bool:
        """The field may be ``None`` (and ``None`` is not spelled 0)."""
        return _strip_none(self.annotation) is not self.annotation and not self.setting.zero_is_none

    @property
    def flag_default(self) -> Any:
        """The default as the flag spells it: 0 for a ``None`` spelled 0, a list for a tuple."""
        if self.default is dataclasses.MISSING:
            return None
        if self.default is None and self.setting.zero_is_none:
            return self.value_type(0)
        if isinstance(self.default, tuple):
            return list(self.default)
        return self.default

    def help_text(self) -> str:
        """The help with its unit and choices: ``minimum cleaned text length (characters)``,
        ``cleaning profile (paper|ct)`` (not in brackets: ``--help`` renders it with rich,
        which takes ``[paper|ct]`` for a style tag and drops it)."""
        text = self.setting.help
        if self.setting.unit:
            text += f" ({self.setting.unit})"
        if self.setting.choices:
            text += f" ({'|'.join(self.setting.choices)})"
        return text

    def field_value(self, value: Any) -> Any:
        """The field's value from the flag's (``None`` or absent: the default).

        Raises:
            FlagError: a required flag has no value.
        """
        if value is None or (self.setting.repeatable and not value):
            if self.default is dataclasses.MISSING:
                raise FlagError(self.name, "is required")
            return self.default
        if self.setting.repeatable:
            return tuple(value)
        if self.setting.zero_is_none and not value:
            return None
        return value


def _strip_none(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return annotation


_FLAGS: dict[type, tuple[Flag, ...]] = {}
"""The flags of each config class, found once."""


def _setting_of(field: dataclasses.Field[Any]) -> Setting | None:
    value = field.metadata.get(SETTING)
    return value if isinstance(value, Setting) else None


def _flag(field: dataclasses.Field[Any], annotation: Any, meta: Setting) -> Flag:
    """The flag of a config's own field (its path is the field's name)."""
    return Flag(meta.flag or field.name, (field.name,), annotation, field.default, meta)


def flags(config: type) -> tuple[Flag, ...]:
    """Every setting of ``config`` and of its groups, in declaration order.

    Args:
        config: a frozen config dataclass whose fields are declared with :func:`setting`
            or :func:`group`.
    """
    known = _FLAGS.get(config)
    if known is not None:
        return known
    hints = typing.get_type_hints(config)
    found: list[Flag] = []
    for field in dataclasses.fields(config):
        meta = _setting_of(field)
        if meta is None:
            continue
        annotation = hints[field.name]
        if meta.group:
            found += [dataclasses.replace(f, path=(field.name, *f.path)) for f in flags(annotation)]
            continue
        found.append(_flag(field, annotation, meta))
    names = [f.name for f in found]
    if len(set(names)) < len(names):
        raise TypeError(f"{config.__name__} declares a flag twice: {sorted(names)}")
    _FLAGS[config] = tuple(found)
    return _FLAGS[config]


def flag_name(config: type, field: str) -> str:
    """The flag of ``config``'s field ``field`` (``"langs"`` -> ``"lang"``), for a
    :class:`~corpusforge.config.flags.FlagError`.

    Args:
        config: a config class declared with :func:`setting`.
        field: the name of one of its own fields (not of a group's).
    """
    for f in dataclasses.fields(config):
        if f.name == field:
            meta = _setting_of(f)
            return (meta.flag if meta else None) or field
    raise AttributeError(f"{config.__name__} has no field {field!r}")


def check_choices(config: Any) -> None:
    """Refuse a setting's value outside its declared choices, naming its flag.

    Args:
        config: a config instance; call it from its ``__post_init__``.

    Raises:
        FlagError: ``--clean must be one of paper, ct, got 'loud'``.
    """
    for field in dataclasses.fields(config):
        meta = _setting_of(field)
        if meta is None or not meta.choices:
            continue
        value = getattr(config, field.name)
        if value is not None and value not in meta.choices:
            raise FlagError(
                meta.flag or field.name,
                f"must be one of {', '.join(meta.choices)}, got {value!r}",
            )


def from_flags(config: type[C], values: Mapping[str, Any]) -> C:
    """``config`` with the flags' values (by flag name); absent or ``None`` keeps a default.

    Args:
        config: the config class.
        values: flag name -> value, as either command line parsed it.

    Raises:
        FlagError: a required flag has no value, or the config refuses a value.
    """
    hints = typing.get_type_hints(config)
    kwargs: dict[str, Any] = {}
    for field in dataclasses.fields(config):  # type: ignore[arg-type]
        meta = _setting_of(field)
        if meta is None:
            continue
        if meta.group:
            kwargs[field.name] = from_flags(hints[field.name], values)
            continue
        flag = _flag(field, hints[field.name], meta)
        kwargs[field.name] = flag.field_value(values.get(flag.name))
    return config(**kwargs)


def add_beam_flags(parser: Any, config: type) -> None:
    """Declare ``config``'s settings on a Beam ``PipelineOptions`` parser (``--min_chars``).

    Each flag's ``dest`` is its name; a repeatable flag appends, a ``bool | None`` one is a
    ``--name``/``--no_name`` pair. Values are checked by the config, except choices, which
    argparse refuses as Beam does.

    Args:
        parser: the argparse parser Beam passes to ``_add_argparse_args``.
        config: the config class whose settings these are.
    """
    for flag in flags(config):
        option = f"--{flag.name}"
        default = flag.flag_default
        notes = [flag.setting.unit] if flag.setting.unit else []
        if flag.setting.repeatable:
            notes.append("repeat for several")
            default = None  # appended to: the config's default stands when none is given
        if flag.flag_default not in (None, []):
            shown = flag.flag_default
            shown = ", ".join(map(str, shown)) if isinstance(shown, list) else shown
            notes.append(f"default: {shown}")
        help_text = flag.setting.help + (f" ({'; '.join(notes)})" if notes else "")
        if flag.setting.repeatable:
            parser.add_argument(
                option, dest=flag.name, action="append", default=None, help=help_text
            )
        elif flag.value_type is bool:
            parser.add_argument(
                option,
                dest=flag.name,
                action="store_const",
                const=True,
                default=default,
                help=help_text,
            )
            parser.add_argument(
                f"--no_{flag.name}",
                dest=flag.name,
                action="store_const",
                const=False,
                help=f"the opposite of {option}",
            )
        else:
            parser.add_argument(
                option,
                dest=flag.name,
                type=None if flag.value_type is str else flag.value_type,
                choices=flag.setting.choices,
                default=default,
                help=help_text,
            )
