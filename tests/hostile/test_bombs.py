"""A decompression bomb is cut early by the default caps, with a reason, in bounded memory:
a member of about 5 KB that expands to 4 GiB costs a build well under 1 GiB of RSS."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_bomb import BOMB_MEMBER, GOOD_MEMBER, bomb_archive, build_peak_rss

from .conftest import assert_balanced, dead_letters, member, write_tar
from .readers import build_cli, manifest


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["0", "2"])
def test_a_four_gib_bomb_is_cut_in_bounded_memory(tmp_path: Path, threads: str) -> None:
    archive = bomb_archive(tmp_path, 4 << 30)
    assert archive.stat().st_size < 20_000
    out = tmp_path / "release"
    code, rss, _ = build_peak_rss(archive, out, ("--bz2-threads", threads))
    assert code == 0
    assert rss < 1 << 30, f"peak RSS {rss / 2**20:.0f} MiB"
    m = manifest(out)
    dead = dead_letters(tmp_path)
    assert sorted(zip(dead["origin_member"], dead["reason"], dead["origin_line"], strict=True)) == [
        (BOMB_MEMBER, "read_line_too_long", 2),  # the run of zeros, never held whole
        (BOMB_MEMBER, "read_member_ratio_too_high", None),
    ]
    assert m["counts"]["tweets"] == 5 and m["counts"]["members_read"] == 2
    assert GOOD_MEMBER not in set(dead["origin_member"])
    assert_balanced(m)


@pytest.mark.slow  # decompresses a bomb twice
def test_the_ratio_cap_is_a_flag(tmp_path: Path) -> None:
    lines = [b'{"limit": {"track": 1}}'] * 600_000  # 14 MB from a few KB
    archive = write_tar(tmp_path / "a.tar", [(GOOD_MEMBER, member(lines))])
    code, output = build_cli(tmp_path / "release", archive)
    assert code == 0, output
    assert "read_member_ratio_too_high" in output and GOOD_MEMBER in output
    m = manifest(tmp_path / "release")
    assert m["counts"]["dead_letter_reasons"] == {"read_member_ratio_too_high": 1}
    assert m["counts"]["other_messages"] == (8 << 20) // 24  # whole lines before the cut
    assert_balanced(m)

    code, output = build_cli(tmp_path / "off", archive, flags=("--max-member-ratio", "0"))
    assert code == 0, output
    assert manifest(tmp_path / "off")["counts"]["other_messages"] == 600_000

    code, output = build_cli(tmp_path / "bad", archive, flags=("--max-member-ratio", "0.5"))
    assert code == 2
    assert "--max-member-ratio must be 0 (off) or >= 1, got 0.5" in " ".join(output.split())
