"""Each hostile archive goes through the real pipeline: the job completes, the bad records
are dead-lettered with reason and origin, the good records around them are kept, and the
accounting closes exactly."""

from __future__ import annotations

import bz2
import gzip
import random
from pathlib import Path

import orjson
import pytest

from corpusforge.sources.twitter.archive import ReadLimits

from .conftest import (
    GOOD,
    assert_balanced,
    dead_letters,
    member,
    run,
    tweet,
    tweet_ids,
    write_tar,
    write_zip,
)

M0 = "2019/06/01/00/00.json.bz2"
M1 = "2019/06/01/00/01.json.bz2"


def test_truncated_bz2_member(tmp_path: Path) -> None:
    rng = random.Random(0)
    words = [f"w{rng.randrange(100_000)}" for _ in range(200_000)]
    # more than one 900 kB bz2 block, so the first block decodes before the damage
    big = [tweet(100 + i, " ".join(words[i * 50 : i * 50 + 50])) for i in range(4000)]
    damaged = member(big)
    archive = write_tar(tmp_path / "a.tar", [(M0, damaged[:-2000]), (M1, member(GOOD))])
    m = run(tmp_path, archive)
    dead = dead_letters(tmp_path)
    assert "read_member_truncated" in set(dead["reason"])
    assert set(dead.filter(dead["reason"] == "read_member_truncated")["origin_member"]) == {M0}
    ids = tweet_ids(tmp_path)
    assert set(range(1, 6)) <= ids  # the other member in full
    assert 100 in ids  # and the lines before the damage
    assert m["datasets"]["rp"]["rows"] == 1
    assert_balanced(m)


def test_truncated_gz_member(tmp_path: Path) -> None:
    data = gzip.compress(b"\n".join(GOOD * 50) + b"\n")
    archive = write_tar(tmp_path / "b.tar", [("20220301/20220301000000.json.gz", data[:-30])])
    m = run(tmp_path, archive)
    dead = dead_letters(tmp_path)
    assert {"read_member_truncated"} <= set(dead["reason"])
    assert set(range(1, 6)) <= tweet_ids(tmp_path)
    assert_balanced(m)


def test_corrupt_zip_member_bad_crc(tmp_path: Path) -> None:
    payload = member(GOOD)
    path = tmp_path / "c.zip"
    write_zip(
        path,
        [
            ("2021/01/01/00/00.json.bz2", payload),
            ("2021/01/01/00/01.json.bz2", member([tweet(9, "another tweet that is fine here")])),
        ],
    )
    raw = bytearray(path.read_bytes())
    raw[raw.find(payload) + len(payload) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    m = run(tmp_path, str(path))
    dead = dead_letters(tmp_path)
    member_level = dead.filter(dead["origin_line"].is_null())
    assert set(member_level["origin_member"]) == {"2021/01/01/00/00.json.bz2"}
    assert set(member_level["reason"]) <= {"read_member_corrupt", "read_member_truncated"}
    assert 9 in tweet_ids(tmp_path)
    assert_balanced(m)


def test_bad_lines_are_dead_lettered_and_their_neighbours_kept(tmp_path: Path) -> None:
    lines = [
        GOOD[0],
        b'{"id_str": "7", "user": {}, "text": "invalid \xff\xfe utf-8"}',
        GOOD[1],
        b"this is not json",
        GOOD[2],
        b'{"id_str": "8", "user": {}, "text": "cut off in the mid',
    ]
    archive = write_tar(tmp_path / "d.tar", [(M0, member(lines, newline_at_end=False))])
    m = run(tmp_path, archive)
    dead = dead_letters(tmp_path).sort("origin_line")
    assert list(zip(dead["reason"], dead["origin_line"], strict=True)) == [
        ("parse_invalid_utf8", 2),
        ("parse_invalid_json", 4),
        ("parse_invalid_json", 6),
    ]
    assert set(dead["origin_member"]) == {M0}
    assert tweet_ids(tmp_path) == {1, 2, 3}
    assert m["counts"]["dead_letter_lines"] == 3
    assert_balanced(m)


def test_ten_megabyte_line(tmp_path: Path) -> None:
    huge = tweet(6, random.Random(6).randbytes(5 << 20).hex())  # not a bomb: no ratio cut
    archive = write_tar(tmp_path / "e.tar", [(M0, member([GOOD[0], huge, *GOOD[1:]]))])
    m = run(tmp_path, archive)
    dead = dead_letters(tmp_path)
    assert list(zip(dead["reason"], dead["origin_line"], strict=True)) == [
        ("read_line_too_long", 2)
    ]
    assert tweet_ids(tmp_path) == set(range(1, 6))
    assert_balanced(m)


@pytest.mark.slow  # decodes a 14 MB bomb through the whole build: run by .ci/run
def test_decompression_bomb_is_capped_with_a_reason(tmp_path: Path) -> None:
    bomb = bz2.compress(b'{"limit": {"track": 1}}\n' * 600_000)  # 14 MB from ~3 KB
    archive = write_tar(tmp_path / "f.tar", [(M0, bomb), (M1, member(GOOD))])
    m = run(tmp_path, archive, limits=ReadLimits(max_line_bytes=1 << 16, max_member_bytes=4 << 20))
    dead = dead_letters(tmp_path)
    assert list(zip(dead["reason"], dead["origin_member"], strict=True)) == [
        ("read_member_too_large", M0)
    ]
    assert set(range(1, 6)) <= tweet_ids(tmp_path)
    assert_balanced(m)


def test_v1_and_v2_lines_mixed_in_one_member(tmp_path: Path) -> None:
    v2 = orjson.dumps(
        {
            "data": {
                "id": "20",
                "text": "a v2 reply about the gardens of spring",
                "lang": "en",
                "referenced_tweets": [{"type": "replied_to", "id": "1"}],
            },
            "includes": {
                "tweets": [
                    {"id": "1", "text": "the root tweet about gardens in the spring", "lang": "en"}
                ]
            },
        }
    )
    archive = write_tar(tmp_path / "g.tar", [(M0, member([GOOD[0], v2, GOOD[1]]))])
    m = run(tmp_path, archive)
    assert tweet_ids(tmp_path) == {1, 2, 20}
    assert m["counts"]["tweets"] == 3 and m["counts"]["dead_letter"] == 0
    assert m["datasets"]["corp"]["rows"] == 1  # the v1 reply and the v2 reply of tweet 1
    assert_balanced(m)


def test_stray_members_and_the_same_member_twice(tmp_path: Path) -> None:
    archive = write_tar(
        tmp_path / "h.tar",
        [
            (M0, member(GOOD)),
            ("2019/06/01/00/.nfs000000000123", b"stale nfs handle"),
            ("2019/06/01/00/.01.json.bz2.J1uA1l", b"rsync partial"),
            (M0, member(GOOD)),
        ],
    )
    m = run(tmp_path, archive)
    assert m["counts"]["members_skipped"] == {"member_stray": 2}
    assert m["counts"]["members_read"] == 2 and m["counts"]["tweets"] == 10
    assert tweet_ids(tmp_path) == set(range(1, 6))  # one row per distinct tweet
    assert m["datasets"]["rp"]["rows"] == 1
    assert_balanced(m)


def test_empty_zero_byte_and_not_an_archive(tmp_path: Path) -> None:
    empty = write_zip(tmp_path / "empty.zip", [])
    zero = tmp_path / "zero.tar"
    zero.write_bytes(b"")
    text = tmp_path / "notes.zip"
    text.write_bytes(b"these are my notes, not an archive\n" * 20)
    good = write_tar(tmp_path / "good.tar", [(M0, member(GOOD))])
    m = run(tmp_path, empty, str(zero), str(text), good)
    dead = dead_letters(tmp_path)
    assert sorted(zip(dead["reason"], dead["origin_archive"], strict=True)) == [
        ("read_archive_not_an_archive", "notes.zip"),
        ("read_archive_not_an_archive", "zero.tar"),
    ]
    assert m["counts"]["archives"] == 4 and m["counts"]["dead_letter_archives"] == 2
    assert tweet_ids(tmp_path) == set(range(1, 6))
    assert_balanced(m)


def test_ids_as_numbers_in_one_line_and_strings_in_another(tmp_path: Path) -> None:
    as_number = orjson.dumps(
        {
            "id": 1,
            "user": {"id": 42},
            "lang": "en",
            "text": "the root tweet about gardens in the spring",
        }
    )
    reply = orjson.dumps(
        {
            "id": 2,
            "user": {"id": 43},
            "lang": "en",
            "in_reply_to_status_id": 1,
            "text": "a reply that names its parent by a number",
        }
    )
    archive = write_tar(tmp_path / "i.tar", [(M0, member([as_number, reply, *GOOD[1:3]]))])
    m = run(tmp_path, archive)
    assert tweet_ids(tmp_path) == {1, 2, 3}
    assert m["counts"]["tweets_distinct"] == 3
    assert m["datasets"]["rp"]["rows"] == 1
    assert_balanced(m)
