"""Where Beam's Prism runner binary is: built once by ``scripts/prism.sh``, never downloaded.

Prism is Beam's portable runner, a Go program. ``tools/prism/go.mod`` pins it to the version
of the ``apache-beam`` Python SDK in ``pyproject.toml``; ``bash scripts/prism.sh`` builds it
into ``build/tools/prism`` (Go from the Go module proxy, about two minutes on two cores).
``--runner prism``, ``--runner PrismRunner`` and ``--runner DirectRunner`` (which prefers
Prism) find it with no extra flag; without it Beam itself would try to download a release
binary from GitHub at run time.

    bash scripts/prism.sh
    corpusforge twitter build archive.zip --out release/ --runner prism
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PRISM_ENV = "CORPUSFORGE_PRISM"
RUNNERS_USING_PRISM = ("prismrunner", "directrunner")
_REPO = Path(__file__).resolve().parents[2]


class PrismNotFoundError(FileNotFoundError):
    """No Prism binary was built or given."""


def built_prism() -> Path:
    """Where ``scripts/prism.sh`` puts the binary of this checkout."""
    return _REPO / "build" / "tools" / "prism"


def locate_prism(wanted_by: str = "Prism") -> Path:
    """The Prism binary: ``$CORPUSFORGE_PRISM`` where set (and nothing else then), this
    checkout's build, or ``prism`` on PATH.

    Args:
        wanted_by: what asks for it, for the message (``--runner PrismRunner``).

    Raises:
        PrismNotFoundError: none of them exists, or ``$CORPUSFORGE_PRISM`` names no
            executable; the message says how to build one.
    """
    given = os.environ.get(PRISM_ENV)
    if given:  # the user's choice: never passed over for another binary
        path = Path(given)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise PrismNotFoundError(
            f"{wanted_by} needs the Prism runner, and ${PRISM_ENV} names {given}, which is "
            "not an executable file: point it at the binary `bash scripts/prism.sh` builds "
            "(build/tools/prism), or unset it"
        )
    candidates: list[Path] = [built_prism()]
    on_path = shutil.which("prism")
    if on_path:
        candidates.append(Path(on_path))
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise PrismNotFoundError(
        f"{wanted_by} needs the Prism runner, which is not built here: run "
        f"`bash scripts/prism.sh` (needs Go >= 1.26, https://go.dev/dl), set ${PRISM_ENV}, "
        "or pass --prism_location=PATH"
    )


def uses_prism(runner: str | None) -> bool:
    """Whether Beam runs ``runner`` on Prism (``prism``, ``PrismRunner``, ``DirectRunner``)."""
    name = (runner or "").rsplit(".", 1)[-1].lower()
    return name in ("prism", *RUNNERS_USING_PRISM)
