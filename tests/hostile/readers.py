"""Helpers for the reader's hostile tests: zip members patched byte by byte, the real CLI,
and a release's files compared byte for byte."""

from __future__ import annotations

import hashlib
import struct
import zipfile
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from corpusforge.cli import app

LOCAL = b"PK\x03\x04"
CENTRAL = b"PK\x01\x02"


def patch_zip_member(path: Path, name: str, *, method: int | None = None, flags: int = 0) -> None:
    """Give member ``name`` another compression ``method`` and/or set ``flags`` bits, in its
    local header and in the central directory, as a Deflate64 or encrypting zipper would."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        local = zf.getinfo(name).header_offset
    assert raw[local : local + 4] == LOCAL
    _patch(raw, local + 6, local + 8, method, flags)
    at = raw.find(CENTRAL)
    while at >= 0:
        name_len = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46 : at + 46 + name_len] == name.encode():
            _patch(raw, at + 8, at + 10, method, flags)
        at = raw.find(CENTRAL, at + 4)
    path.write_bytes(bytes(raw))


def _patch(raw: bytearray, flags_at: int, method_at: int, method: int | None, flags: int) -> None:
    old = struct.unpack_from("<H", raw, flags_at)[0]
    struct.pack_into("<H", raw, flags_at, old | flags)
    if method is not None:
        struct.pack_into("<H", raw, method_at, method)


def damage_member_data(path: Path, name: str, *, at: float = 0.5) -> None:
    """Flip one byte of member ``name``'s compressed data, ``at`` of the way through it."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(name)
    name_len, extra_len = struct.unpack_from("<HH", raw, info.header_offset + 26)
    start = info.header_offset + 30 + name_len + extra_len
    raw[start + int(info.compress_size * at)] ^= 0xFF
    path.write_bytes(bytes(raw))


def quiet_cli(*args: str) -> tuple[int, list[str]]:
    """``corpusforge ARGS --quiet`` in this process: exit status and the lines it printed."""
    result = CliRunner().invoke(app, [*args, "--quiet"])
    lines = [
        line
        for line in result.output.splitlines()
        if line.strip() and not line.startswith("WARNING:root:apitools")
    ]
    return result.exit_code, lines


def build_cli(out: Path, *archives: str, flags: tuple[str, ...] = ()) -> tuple[int, str]:
    """``corpusforge twitter build`` through the real command line; exit code and output."""
    args = ["twitter", "build", *archives, "--out", str(out), "--benchmark-queries", "0"]
    result = CliRunner().invoke(app, [*args, *flags])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def manifest(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((out / "manifest.json").read_bytes())
    return data


def release_files(out: Path) -> dict[str, str]:
    """sha256 of every data file of a release (Parquet and extract counts), by relative path."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and (p.suffix == ".parquet" or p.name == "_counts.json")
    }
