"""Member names never become paths; no user id, screen name, mention or URL reaches pairs."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from corpusforge.pairing.conversations import make_node
from corpusforge.schemas import PAIR, TWEET, arrow_schema
from corpusforge.sources.twitter.parse import LineKind, parse_line
from corpusforge.text.clean import get_profile

from .conftest import GOOD, assert_balanced, member, run, tweet_ids, write_tar

URL = re.compile(r"(?i)\b(?:https?://|www\.)\S+|\b\S+\.(?:com|co|org|net|ly)/\S*")
MENTION = re.compile(r"@\w")
USER_FIELDS = {"user", "user_id", "screen_name", "author_id", "name"}


def test_member_names_never_become_paths(tmp_path: Path) -> None:
    hostile = [
        "../../../escape.json.bz2",
        "/etc/corpusforge-absolute.json.bz2",
        "2019/../../up.json.bz2",
    ]
    archive = write_tar(tmp_path / "evil.tar", [(name, member(GOOD)) for name in hostile])
    before = {p for p in tmp_path.parent.rglob("*") if "evil" not in str(p)}
    m = run(tmp_path, archive)
    assert not Path("/etc/corpusforge-absolute.json.bz2").exists()
    created = {p for p in tmp_path.parent.rglob("*")} - before
    assert all(str(p).startswith(str(tmp_path)) for p in created)
    tweets = pl.read_parquet(sorted((tmp_path / "release" / "tweets").glob("*/tweets/*.parquet")))
    assert set(tweets["origin_member"]) <= set(hostile)
    assert tweet_ids(tmp_path) == set(range(1, 6))
    assert_balanced(m)


def test_schemas_carry_no_user_fields() -> None:
    for ref in (TWEET, PAIR):
        assert not USER_FIELDS & set(arrow_schema(ref).names)


handles = st.from_regex(r"[A-Za-z0-9_]{1,15}", fullmatch=True)
words = st.lists(st.from_regex(r"[a-z]{2,9}", fullmatch=True), min_size=4, max_size=25)
urls = st.sampled_from(
    ["https://t.co/AbC123xyz", "http://example.com/a?b=c", "www.site.org/page", "https://x.co/y"]
)


@settings(max_examples=200, deadline=None)
@given(
    handle=handles,
    uid=st.integers(10**9, 2**62),
    ws=words,
    url=urls,
    mentioned=handles,
    entity=st.sampled_from(["&amp;", "&lt;", "&gt;", "&quot;", ""]),
)
def test_no_user_id_screen_name_mention_or_url_survives(
    handle: str, uid: int, ws: list[str], url: str, mentioned: str, entity: str
) -> None:
    text = f"@{mentioned} {' '.join(ws[:2])} {entity} {url} {' '.join(ws[2:])} @{handle}"
    line = orjson.dumps(
        {
            "id_str": "77",
            "lang": "en",
            "text": text,
            "timestamp_ms": "1609459200000",
            "user": {"id": uid, "id_str": str(uid), "screen_name": handle},
            "entities": {"user_mentions": [{"screen_name": mentioned, "id": uid + 1}]},
        }
    )
    parsed = parse_line(line, "a.zip", "m", 1)
    assert parsed.kind is LineKind.TWEET
    record = parsed.records[0]
    assert not USER_FIELDS & set(record)
    assert not any(str(uid) in str(v) for v in record.values())
    node = make_node(
        record,
        deleted=False,
        held_out=False,
        profile=get_profile("paper"),
        min_chars=0,
        langs={"en"},
    )
    assert node.text is not None
    assert not MENTION.search(node.text)
    assert not URL.search(node.text)
    assert f"@{handle.lower()}" not in node.text
