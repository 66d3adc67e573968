"""A build's output -> the current release, in one step: the draft, the lock, the commit.

    store = open_store("release/")          # checks --out (corpusforge.release.stores)
    with store.locked():                     # one build at a time per release
        draft = store.begin(rebuilt=("manifest.json", "pairs"))
        ...                                  # every file of the new release goes under draft
        store.commit()                       # the draft becomes the release, atomically

A reader of the release sees the complete old release or the complete new one, never a mix,
whenever the build is killed. Two backends implement :class:`ReleaseStore`:

- :class:`LocalFolder` (a local path ``DIR``): the build writes a sibling draft folder
  ``.DIR.draft`` (beside the folder ``DIR`` links to, if it is a symbolic link: the link is
  kept), holding a lock file ``.DIR.lock`` (``flock``; it names the holder's pid,
  host and start time, and the kernel releases it when the holder dies, so a killed build's
  lock is taken over). The commit swaps the draft and ``DIR`` in one system call
  (``renameat2(RENAME_EXCHANGE)`` on Linux, ``renamex_np(RENAME_SWAP)`` on macOS), renames
  the old release to ``.DIR.old`` and deletes it. Where no swap call exists (another OS, a
  file system that refuses it), the commit is two renames, ``DIR`` -> ``.DIR.old`` then
  draft -> ``DIR``; between them ``DIR`` is absent, and :func:`current_release` (used by
  ``validate``) and the next build fall back to ``.DIR.old``, which is the old release whole.
  What a killed build finished (a Twitter archive's extract) stays in the draft and is
  reused by the next build; entries of the release the build does not rebuild (extracts,
  files a user added) are carried into the draft as hard links.
- :class:`~corpusforge.release.objectstore.ObjectStore` (``s3://``, ``gs://``): object
  stores have no rename, so the draft (a local folder) is uploaded as an immutable version
  ``OUT/versions/<id>/`` and committed by one small pointer object, ``OUT/_current.json``,
  written last with a conditional write, as Delta and Iceberg tables commit.
- :class:`InPlace` (other URIs, such as ``hdfs://``): the build writes into the release
  itself; no lock, the commit only marks the end.

A release's layout is the same either way: ``manifest.json``, ``README.md``, ``pairs/``...
at its root, and every path inside it relative to it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import json
import logging
import os
import shutil
import socket
import sys
import time
from collections.abc import Collection, Iterator
from typing import Protocol

from corpusforge.release.errors import ReleaseError, ReleaseLocked
from corpusforge.sources.uris import is_uri

log = logging.getLogger(__name__)

RELEASE_ENTRIES = frozenset(
    {
        "manifest.json",
        "README.md",
        "card",
        "pairs",
        "benchmarks",
        "tweets",
        "dead_letter",
        "_staging",
    }
)
"""Top-level names a release (or a build killed before this module existed) may hold: an
existing folder with anything else and no ``manifest.json`` is not replaced by a build."""


class ReleaseStore(Protocol):
    """Where a build writes, and how its output becomes the current release.

    Attributes:
        target: the release as the user named it (``--out``).
        draft: the folder the build writes its files into.
    """

    target: str
    draft: str

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold the release for this build; raises :class:`ReleaseLocked` if another does."""
        ...

    def begin(self, rebuilt: Collection[str]) -> str:
        """Prepare the draft and return it.

        Args:
            rebuilt: top-level names the build writes itself (they start empty); everything
                else of the current release is kept in the new one.
        """
        ...

    def commit(self) -> None:
        """Make the draft the current release, in one step."""
        ...

    def abandon(self) -> None:
        """Drop the draft: the build publishes nothing (the current release stays)."""
        ...


def release_folder(out: str) -> str:
    """The folder a local release ``out`` is: ``out`` made absolute, or, where ``out`` is a
    symbolic link, the folder it points to, whose draft and swap the build makes (the link
    stays a link, to the new release).

    Args:
        out: the release (``--out``), a local path.
    """
    path = os.path.abspath(out)
    return os.path.realpath(path) if os.path.islink(path) else path


def sidecar(out: str, suffix: str) -> str:
    """``.NAME.<suffix>`` next to the release ``out`` (a local path; next to the folder it
    points to when it is a symbolic link)."""
    parent, name = os.path.split(release_folder(out))
    return os.path.join(parent, f".{name}.{suffix}")


def sidecars(out: str) -> list[str]:
    """The draft, lock and old-release paths of a local release (never inputs)."""
    if is_uri(out):
        return []
    return [sidecar(out, s) for s in ("draft", "lock", "old")]


def current_release(out: str) -> str:
    """The folder holding the current release ``out``: ``out`` itself, or, in the instant of
    a two-rename commit (or after a kill in it), the old release at ``.NAME.old``."""
    if is_uri(out) or os.path.exists(out):
        return out
    old = sidecar(out, "old")
    return old if os.path.isfile(os.path.join(old, "manifest.json")) else out


class InPlace:
    """A release on object storage, written in place (today's behaviour; see issue 22)."""

    def __init__(self, out: str) -> None:
        self.target = out
        self.draft = out

    def locked(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def begin(self, rebuilt: Collection[str]) -> str:
        return self.draft

    def commit(self) -> None:
        return None

    def abandon(self) -> None:
        return None


class LocalFolder:
    """A release in a local folder, replaced by swapping in a sibling draft folder.

    Args:
        out: the release folder (``--out``); its parent is created if needed.

    Raises:
        ReleaseError: ``out`` is not a folder, or holds something that is not a release.
    """

    def __init__(self, out: str) -> None:
        self.target = release_folder(out)
        self.draft = sidecar(out, "draft")
        self.lock_path = sidecar(out, "lock")
        self.old = sidecar(out, "old")
        self._given = out
        if os.path.lexists(self.target) and not os.path.isdir(self.target):
            raise ReleaseError(f"--out {out}: exists and is not a folder")
        cwd = os.getcwd()
        if cwd == self.target or cwd.startswith(self.target + os.sep):
            raise ReleaseError(
                f"--out {out}: holds the working directory, which the swap would move; "
                "run the build from outside it"
            )
        if os.path.isdir(self.target) and not _is_release(self.target):
            raise ReleaseError(
                f"--out {out}: a folder that holds no release (no manifest.json); "
                "give a new or empty folder"
            )

    # -- the lock --------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        fd = self._acquire()
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path)
            os.close(fd)

    def _acquire(self) -> int:
        parent = os.path.dirname(self.target)
        try:
            os.makedirs(parent, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ReleaseError(f"--out {self._given}: a folder above it is a file") from None
        except OSError as exc:
            raise ReleaseError(
                f"--out {self._given}: cannot create {parent}: {exc.strerror}"
            ) from None
        while True:
            try:
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise ReleaseError(
                    f"--out {self._given}: cannot write in {parent}: {exc.strerror}"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise ReleaseLocked(
                    f"--out {self._given}: another build is writing it ({holder}); "
                    f"wait for it, or remove {self.lock_path} if that build is gone"
                ) from None
            try:  # the file may have been unlinked by its last holder as we opened it
                same = os.fstat(fd).st_ino == os.stat(self.lock_path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = _read_holder(fd)
        if previous:
            log.warning(
                "taking over the lock of a build that ended without releasing it (%s)", previous
            )
        me = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join(sys.argv[:3]),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode() + b"\n", 0)
        return fd

    # -- the draft and the commit ----------------------------------------------------

    def begin(self, rebuilt: Collection[str]) -> str:
        self._recover()
        os.makedirs(self.draft, exist_ok=True)
        for name in os.listdir(self.draft):
            if name in rebuilt or name.endswith(".tmp"):
                _remove(os.path.join(self.draft, name))
        if os.path.isdir(self.target):
            for name in sorted(os.listdir(self.target)):
                if name not in rebuilt:
                    _carry(os.path.join(self.target, name), os.path.join(self.draft, name))
        return self.draft

    def _recover(self) -> None:
        """Finish what a killed commit left: the old release back in place, trash gone."""
        if not os.path.exists(self.target) and os.path.isdir(self.old):
            os.rename(self.old, self.target)
        if os.path.lexists(self.old):
            _remove(self.old)

    def commit(self) -> None:
        if not os.path.exists(self.target):
            os.rename(self.draft, self.target)
        elif exchange(self.draft, self.target):
            os.rename(self.draft, self.old)
        else:  # two renames; current_release() and _recover() cover the gap
            os.rename(self.target, self.old)
            os.rename(self.draft, self.target)
        _fsync_dir(os.path.dirname(self.target))
        if os.path.lexists(self.old):
            _remove(self.old)

    def abandon(self) -> None:
        if os.path.lexists(self.draft):
            _remove(self.draft)


def _is_release(folder: str) -> bool:
    names = set(os.listdir(folder))
    return "manifest.json" in names or names <= RELEASE_ENTRIES


def _read_holder(fd: int) -> str:
    try:
        raw = os.pread(fd, 4096, 0)
        doc = json.loads(raw) if raw.strip() else None
    except (OSError, ValueError):
        return "holder unknown"
    if not isinstance(doc, dict):
        return ""
    return f"pid {doc.get('pid')} on {doc.get('host')} since {doc.get('started')}"


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _carry(source: str, target: str) -> None:
    """``source`` into the draft as hard links (a copy where links fail); what the draft
    already holds at the first two levels (a killed build's finished work) is kept."""
    if not os.path.isdir(source):
        if not os.path.lexists(target):
            _link(source, target)
        return
    if not os.path.exists(target):
        shutil.copytree(source, target, copy_function=_link, symlinks=True)
        return
    for name in sorted(os.listdir(source)):
        child = os.path.join(target, name)
        if not os.path.lexists(child):
            src = os.path.join(source, name)
            if os.path.isdir(src):
                shutil.copytree(src, child, copy_function=_link, symlinks=True)
            else:
                _link(src, child)


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS sys/stdio.h


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


def exchange(a: str, b: str) -> bool:
    """Swap the paths ``a`` and ``b`` in one system call; False where none is available.

    Raises:
        OSError: the call exists and failed for another reason than being unsupported.
    """
    libc = _libc()
    if libc is None:
        return False
    pa, pb = os.fsencode(a), os.fsencode(b)
    if sys.platform.startswith("linux"):
        fn = getattr(libc, "renameat2", None)
        if fn is None:  # glibc before 2.28
            return False
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        rc = fn(_AT_FDCWD, pa, _AT_FDCWD, pb, _RENAME_EXCHANGE)
    elif sys.platform == "darwin":
        fn = getattr(libc, "renamex_np", None)
        if fn is None:
            return False
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        rc = fn(pa, pb, _RENAME_SWAP)
    else:
        return False
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), a)
