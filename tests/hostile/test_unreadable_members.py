"""Members the reader cannot decode (Deflate64, encrypted, damaged LZMA, cut-off or foreign
tar members) go to the dead-letter output by archive, member and reason; every other member
is read exactly as without them, the run exits 0, and the summary and the card name them."""

from __future__ import annotations

import bz2
import lzma
import zipfile
from pathlib import Path

from .conftest import GOOD, assert_balanced, dead_letters, member, tweet, write_tar
from .readers import build_cli, damage_member_data, manifest, patch_zip_member

GOOD_A = "2021/01/01/00/00.json.bz2"
GOOD_B = "2021/01/01/00/04.json.bz2"
DEFLATE64 = "2021/01/01/00/01.json.bz2"
ENCRYPTED = "2021/01/01/00/02.json.bz2"
BAD_LZMA = "2021/01/01/00/03.json.bz2"
OTHERS = [tweet(i, f"a quote number {i} of the root tweet", quoted_status_id_str="1") for i in
          range(10, 14)]  # fmt: skip


def _zip(path: Path, members: dict[str, tuple[bytes, int]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, (data, method) in members.items():
            zf.writestr(name, data, compress_type=method)
    return path


def _pairs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.glob("pairs/*/*.parquet"))}


def test_unreadable_zip_members_are_dead_lettered_and_named(tmp_path: Path) -> None:
    stored = zipfile.ZIP_STORED
    noise = member([tweet(100 + i, f"tweet {i} that nobody can read") for i in range(50)])
    clean = _zip(
        tmp_path / "clean.zip", {GOOD_A: (member(GOOD), stored), GOOD_B: (member(OTHERS), stored)}
    )
    (tmp_path / "hostile").mkdir()
    hostile = _zip(
        tmp_path / "hostile" / "clean.zip",  # the same name: the same origins in the rows
        {
            GOOD_A: (member(GOOD), stored),
            DEFLATE64: (noise, stored),
            ENCRYPTED: (noise, stored),
            BAD_LZMA: (noise, zipfile.ZIP_LZMA),
            GOOD_B: (member(OTHERS), stored),
        },
    )
    patch_zip_member(hostile, DEFLATE64, method=9)
    patch_zip_member(hostile, ENCRYPTED, flags=0x1)
    damage_member_data(hostile, BAD_LZMA)

    code, output = build_cli(tmp_path / "release", str(hostile))
    assert code == 0, output
    assert "unreadable" in output
    for name in (DEFLATE64, ENCRYPTED, BAD_LZMA):
        assert name in output
    m = manifest(tmp_path / "release")
    dead = dead_letters(tmp_path)
    rows = sorted(zip(dead["origin_archive"], dead["origin_member"], dead["reason"], strict=True))
    assert rows == [
        ("clean.zip", DEFLATE64, "read_member_unsupported_compression"),
        ("clean.zip", ENCRYPTED, "read_member_encrypted"),
        ("clean.zip", BAD_LZMA, "read_member_corrupt"),
    ]
    assert m["counts"]["dead_letter_members"] == 3
    assert m["counts"]["members_read"] == 5
    assert_balanced(m)

    card = (tmp_path / "release" / "README.md").read_text()
    assert "Unreadable" in card
    for name in (DEFLATE64, ENCRYPTED, BAD_LZMA):
        assert name in card

    code, output = build_cli(tmp_path / "clean-release", str(clean))
    assert code == 0, output
    assert _pairs(tmp_path / "clean-release") == _pairs(tmp_path / "release") != {}
    assert m["counts"]["tweets"] == manifest(tmp_path / "clean-release")["counts"]["tweets"]


def test_unreadable_tar_members_are_dead_lettered(tmp_path: Path) -> None:
    xz = lzma.compress(b"\n".join(GOOD) + b"\n")
    cut = member([tweet(100 + i, f"long tweet {i} " + "words " * 40) for i in range(2000)])
    path = Path(
        write_tar(
            tmp_path / "t.tar",
            [
                ("2019/06/01/00/00.json.bz2", member(GOOD)),
                ("2019/06/01/00/01.json.bz2", xz),  # xz under a bz2 name
                ("2019/06/01/00/02.json.bz2", b"\x00garbage, not a stream" * 10),
                ("2019/06/01/00/03.json.bz2", bz2.compress(b"") + b"trailing rubbish"),
                ("2019/06/01/00/04.json.bz2", member(OTHERS)),
                ("2019/06/01/00/05.json.bz2", cut),
            ],
        )
    )
    raw = path.read_bytes()
    path.write_bytes(raw[: raw.find(cut) + len(cut) // 2])  # the last member is cut off
    code, output = build_cli(tmp_path / "release", str(path))
    assert code == 0, output
    m = manifest(tmp_path / "release")
    dead = dead_letters(tmp_path)
    member_rows = dead.filter(dead["origin_line"].is_null())
    rows = zip(member_rows["origin_member"].fill_null(""), member_rows["reason"], strict=True)
    assert sorted(rows) == [
        ("", "read_archive_unreadable"),  # the tar itself ends inside its last member
        ("2019/06/01/00/01.json.bz2", "read_member_unsupported_compression"),
        ("2019/06/01/00/02.json.bz2", "read_member_bad_magic"),
        ("2019/06/01/00/03.json.bz2", "read_member_corrupt"),
        ("2019/06/01/00/05.json.bz2", "read_member_truncated"),
    ]
    assert "2019/06/01/00/05.json.bz2" in output
    assert m["counts"]["tweets"] >= len(GOOD) + len(OTHERS)
    assert m["datasets"]["rp"]["rows"] == 1 and m["datasets"]["qt"]["rows"] == 1
    assert_balanced(m)
