"""Archive containers: turns compressed members into the zip or tar archive file.

The zip-2020 container (directory entries, deflated members, unix attributes) and GNU tar
(gzipped as a whole for tar-gz) with directory entries and fixed metadata, as in the real
archives.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from corpusforge.synth.layouts import PATH_UTC_OFFSET

_ZIP_DIR_ATTR = (0o40755 << 16) | 0x10  # as in the real zip
_ZIP_FILE_ATTR = 0o100600 << 16


def _parents(name: str) -> list[str]:
    """The folders above a member, outermost first, each ending in ``/``."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]


def _mtime(minute: datetime) -> int:
    """Member mtime: when its minute closed (UTC epoch seconds)."""
    return int((minute - PATH_UTC_OFFSET + timedelta(minutes=1)).replace(tzinfo=UTC).timestamp())


class Sink:
    """Adds members (and their parent folders, once) to an archive file."""

    def add(self, name: str, minute: datetime, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Sink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ZipSink(Sink):
    """The zip-2020 container: directory entries, deflated members, unix attributes."""

    def __init__(self, out: Path) -> None:
        self.zf = zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6)
        self.dirs: set[str] = set()

    def add(self, name: str, minute: datetime, data: bytes) -> None:
        when = (minute + timedelta(minutes=1)).timetuple()[:6]
        for d in _parents(name):
            if d not in self.dirs:
                self.dirs.add(d)
                info = zipfile.ZipInfo(d, when)
                info.create_system, info.external_attr = 3, _ZIP_DIR_ATTR
                self.zf.writestr(info, b"", compress_type=zipfile.ZIP_STORED)
        info = zipfile.ZipInfo(name, when)
        info.create_system, info.external_attr = 3, _ZIP_FILE_ATTR
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(info, data, compresslevel=6)

    def close(self) -> None:
        self.zf.close()


class TarSink(Sink):
    """GNU tar (optionally gzipped as a whole) with directory entries and fixed metadata."""

    def __init__(self, out: Path, gz: bool) -> None:
        self.file = open(out, "wb")  # noqa: SIM115 - closed in close()
        self.gz = (
            gzip.GzipFile(filename="", fileobj=self.file, mode="wb", compresslevel=6, mtime=0)
            if gz
            else None
        )
        self.tf = tarfile.open(  # noqa: SIM115 - closed in close()
            fileobj=self.gz or self.file, mode="w", format=tarfile.GNU_FORMAT
        )
        self.dirs: set[str] = set()

    def add(self, name: str, minute: datetime, data: bytes) -> None:
        mtime = _mtime(minute)
        for d in _parents(name):
            if d not in self.dirs:
                self.dirs.add(d)
                info = tarfile.TarInfo(d.rstrip("/"))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
                self.tf.addfile(info)
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), 0o644, mtime
        self.tf.addfile(info, io.BytesIO(data))

    def close(self) -> None:
        self.tf.close()
        if self.gz is not None:
            self.gz.close()
        self.file.close()
