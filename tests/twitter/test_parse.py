"""Stream lines -> records, notices, other messages and reasons (inline JSON, both APIs)."""

from __future__ import annotations

import bz2
import zipfile
from datetime import datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpusforge.sources.twitter import parse
from corpusforge.sources.twitter.parse import (
    LineKind,
    ParseReason,
    _utc_ms,
    merge_records,
    parse_line,
)

USER = {"id": 1, "id_str": "1", "screen_name": "someone"}


def _line(obj: object) -> bytes:
    return orjson.dumps(obj)


def _parse(obj: object) -> object:
    return parse_line(_line(obj), "a.zip", "m.json.bz2", 7)


def test_plain_v1_tweet_uses_timestamp_ms_and_keeps_origin() -> None:
    p = _parse(
        {
            "id_str": "10",
            "id": 10,
            "user": USER,
            "text": "hello &amp; world",
            "lang": "en",
            "created_at": "Fri Jan 01 17:29:00 +0000 2021",
            "timestamp_ms": "1609522140658",
            "in_reply_to_status_id_str": "9",
        }
    )
    assert p.kind is LineKind.TWEET
    assert p.records == [
        {
            "id": 10,
            "created_at": 1609522140658,
            "lang": "en",
            "text": "hello &amp; world",
            "reply_to_id": 9,
            "quote_of_id": None,
            "embedded_only": False,
            "origin_archive": "a.zip",
            "origin_member": "m.json.bz2",
            "origin_line": 7,
        }
    ]


def test_extended_tweet_full_text_wins_over_truncated_text() -> None:
    p = _parse(
        {
            "id_str": "10",
            "user": USER,
            "text": "short…",
            "truncated": True,
            "extended_tweet": {"full_text": "the whole long text"},
        }
    )
    assert p.records[0]["text"] == "the whole long text"


def test_retweet_yields_the_retweeted_status_and_its_quote() -> None:
    quoted = {
        "id_str": "1",
        "user": USER,
        "text": "the original",
        "lang": "en",
        "created_at": "Fri Jan 01 10:00:00 +0000 2021",
    }
    retweeted = {
        "id_str": "2",
        "user": USER,
        "text": "a quote of it",
        "lang": "en",
        "quoted_status_id_str": "1",
        "quoted_status": quoted,
        "created_at": "Fri Jan 01 11:00:00 +0000 2021",
    }
    p = _parse(
        {
            "id_str": "3",
            "user": USER,
            "text": "RT @x: a quote of",
            "lang": "en",
            "retweeted_status": retweeted,
            "quoted_status": quoted,
            "timestamp_ms": "1",
        }
    )
    assert p.is_retweet
    assert [(r["id"], r["text"], r["quote_of_id"], r["embedded_only"]) for r in p.records] == [
        (2, "a quote of it", 1, True),
        (1, "the original", None, True),
    ]
    assert p.records[1]["created_at"] == 1609495200000  # 2021-01-01T10:00:00Z


def test_ids_as_numbers_or_strings_give_the_same_record() -> None:
    as_str = _parse({"id_str": "123", "user": USER, "text": "x", "in_reply_to_status_id_str": "5"})
    as_num = _parse({"id": 123, "user": USER, "text": "x", "in_reply_to_status_id": 5})
    assert as_str.records[0]["id"] == as_num.records[0]["id"] == 123
    assert as_str.records[0]["reply_to_id"] == as_num.records[0]["reply_to_id"] == 5


def test_v2_tweet_with_reply_and_quote_and_includes() -> None:
    p = _parse(
        {
            "data": {
                "id": "20",
                "text": "my reply",
                "lang": "en",
                "created_at": "2022-03-01T00:00:01.000Z",
                "referenced_tweets": [
                    {"type": "replied_to", "id": "18"},
                    {"type": "quoted", "id": "19"},
                ],
            },
            "includes": {
                "tweets": [
                    {"id": "18", "text": "parent", "lang": "en"},
                    {"id": "19", "text": "quoted", "lang": "es"},
                ],
                "users": [USER],
            },
        }
    )
    assert p.kind is LineKind.TWEET
    assert [
        (r["id"], r["reply_to_id"], r["quote_of_id"], r["embedded_only"]) for r in p.records
    ] == [(20, 18, 19, False), (18, None, None, True), (19, None, None, True)]
    assert p.records[0]["created_at"] == 1646092801000


def test_v2_retweet_keeps_only_the_original() -> None:
    p = _parse(
        {
            "data": {
                "id": "30",
                "text": "RT @x: orig…",
                "referenced_tweets": [{"type": "retweeted", "id": "29"}],
            },
            "includes": {"tweets": [{"id": "29", "text": "original full text"}]},
        }
    )
    assert p.is_retweet
    assert [(r["id"], r["text"]) for r in p.records] == [(29, "original full text")]


def test_v2_note_tweet_text() -> None:
    p = _parse({"data": {"id": "31", "text": "cut", "note_tweet": {"text": "long note text"}}})
    assert p.records[0]["text"] == "long note text"


def test_delete_notice() -> None:
    p = _parse({"delete": {"status": {"id": 5, "id_str": "5", "user_id": 1}, "timestamp_ms": "1"}})
    assert (p.kind, p.deleted_id) == (LineKind.DELETE, 5)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"", "blank"),
        (b"   ", "blank"),
        (b'{"limit": {"track": 3}}', "limit"),
        (b'{"scrub_geo": {}}', "scrub_geo"),
        (b'{"status_withheld": {}}', "status_withheld"),
    ],
)
def test_other_messages(line: bytes, message: str) -> None:
    p = parse_line(line, "a", "m", 1)
    assert (p.kind, p.message) == (LineKind.OTHER, message)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"id_str": "1", "user": {}, "text": "cut', ParseReason.INVALID_JSON),
        (b"not json at all", ParseReason.INVALID_JSON),
        (b'{"id_str": "1", "user": {}, "text": "\xff\xfe"}', ParseReason.INVALID_UTF8),
        (b"[1, 2]", ParseReason.NOT_AN_OBJECT),
        (b'{"something": "else"}', ParseReason.UNKNOWN_MESSAGE),
        (b'{"id_str": "abc", "user": {}, "text": "x"}', ParseReason.BAD_TWEET),
        (b'{"id_str": "1", "user": {}}', ParseReason.BAD_TWEET),
        (b'{"delete": {"status": {}}}', ParseReason.BAD_DELETE),
    ],
)
def test_dead_lines_carry_a_reason(line: bytes, reason: ParseReason) -> None:
    p = parse_line(line, "a", "m", 1)
    assert (p.kind, p.reason) == (LineKind.DEAD, reason)
    assert p.detail


def test_bad_embedded_status_keeps_the_tweet() -> None:
    p = _parse({"id_str": "10", "user": USER, "text": "quote", "quoted_status": {"text": "no id"}})
    assert p.kind is LineKind.TWEET
    assert [r["id"] for r in p.records] == [10]
    assert p.embedded_problems == ["quoted_status: status without an id"]


def _rec(text: str, embedded: bool, line: int, **kw: object) -> dict[str, object]:
    base = {
        "id": 1,
        "created_at": None,
        "lang": None,
        "text": text,
        "reply_to_id": None,
        "quote_of_id": None,
        "embedded_only": embedded,
        "origin_archive": "a",
        "origin_member": "m",
        "origin_line": line,
    }
    return {**base, **kw}


def test_merge_prefers_stream_line_then_longer_text_and_fills_links() -> None:
    embedded_full = _rec("the full text", True, 1, lang="en")
    own_line = _rec("the full", False, 9, reply_to_id=4)
    merged = merge_records([embedded_full, own_line])
    assert merged["text"] == "the full"  # its own stream line beats an embedded copy
    assert merged["embedded_only"] is False
    assert (merged["reply_to_id"], merged["lang"]) == (4, "en")
    assert merge_records([own_line, embedded_full]) == merged
    only_embedded = merge_records([_rec("short", True, 1), _rec("longer text", True, 2)])
    assert (only_embedded["text"], only_embedded["embedded_only"]) == ("longer text", True)


def _strptime_ms(created: str) -> int | None:
    try:
        return int(datetime.strptime(created, "%a %b %d %H:%M:%S %z %Y").timestamp() * 1000)
    except ValueError:
        return None


def _or_none(created: str) -> int | None:
    try:
        return _utc_ms(created)
    except ValueError:
        return None


_PIECES = {
    "day": st.sampled_from(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "wed", "Wxd"]),
    "month": st.sampled_from(["Jan", "Feb", "Mar", "Apr", "Sep", "Dec", "dec", "Xyz"]),
    "dd": st.sampled_from(["00", "01", "09", "28", "29", "30", "31", "32", " 1", "1", "٣1"]),
    "time": st.sampled_from(["00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "1:2:3"]),
    "zone": st.sampled_from(["+0000", "-0500", "+0130", "+000", "Z"]),
    "year": st.sampled_from(["2012", "2016", "1900", "2000", "0000", "0001", "9999", "20 1"]),
}


@given(st.fixed_dictionaries(_PIECES), st.text(max_size=3))
@settings(max_examples=400)
def test_created_at_is_read_as_strptime_reads_it(parts: dict[str, str], noise: str) -> None:
    p = parts
    created = f"{p['day']} {p['month']} {p['dd']} {p['time']} {p['zone']} {p['year']}"
    assert _or_none(created) == _strptime_ms(created)
    assert _or_none(created + noise) == _strptime_ms(created + noise)
    assert _or_none(noise + created) == _strptime_ms(noise + created)


def test_created_at_of_twitter_in_ms() -> None:
    assert _utc_ms("Wed Oct 10 20:19:24 +0000 2018") == 1539202764000
    assert _utc_ms("Thu Feb 29 00:00:00 +0000 2024") == 1709164800000
    with pytest.raises(ValueError):
        _utc_ms("Thu Feb 30 00:00:00 +0000 2024")


# -- the v1 decoder of only the fields read, against orjson's whole parse -----------------


def _whole(line: bytes) -> object:
    """``parse_line`` as it was before the field decoder: every line through ``orjson``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parse, "_v1_fields", lambda line: None)
        return parse_line(line, "a.zip", "m.json.bz2", 7)


_TWEET = {"id_str": "10", "id": 10, "user": USER, "text": "t", "timestamp_ms": "1609522140658"}
_VARIANTS: list[object] = [
    _TWEET,
    {**_TWEET, "quoted_status": [1]},
    {**_TWEET, "quoted_status": None},
    {**_TWEET, "quoted_status": {"id": 3, "text": "q", "user": USER}},
    {**_TWEET, "quoted_status": {"text": "no id"}},
    {**_TWEET, "retweeted_status": "not a status"},
    {**_TWEET, "retweeted_status": {"id": 4, "text": "rt", "quoted_status": {"id": 5}}},
    {**_TWEET, "extended_tweet": []},
    {**_TWEET, "extended_tweet": {"full_text": 7}},
    {**_TWEET, "extended_tweet": {"full_text": "the full text"}},
    {**_TWEET, "id": True},
    {**_TWEET, "id": 1.5, "id_str": None},
    {**_TWEET, "id": -3, "id_str": None},
    {**_TWEET, "id": 2**63, "id_str": None},
    {**_TWEET, "timestamp_ms": 1.5},
    {**_TWEET, "timestamp_ms": [1]},
    {**_TWEET, "created_at": "Fri Jan 01 17:29:00 +0000 2021", "timestamp_ms": None},
    {**_TWEET, "lang": 3, "in_reply_to_status_id": "x"},
    {**_TWEET, "user": "a string", "quoted_status_id": 9},
    {**_TWEET, "data": {"id": "1", "text": "v2"}},
    {**_TWEET, "data": None},
    {**_TWEET, "delete": {"status": {"id": 1}}},
    {**_TWEET, "limit": {"track": 1}},
    {"id": 1, "text": "no user"},
    {"user": USER, "text": "no id"},
    {"delete": {"status": {"id_str": "12", "id": 12}}, "timestamp_ms": "1"},
    {"delete": {"status": {"id_str": False}}},
    {"delete": []},
    {"limit": {"track": 3}},
    {"data": {"id": "1", "text": "a v2 tweet", "referenced_tweets": []}},
]
_RAW_VARIANTS = [
    b'{"id_str": "1", "user": {"bio": "\xff\xfe"}, "text": "x"}',  # not UTF-8 where never read
    b'{"id_str": "1", "user": {"bio": "\\ud800"}, "text": "x"}',  # a lone surrogate
    b'{"id_str": "1", "user": {"n": 01}, "text": "x"}',
    b'{"id_str": "1", "user": {}, "text": "x", "timestamp_ms": 1e400}',
    b'{"id_str": "1", "user": {}, "text": "x"} trailing',
    b'{"id": 1, "user": {"deep": ' + b"[" * 2000 + b"]" * 2000 + b'}, "text": "x"}',
    b'\xef\xbb\xbf{"id": 1, "user": {}, "text": "x"}',
    b'{"id": 1, "id": 2, "user": {}, "text": "x"}',
    b'{"\\u0069d": 1, "user": {}, "text": "x"}',
    '{"id": 1, "user": {"name": "ünï"}, "text": "ça 😀"}'.encode(),
]


@pytest.mark.parametrize("line", [_line(v) for v in _VARIANTS] + _RAW_VARIANTS)
def test_field_decoder_parses_as_orjson_does(line: bytes) -> None:
    assert parse_line(line, "a.zip", "m.json.bz2", 7) == _whole(line)


def test_field_decoder_parses_the_real_archive_as_orjson_does(realdata: Path) -> None:
    archive = realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip"
    with zipfile.ZipFile(archive) as z:
        members = [bz2.decompress(z.read(n)) for n in z.namelist() if n.endswith(".bz2")]
    lines = [line for member in members for line in member.split(b"\n")]
    assert len(lines) > 6000
    for line in lines:
        assert parse_line(line, "a.zip", "m.json.bz2", 7) == _whole(line), line[:200]


def test_a_number_beyond_a_double_where_never_read_keeps_the_tweet() -> None:
    """The one difference from ``orjson``, which refused the whole line as JSON."""
    line = b'{"id_str": "1", "user": {"followers": 1e400}, "text": "x"}'
    assert _whole(line).kind is LineKind.DEAD  # type: ignore[attr-defined]
    p = parse_line(line, "a", "m", 1)
    assert (p.kind, [r["id"] for r in p.records]) == (LineKind.TWEET, [1])
