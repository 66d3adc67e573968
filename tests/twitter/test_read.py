"""Archive -> member references -> records, delete notices, dead letters and counts: the
functions both extract engines call (``sources/twitter/read.py``), on inline lines."""

from __future__ import annotations

import ast
import bz2
import subprocess
import sys
import zipfile
from pathlib import Path

from corpusforge.sources.twitter.archive import MemberRef, ReadLimits
from corpusforge.sources.twitter.read import (
    ReadOutput,
    Tally,
    first_origin,
    list_archive,
    read_member,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "corpusforge"

TWEET = b'{"id": 11, "user": {}, "text": "hello there", "lang": "en", "timestamp_ms": "1000"}'
QUOTE = (
    b'{"id": 12, "user": {}, "text": "look", "lang": "en",'
    b' "quoted_status": {"id": 11, "user": {}, "text": "hello there"}}'
)
BAD_EMBEDDED = b'{"id": 13, "user": {}, "text": "q", "quoted_status": {"id": 14, "user": {}}}'
DELETE = b'{"delete": {"status": {"id": 11, "user_id": 1}}}'
LINES = [TWEET, QUOTE, BAD_EMBEDDED, DELETE, b'{"limit": {"track": 3}}', b"", b"{nope"]


def _archive(tmp_path: Path) -> str:
    path = tmp_path / "twitter-stream-2020-11-01.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("2020/11/01/00/00.json.bz2", bz2.compress(b"\n".join(LINES) + b"\n"))
        zf.writestr("2020/11/01/00/README.txt", b"stray")
        zf.writestr(zipfile.ZipInfo("2020/11/01/00/"), b"")
    return str(path)


def test_list_archive_counts_members_and_skips(tmp_path: Path) -> None:
    tally = Tally()
    items = list(list_archive(_archive(tmp_path), tally))
    assert [i.member for i in items if isinstance(i, MemberRef)] == ["2020/11/01/00/00.json.bz2"]
    assert dict(tally.counts) == {
        "archives": 1,
        "members_listed": 1,
        "members_skipped.member_stray": 1,
        "members_skipped.member_directory": 1,
    }
    assert dict(tally.metrics) == {("read", "member_stray"): 1, ("read", "member_directory"): 1}


def test_list_archive_dead_letters_an_unreadable_archive(tmp_path: Path) -> None:
    path = tmp_path / "broken.zip"
    path.write_bytes(b"PK\x03\x04 not a zip at all")
    tally = Tally()
    (row,) = list(list_archive(str(path), tally))
    assert (row["stage"], row["origin_archive"]) == ("read", "broken.zip")
    assert tally.counts["dead_letter_archives"] == 1
    assert tally.counts[f"dead_letter.{row['reason']}"] == 1
    assert tally.metrics[("read", row["reason"])] == 1


def test_read_member_routes_every_line_and_counts_it(tmp_path: Path) -> None:
    listed = Tally()
    (ref,) = [i for i in list_archive(_archive(tmp_path), listed) if isinstance(i, MemberRef)]
    tally = Tally()
    out = list(read_member(ref, ReadLimits(bz2_threads=0), tally))
    records = [row for kind, row in out if kind is ReadOutput.RECORD]
    assert [(r["id"], r["embedded_only"], r["origin_line"]) for r in records] == [
        (11, False, 1),
        (12, False, 2),
        (11, True, 2),
        (13, False, 3),
    ]
    (delete,) = [row for kind, row in out if kind is ReadOutput.DELETE]
    assert delete == {
        "id": 11,
        "origin_archive": "twitter-stream-2020-11-01.zip",
        "origin_member": "2020/11/01/00/00.json.bz2",
        "origin_line": 4,
    }
    dead = [row for kind, row in out if kind is ReadOutput.DEAD]
    assert [(d["stage"], d["reason"], d["origin_line"]) for d in dead] == [
        ("parse", "parse_bad_embedded", 3),
        ("parse", "parse_invalid_json", 7),
    ]
    assert dead[1]["excerpt"] == "{nope"
    assert dict(tally.counts) == {
        "members_read": 1,
        "tweets": 3,
        "retweets": 0,  # looked at, none found: the key is kept with 0
        "records": 4,
        "embedded_skipped": 1,
        "dead_letter.parse_bad_embedded": 1,
        "delete_notices": 1,
        "other_messages": 2,
        "other.limit": 1,
        "other.blank": 1,
        "dead_letter_lines": 1,
        "dead_letter.parse_invalid_json": 1,
        "lines_read": 7,
    }
    # the embedded skip has a count but no metric of its own, as before the move
    assert dict(tally.metrics) == {("parse", "parse_invalid_json"): 1, ("read", "lines_read"): 7}


def test_first_origin_keeps_the_smallest_origin_whatever_the_order() -> None:
    notices = [
        {"id": 5, "origin_archive": "b.zip", "origin_member": "a", "origin_line": 1},
        {"id": 5, "origin_archive": "a.zip", "origin_member": "b", "origin_line": 9},
        {"id": 5, "origin_archive": "a.zip", "origin_member": "b", "origin_line": 2},
    ]
    assert first_origin(notices) == notices[2]
    assert first_origin(reversed(notices)) == notices[2]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_rules_and_the_local_engine_import_neither_beam_nor_the_transforms() -> None:
    """Two engines, one set of rules: ``local/`` calls the pure functions of ``sources/``,
    ``text/`` and ``pairing/``, never the Beam transforms; none of them imports Beam itself."""
    offenders = [
        f"{path.relative_to(SRC)}: {name}"
        for folder in ("local", "sources", "text", "pairing")
        for path in sorted((SRC / folder).rglob("*.py"))
        for name in sorted(_imports(path))
        if name.split(".")[0] == "apache_beam" or name.startswith("corpusforge.transforms")
    ]
    assert offenders == []


LOCAL_BUILD = """
import sys
from corpusforge.cli import app
from corpusforge.synth.twitter import write_synthetic_archive

archive = sys.argv[1] + "/twitter-stream-2021-01-01.zip"
write_synthetic_archive(archive, tweets=300, layout="zip-2020", seed=1)
sys.argv = ["corpusforge", "twitter", "build", archive, "--out", sys.argv[1] + "/release"]
try:
    app()
except SystemExit as exit:
    assert not exit.code, exit.code
print(sorted({m.split(".")[0] for m in sys.modules} & {"apache_beam", "torch"}))
"""


def test_a_local_twitter_build_never_imports_beam(tmp_path: Path) -> None:
    """Importing Beam takes about a second: ``corpusforge twitter build`` on the local
    engine, from its flags to the published release, must not pay it (Beam parses flags only
    when there are some for it; paths go through Beam's ``FileSystems`` only as URIs)."""
    proc = subprocess.run(
        [sys.executable, "-c", LOCAL_BUILD, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert (tmp_path / "release" / "manifest.json").exists()
    assert proc.stdout.splitlines()[-1] == "[]", proc.stderr[-2000:]
