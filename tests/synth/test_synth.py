"""Synthetic twitterstream archives: real layouts, exact truth, determinism, realism.

The truth is checked against a plain reader written here with the stdlib only: open the
container, decompress every member, classify every line.
"""

from __future__ import annotations

import bz2
import gzip
import html
import os
import random
import re
import statistics
import tarfile
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from corpusforge.commands.synth import Api, Layout, app
from corpusforge.synth.twitter import (
    APIS,
    BZ2_STREAM_BYTES,
    LAYOUTS,
    PATH_UTC_OFFSET,
    TWEPOCH_MS,
    SynthTruth,
    default_api,
    member_name,
    real_archive_name,
    truth_path,
    write_synthetic_archive,
)

SEED = 7
TWEETS = 300
MEMBER_PATTERNS = {
    "zip-2020": r"\d{4}/\d{2}/\d{2}/\d{2}/\d{2}\.json\.bz2",
    "tar-2019": r"\d{4}/\d{2}/\d{2}/\d{2}/\d{2}\.json\.bz2",
    "tar-gz": r"\d{4}/\d{2}/\d{2}/\d{2}/\d{2}\.json\.bz2",
    "tar-2013": r"\d{2}/\d{2}/\d{2}/\d{2}\.json\.bz2",
    "tar-2022": r"(\d{8})/\1\d{4}00\.json\.gz",
}
URL_OR_MENTION = re.compile(r"https?://\S+|@\w+")


# --------------------------------------------------------------------------- a plain reader


def list_entries(path: Path) -> list[tuple[str, bool]]:
    """(name, is_dir) of every entry, in archive order."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            return [(i.filename, i.is_dir()) for i in zf.infolist()]
    with tarfile.open(path) as tf:
        return [(m.name, m.isdir()) for m in tf.getmembers()]


def read_members(path: Path) -> list[tuple[str, bytes]]:
    """(name, compressed bytes) of every file member, in archive order."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            return [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    out = []
    with tarfile.open(path) as tf:  # transparent gzip for tar-gz
        for m in tf.getmembers():
            if m.isfile():
                fh = tf.extractfile(m)
                assert fh is not None
                out.append((m.name, fh.read()))
    return out


def decompress(name: str, data: bytes) -> bytes:
    return gzip.decompress(data) if name.endswith(".gz") else bz2.decompress(data)


@dataclass
class Counted:
    """What the plain reader finds."""

    lines: int = 0
    tweets: int = 0
    deletes: int = 0
    other: int = 0
    blank: int = 0
    retweets: int = 0
    langs: Counter[str] = field(default_factory=Counter)
    edges: list[tuple[int, int, str]] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)
    tweet_ids: list[int] = field(default_factory=list)
    tweets_json: list[dict[str, Any]] = field(default_factory=list)
    raw_bytes: int = 0


def count(path: Path) -> Counted:
    c = Counted()
    for name, data in read_members(path):
        raw = decompress(name, data)
        c.raw_bytes += len(raw)
        assert raw.endswith(b"\n")
        for line in raw.split(b"\n")[:-1]:
            c.lines += 1
            line = line.rstrip(b"\r")
            if not line.strip():
                c.blank += 1
                c.other += 1
                continue
            obj = orjson.loads(line)
            if "delete" in obj:
                c.deletes += 1
                c.deleted.append(int(obj["delete"]["status"]["id_str"]))
            elif "id_str" in obj and "user" in obj:
                c.tweets += 1
                c.tweet_ids.append(int(obj["id_str"]))
                c.tweets_json.append(obj)
                c.langs[obj["lang"]] += 1
                if "retweeted_status" in obj:
                    c.retweets += 1
                    continue
                tid = int(obj["id_str"])
                if obj["in_reply_to_status_id_str"]:
                    c.edges.append((tid, int(obj["in_reply_to_status_id_str"]), "reply"))
                if obj.get("quoted_status_id_str"):
                    c.edges.append((tid, int(obj["quoted_status_id_str"]), "quote"))
            elif "data" in obj:
                data_ = obj["data"]
                c.tweets += 1
                c.tweet_ids.append(int(data_["id"]))
                c.tweets_json.append(obj)
                c.langs[data_["lang"]] += 1
                refs = {r["type"]: int(r["id"]) for r in data_.get("referenced_tweets", [])}
                if "retweeted" in refs:
                    c.retweets += 1
                    continue
                if "replied_to" in refs:
                    c.edges.append((int(data_["id"]), refs["replied_to"], "reply"))
                if "quoted" in refs:
                    c.edges.append((int(data_["id"]), refs["quoted"], "quote"))
            else:
                c.other += 1
    return c


def text_v1(tweet: dict[str, Any]) -> str:
    ext = tweet.get("extended_tweet")
    return str(ext["full_text"] if ext else tweet["text"])


# --------------------------------------------------------------------------- fixtures

Built = tuple[Path, SynthTruth]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    """One small archive per layout, plus API v2 lines in the zip-2020 layout."""
    root = tmp_path_factory.mktemp("synth")
    out: dict[str, Built] = {}
    for layout in LAYOUTS:
        path = root / f"{layout}.archive"
        out[layout] = (path, write_synthetic_archive(path, tweets=TWEETS, layout=layout, seed=SEED))
    path = root / "zip-2020-v2.zip"
    out["zip-2020/v2"] = (
        path,
        write_synthetic_archive(path, tweets=TWEETS, layout="zip-2020", api="v2", seed=SEED),
    )
    return out


@pytest.fixture(scope="module")
def larger(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SynthTruth, Counted]:
    """1,500 tweets (tar-2019): enough for the statistics of the graph and the texts."""
    path = tmp_path_factory.mktemp("synth-large") / "twitter_stream_2019_01_01.tar"
    truth = write_synthetic_archive(path, tweets=1500, layout="tar-2019", seed=SEED)
    return path, truth, count(path)


ALL_BUILDS = [*LAYOUTS, "zip-2020/v2"]


# --------------------------------------------------------------------------- names and layouts


def test_member_name_follows_each_real_layout() -> None:
    minute = datetime(2021, 1, 1, 22, 3)
    assert member_name("zip-2020", minute) == "2021/01/01/22/03.json.bz2"
    assert member_name("tar-2019", minute) == "2021/01/01/22/03.json.bz2"
    assert member_name("tar-gz", minute) == "2021/01/01/22/03.json.bz2"
    assert member_name("tar-2013", minute) == "01/01/22/03.json.bz2"
    assert member_name("tar-2022", minute) == "20210101/20210101220300.json.gz"
    with pytest.raises(ValueError, match="tar-2021"):
        member_name("tar-2021", minute)


def test_real_archive_names() -> None:
    day = date(2021, 1, 1)
    assert real_archive_name("zip-2020", day) == "twitter-stream-2021-01-01.zip"
    assert real_archive_name("tar-2019", day) == "twitter_stream_2021_01_01.tar"
    assert real_archive_name("tar-2013", day) == "archiveteam-twitter-stream-2021-01.tar"
    assert real_archive_name("tar-2022", day) == "twitter-stream-20210101.tar"
    assert real_archive_name("tar-gz", day).endswith(".tar.gz")


def test_cli_enums_match_the_generator() -> None:
    assert tuple(layout.value for layout in Layout) == LAYOUTS
    assert tuple(api.value for api in Api) == APIS
    assert default_api("tar-2022") == "v2"
    assert {default_api(x) for x in LAYOUTS if x != "tar-2022"} == {"v1"}


@pytest.mark.parametrize("key", ALL_BUILDS)
def test_layout_opens_with_the_stdlib_and_names_match(built: dict[str, Built], key: str) -> None:
    path, truth = built[key]
    layout = key.split("/")[0]
    entries = list_entries(path)
    files = [name for name, is_dir in entries if not is_dir]
    dirs = {name.rstrip("/") for name, is_dir in entries if is_dir}
    assert files == list(truth.members)
    assert len(files) >= 2  # small archives still hold several minutes
    for name in files:
        assert re.fullmatch(MEMBER_PATTERNS[layout], name), name
        parent = name.rsplit("/", 1)[0]
        assert parent in dirs  # directory entries, as in the real archives
    if layout == "zip-2020":
        with zipfile.ZipFile(path) as zf:  # as in the real zip: deflated, unix attributes
            infos = [i for i in zf.infolist() if not i.is_dir()]
            assert {i.compress_type for i in infos} == {zipfile.ZIP_DEFLATED}
            assert {i.create_system for i in infos} == {3}
    if layout == "tar-gz":
        assert path.read_bytes()[:2] == b"\x1f\x8b"


def test_members_are_minutes_in_archive_local_time(built: dict[str, Built]) -> None:
    path, _ = built["zip-2020"]
    for name, data in read_members(path):
        y, mo, d, h, mi = (int(x) for x in name.removesuffix(".json.bz2").split("/"))
        local = datetime(y, mo, d, h, mi)
        begin = (local - PATH_UTC_OFFSET).replace(tzinfo=UTC).timestamp() * 1000
        for line in bz2.decompress(data).split(b"\r\n")[:-1]:
            if line:
                obj = orjson.loads(line)
                ts = int(obj.get("timestamp_ms") or obj[next(iter(obj))]["timestamp_ms"])
                assert begin <= ts < begin + 60_000


# --------------------------------------------------------------------------- the truth


@pytest.mark.parametrize("key", ALL_BUILDS)
def test_truth_equals_what_a_plain_reader_counts(built: dict[str, Built], key: str) -> None:
    path, truth = built[key]
    c = count(path)
    assert c.lines == truth.lines
    assert c.tweets == truth.tweet_lines == TWEETS
    assert c.deletes == truth.delete_notices
    assert c.other == truth.other_messages
    assert c.blank == truth.blank_lines >= 1
    assert c.retweets == truth.retweet_lines
    assert dict(c.langs) == truth.languages
    assert c.edges == list(truth.edges)
    assert c.deleted == list(truth.deleted_ids)
    assert c.raw_bytes == truth.uncompressed_bytes
    ids = set(c.tweet_ids)
    assert [d for d in c.deleted if d in ids] == list(truth.deleted_in_archive)
    with_line = Counter(kind for _, parent, kind in c.edges if parent in ids)
    assert {k: with_line[k] for k in ("reply", "quote")} == truth.edges_with_parent_line
    assert len(ids) == len(c.tweet_ids)  # no tweet twice
    assert {kind for *_, kind in c.edges} == {"reply", "quote"}


def test_truth_file_round_trips(built: dict[str, Built]) -> None:
    path, truth = built["tar-2019"]
    assert SynthTruth.read(truth_path(path)) == truth
    assert truth_path(path).name == path.name + ".truth.json"


def test_an_archive_under_its_name_always_has_its_own_truth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run interrupted as it renames the archive into place (over an earlier run's archive
    and truth) leaves its own truth and no archive, never an archive beside a truth that
    describes another; a run without truth removes an earlier one's."""
    out = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(out, tweets=200, seed=1, workers=1)
    rename = os.replace

    def interrupted(src: Any, dst: Any) -> None:
        if Path(dst) == out:
            raise KeyboardInterrupt
        rename(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_synthetic_archive(out, tweets=200, seed=2, workers=1)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == [truth_path(out).name]
    assert SynthTruth.read(truth_path(out)).seed == 2
    truth = write_synthetic_archive(out, tweets=200, seed=2, workers=1)
    assert SynthTruth.read(truth_path(out)) == truth
    write_synthetic_archive(out, tweets=200, seed=3, workers=1, truth=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_v1_archives_have_deletes_v2_archives_do_not(built: dict[str, Built]) -> None:
    v1, v2 = built["tar-2019"][1], built["tar-2022"][1]
    assert v1.delete_notices > 0.08 * TWEETS
    assert v1.deleted_in_archive  # some deletes name tweets of the archive
    assert v2.delete_notices == 0 and v2.other_messages >= 2


# --------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("layout", ["zip-2020", "tar-gz", "tar-2022"])
def test_same_arguments_give_identical_bytes(
    built: dict[str, Built], tmp_path: Path, layout: str
) -> None:
    path, _ = built[layout]
    again = tmp_path / "again"
    write_synthetic_archive(again, tweets=TWEETS, layout=layout, seed=SEED)
    assert again.read_bytes() == path.read_bytes()
    assert truth_path(again).read_bytes().replace(b'"again"', b"") == truth_path(
        path
    ).read_bytes().replace(f'"{path.name}"'.encode(), b"")


def test_worker_processes_do_not_change_the_bytes(built: dict[str, Built], tmp_path: Path) -> None:
    path, _ = built["tar-2019"]
    parallel = tmp_path / "parallel.tar"
    write_synthetic_archive(parallel, tweets=TWEETS, layout="tar-2019", seed=SEED, workers=2)
    assert parallel.read_bytes() == path.read_bytes()


def test_seed_changes_the_archive(built: dict[str, Built], tmp_path: Path) -> None:
    other = tmp_path / "other.tar"
    truth = write_synthetic_archive(other, tweets=TWEETS, layout="tar-2013", seed=SEED + 1)
    assert other.read_bytes() != built["tar-2013"][0].read_bytes()
    assert truth.edges != built["tar-2013"][1].edges


# --------------------------------------------------------------------------- bz2 members


def bz2_streams(data: bytes) -> list[bytes]:
    """Decompress stream by stream, as a reader that forgets multi-stream would start."""
    out = []
    while data:
        d = bz2.BZ2Decompressor()
        out.append(d.decompress(data))
        data = d.unused_data
    return out


def test_multistream_bz2_members_decompress_fully(built: dict[str, Built]) -> None:
    path, truth = built["zip-2020"]
    members = dict(read_members(path))
    assert truth.multistream_members
    assert set(truth.multistream_members) < set(truth.members)  # some single-stream too
    for name, data in members.items():
        streams = bz2_streams(data)
        full = bz2.decompress(data)
        assert b"".join(streams) == full
        if name in truth.multistream_members:
            assert len(streams) >= 2
            assert not streams[0].endswith(b"\n")  # cut mid-line, like pbzip2
        else:
            assert len(streams) == 1


def test_large_members_use_pbzip2_sized_streams(tmp_path: Path) -> None:
    path = tmp_path / "one-minute.zip"
    truth = write_synthetic_archive(
        path, tweets=700, layout="zip-2020", seed=SEED, start=datetime(2021, 1, 1, 23, 59)
    )
    assert truth.members == ("2021/01/01/23/59.json.bz2",)
    ((_, data),) = read_members(path)
    sizes = [len(s) for s in bz2_streams(data)]
    assert len(sizes) >= 3
    assert set(sizes[:-1]) == {BZ2_STREAM_BYTES} and 0 < sizes[-1] <= BZ2_STREAM_BYTES


# --------------------------------------------------------------------------- v1 realism


def test_v1_lines_are_serialised_like_twitter(built: dict[str, Built]) -> None:
    path, truth = built["tar-2019"]
    raw = b"".join(decompress(n, d) for n, d in read_members(path))
    assert raw.isascii()  # \uXXXX escapes, surrogate pairs for emoji
    assert raw.count(b"\n") == raw.count(b"\r\n") == truth.lines
    assert b"https:\\/\\/t.co\\/" in raw and b'"source":"\\u003ca href=' in raw
    assert b"\\ud83" in raw  # an emoji as a surrogate pair
    sizes = [len(x) for x in raw.split(b"\r\n") if x.startswith(b'{"created_at"')]
    assert 3_000 < statistics.mean(sizes) < 6_000  # the real sample: mean 5.2 kB


def test_v1_tweets_carry_real_fields(larger: tuple[Path, SynthTruth, Counted]) -> None:
    _, _, c = larger
    tweets = c.tweets_json
    for t in tweets:
        ts = int(t["timestamp_ms"])
        assert (int(t["id_str"]) >> 22) + TWEPOCH_MS == ts  # snowflake time
        created = datetime.strptime(t["created_at"], "%a %b %d %H:%M:%S %z %Y")
        assert int(created.timestamp()) == ts // 1000
        user = t["user"]
        assert user["id_str"] == str(user["id"]) and 0 < user["id"] < 2**63
        assert "profile_image_url_https" in user and "screen_name" in user
        joined = datetime.strptime(user["created_at"], "%a %b %d %H:%M:%S %z %Y")
        assert joined < created
        for key in ("hashtags", "urls", "user_mentions", "symbols"):
            assert key in t["entities"]
    truncated = [t for t in tweets if t["truncated"]]
    assert truncated
    for t in truncated:
        full = html.unescape(t["extended_tweet"]["full_text"])  # Twitter counts unescaped
        assert len(full) > 140 >= len(html.unescape(t["text"]))
        assert re.search(r"… https://t\.co/\w{10}$", t["text"])
    retweets = [t for t in tweets if "retweeted_status" in t]
    assert all(t["text"].startswith("RT @") for t in retweets)
    both = [t for t in retweets if "quoted_status" in t]
    assert both, "a retweet of a quote carries both objects"
    for t in both:
        assert t["quoted_status"]["id"] == t["retweeted_status"]["quoted_status"]["id"]
    photos = [t for t in tweets if "extended_entities" in t]
    assert photos, "some tweets carry a photo"
    for t in photos:
        (photo,) = t["extended_entities"]["media"]
        assert photo["type"] == "photo" and t["entities"]["media"] == [photo]
        a, b = photo["indices"]
        assert html.unescape(t["text"])[a:b] == photo["url"]
    quotes = [t for t in tweets if "quoted_status" in t and "retweeted_status" not in t]
    assert quotes and all(q["quoted_status"]["id"] == q["quoted_status_id"] for q in quotes)
    assert all("text" in q["quoted_status"] and "user" in q["quoted_status"] for q in quotes)


def test_reply_graph_is_realistic(larger: tuple[Path, SynthTruth, Counted]) -> None:
    _, truth, c = larger
    ids = set(c.tweet_ids)
    replies = [(child, parent) for child, parent, kind in c.edges if kind == "reply"]
    assert any(parent not in ids for _, parent in replies)  # parent outside the archive
    reply_ids = {child for child, _ in replies}
    assert any(parent in reply_ids for _, parent in replies)  # a reply to a reply
    assert all(parent < child for child, parent, _ in c.edges)  # parents are older
    children = Counter(parent for _, parent, _ in c.edges)
    assert max(children.values()) >= 10 * statistics.median(children.values())  # heavy tail
    sizes = sorted(n for *_, n, _ in truth.conversations)
    assert sizes[-1] >= 5 * statistics.median(sizes)


# --------------------------------------------------------------------------- texts


def test_texts_mix_lengths_languages_and_markup(larger: tuple[Path, SynthTruth, Counted]) -> None:
    _, truth, c = larger
    texts = [text_v1(t) for t in c.tweets_json if "retweeted_status" not in t]
    cleaned = [URL_OR_MENTION.sub("", t).strip() for t in texts]
    lengths = [len(t) for t in cleaned]
    assert sum(30 <= n <= 200 for n in lengths) / len(lengths) > 0.6
    assert 0.03 < sum(n < 20 for n in lengths) / len(lengths) < 0.3  # for the length filter
    dupes = sum(n - 1 for n in Counter(cleaned).values() if n > 1)
    assert 0 < dupes < 0.15 * len(cleaned)  # some exact duplicates ("happy new year!!")
    joined = "\n".join(texts)
    for marker in ("&amp;", "&lt;", "&gt;", "\n", "https://t.co/", "#"):
        assert marker in joined, marker
    assert re.search(r"[\U0001F300-\U0001FAFF]", joined)  # emoji
    langs = truth.languages
    assert max(langs, key=lambda k: langs[k]) == "en" and len(langs) >= 8
    by_lang = {t["lang"]: text_v1(t) for t in c.tweets_json}
    assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", by_lang["ja"])
    assert re.search(r"[\u0600-\u06ff]", by_lang["ar"])
    assert re.search(r"[\uac00-\ud7af]", by_lang["ko"])


def trigrams(text: str) -> set[str]:
    s = URL_OR_MENTION.sub("", text).lower()
    return {s[i : i + 3] for i in range(len(s) - 2)}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def test_a_conversation_shares_its_topic_vocabulary(
    larger: tuple[Path, SynthTruth, Counted],
) -> None:
    _, _, c = larger
    quotes = [
        (text_v1(t), text_v1(t["quoted_status"]))
        for t in c.tweets_json
        if "quoted_status" in t and "retweeted_status" not in t
    ]
    rng = random.Random(0)
    others = [q for _, q in quotes]
    rng.shuffle(others)
    paired = statistics.mean(jaccard(trigrams(a), trigrams(b)) for a, b in quotes)
    shuffled = statistics.mean(
        jaccard(trigrams(a), trigrams(b)) for (a, _), b in zip(quotes, others, strict=True)
    )
    assert len(quotes) >= 30
    assert paired > 2 * shuffled


# --------------------------------------------------------------------------- v2


def test_v2_lines_carry_references_and_includes(built: dict[str, Built]) -> None:
    for key in ("tar-2022", "zip-2020/v2"):
        path, truth = built[key]
        raw = b"".join(decompress(n, d) for n, d in read_members(path))
        assert b"\r\n" not in raw and not raw.isascii()  # UTF-8 lines, LF
        kinds: Counter[str] = Counter()
        for obj in count(path).tweets_json:
            data = obj["data"]
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z", data["created_at"])
            assert (int(data["id"]) >> 22) + TWEPOCH_MS >= 0 and data["text"]
            included = {t["id"]: t for t in obj["includes"].get("tweets", [])}
            users = {u["id"] for u in obj["includes"]["users"]}
            assert data["author_id"] in users
            assert obj["matching_rules"]
            for ref in data.get("referenced_tweets", []):
                kinds[ref["type"]] += 1
                assert ref["id"] in included  # the referenced tweet in full
                assert included[ref["id"]]["author_id"] in users
            if any(r["type"] == "retweeted" for r in data.get("referenced_tweets", [])):
                assert data["text"].startswith("RT @")
            media = {m["media_key"] for m in obj["includes"].get("media", [])}
            for key in data.get("attachments", {}).get("media_keys", []):
                kinds["photo"] += 1
                assert key in media
        assert set(kinds) == {"retweeted", "quoted", "replied_to", "photo"}
        assert truth.api == "v2"


# --------------------------------------------------------------------------- arguments and CLI


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tweets": 0}, "tweets"),
        ({"tweets": 10, "layout": "tar-2021"}, "tar-2021"),
        ({"tweets": 10, "api": "v3"}, "v3"),
        ({"tweets": 10, "layout": "tar-2022", "api": "v1"}, "v2 lines only"),
        ({"tweets": 10, "bz2_level": 0}, "bz2_level"),
        ({"tweets": 10, "workers": 0}, "workers"),
        ({"tweets": 10, "start": datetime(2010, 6, 1)}, "start"),
    ],
)
def test_bad_arguments_are_named(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        write_synthetic_archive(tmp_path / "x", **kwargs)


def test_timezone_aware_start_is_converted(tmp_path: Path) -> None:
    utc = datetime(2021, 1, 1, 17, 29, tzinfo=UTC)
    truth = write_synthetic_archive(tmp_path / "a.zip", tweets=5, start=utc)
    assert truth.members[0] == "2021/01/01/10/29.json.bz2"  # the real sample's first minute
    assert truth.start == (utc.replace(tzinfo=None) + PATH_UTC_OFFSET).isoformat()


def test_cli_writes_an_archive_and_one_summary_line(tmp_path: Path) -> None:
    out = tmp_path / "archiveteam-twitter-stream-2013-02.tar"
    result = CliRunner().invoke(
        app,
        ["twitter", "--out", str(out), "--tweets", "40", "--layout", "tar-2013",
         "--seed", "3", "--start", "2013-02-01T00:00"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "40 tweets" in result.output
    truth = SynthTruth.read(truth_path(out))
    assert truth.layout == "tar-2013" and truth.seed == 3 and truth.api == "v1"
    assert all(m.startswith("02/") for m in truth.members)


def test_cli_defaults_v2_for_tar_2022_and_refuses_v1(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "twitter-stream-20220301.tar"
    ok = runner.invoke(
        app, ["twitter", "--out", str(out), "--tweets", "20", "--layout", "tar-2022"]
    )
    assert ok.exit_code == 0, ok.output
    assert SynthTruth.read(truth_path(out)).api == "v2"
    bad = runner.invoke(
        app, ["twitter", "--out", str(out), "--tweets", "20", "--layout", "tar-2022", "--api", "v1"]
    )
    assert bad.exit_code != 0 and "v2 lines only" in bad.output
    unknown = runner.invoke(app, ["twitter", "--out", str(out), "--layout", "tar-2021"])
    assert unknown.exit_code != 0


# --------------------------------------------------------------------------- the real sample


def test_zip_layout_matches_the_real_sample(realdata: Path, built: dict[str, Built]) -> None:
    real = realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip"
    ours = built["zip-2020"][0]

    def shape(path: Path) -> tuple[set[tuple[bool, int, int]], bytes]:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            kinds = {(i.is_dir(), i.compress_type, i.external_attr) for i in infos}
            first = next(i for i in infos if not i.is_dir())
            stream = bz2.BZ2Decompressor().decompress(zf.read(first))
        return kinds, stream

    real_kinds, real_stream = shape(real)
    our_kinds, our_stream = shape(ours)
    assert our_kinds == real_kinds  # dir entries, deflated members, same attributes
    for stream in (real_stream, our_stream):  # CRLF, ASCII, \/ and a first line alike
        assert stream.isascii() and b"\r\n" in stream and b"\\/" in stream
        first = orjson.loads(stream.split(b"\r\n")[0])
        assert ("id_str" in first and "user" in first) or "delete" in first
    real_keys = set(orjson.loads(real_stream.split(b"\r\n")[0]))
    ours_keys = {
        k
        for line in our_stream.split(b"\r\n")[:-1]
        if line.startswith(b'{"created_at"')
        for k in orjson.loads(line)
    }
    assert real_keys <= ours_keys | {"display_text_range", "extended_entities"}
