"""A folder only this user can use -> the drafts of ``s3://`` builds and the reader cache.

    $XDG_CACHE_HOME/corpusforge/drafts      (default ~/.cache/corpusforge/drafts)
    $XDG_CACHE_HOME/corpusforge/releases    (the current versions readers download)

A build reuses what its draft already holds and a reader trusts its cache, so neither may
live where another local user can write (a fixed name under the shared temporary folder
let anyone plant an extract that the next build published). Each folder is created mode
0700 and, before every use, checked: a real directory (not a symlink), owned by this user,
writable by no group and no other user. A folder that fails a check is refused with one line
(:class:`~corpusforge.release.publish.ReleaseError`, exit 2) and never used.
``$CORPUSFORGE_DRAFTS`` and ``$CORPUSFORGE_CACHE`` move the folders and get the same checks.
"""

from __future__ import annotations

import os
import stat

from corpusforge.release.publish import ReleaseError


def base_folder() -> str:
    """``$XDG_CACHE_HOME/corpusforge``, by default ``~/.cache/corpusforge``."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "corpusforge")


def private_folder(variable: str, name: str) -> str:
    """The folder ``$variable``, else ``base_folder()/name``: created mode 0700, checked.

    Args:
        variable: the environment variable that moves the folder (``CORPUSFORGE_DRAFTS``).
        name: its name under :func:`base_folder` otherwise.

    Raises:
        ReleaseError: the folder (or, by default, ``corpusforge`` above it) is a symlink, not
            a folder, owned by another user, or writable by a group or by others.
    """
    given = os.environ.get(variable)
    if given:
        folder = os.path.abspath(given)
        _make(folder, variable)
        return folder
    base = base_folder()
    os.makedirs(os.path.dirname(base), exist_ok=True)
    _make(base, "the corpusforge cache")
    folder = os.path.join(base, name)
    _make(folder, "the corpusforge cache")
    return folder


def _make(folder: str, what: str) -> None:
    """Create ``folder`` mode 0700 if absent (its parents as usual), then check it."""
    if not os.path.lexists(folder):
        os.makedirs(os.path.dirname(folder), exist_ok=True)
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass  # made meanwhile: checked below like any other
        except OSError as exc:
            raise ReleaseError(f"{folder} ({what}): cannot create it: {exc.strerror}") from None
    problem = unsafe(folder)
    if problem:
        raise ReleaseError(
            f"{folder} ({what}): {problem}; refusing to use it (it must be a folder only you "
            "can write: remove it, or set another place)"
        )


def unsafe(folder: str) -> str | None:
    """Why ``folder`` is not private to this user, or None when it is.

    Args:
        folder: an existing path.
    """
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder"
    if info.st_uid != os.getuid():
        return f"owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None
