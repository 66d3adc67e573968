"""One stream line (NDJSON bytes) -> tweet records, a delete notice, another message, or a reason.

Both stream formats are understood, also mixed in one member:

- API v1.1 (to 2022-02): a line with an id and ``user`` is a tweet; ``{"delete": …}`` notices;
  ``limit``, ``scrub_geo``, ``status_withheld``, ``user_withheld``, ``warning``,
  ``disconnect`` messages and blank keep-alives.
- API v2 (from 2022-03): ``{"data": {…}, "includes": {"tweets": […], "users": […]}}`` with
  ``referenced_tweets`` of type ``replied_to`` / ``quoted`` / ``retweeted``; also a response
  page, ``{"data": [{…}, …], "includes": …, "errors": […], "meta": …}``, whose every
  ``data`` tweet is read. The partial ``errors`` a v2 line carries (referenced tweets the API
  could not return) are counted in :attr:`ParsedLine.api_errors`, never a reason to drop it.

A retweet's own text is a truncated ``RT @x: …``, so a retweet line yields the retweeted
tweet instead of itself. Every embedded status (``quoted_status``, ``retweeted_status``, the
quoted status inside a retweet, v2 ``includes.tweets``) is yielded as a record of its own with
``embedded_only=True``: such records are most of the parents that replies and quotes point
to. Times come from ``timestamp_ms`` / ``created_at`` in UTC, never from the member path.

Records are plain dicts with the columns of ``schemas/tweet.v1.json``, so they can be written
to Parquet as they are. No user id, screen name or user object is carried over.

A v1 line is decoded into only the fields read here (:class:`_V1Line`, ``msgspec``): the rest
of the line (the user object, entities, a third of a tweet's bytes and more) is checked as
JSON but never built into Python objects, which halves a line's decoding. Any line that
decoder cannot take as a v1 tweet or a delete notice (another type where an object is
expected, another message, a v2 line, JSON it refuses, bytes not UTF-8) is parsed whole by
``orjson``, as every line once was, so it is classified as before. One difference remains: a
number beyond a double's range in a field never read (``1e400`` in a user object) keeps the
tweet, where ``orjson`` refused the whole line as JSON.
"""

from __future__ import annotations

import calendar
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

import msgspec
import orjson

OTHER_MESSAGE_KEYS = (
    "limit",
    "scrub_geo",
    "status_withheld",
    "user_withheld",
    "warning",
    "disconnect",
    "friends",
    "event",
    "control",
    "errors",
)
_V1_TIME = "%a %b %d %H:%M:%S %z %Y"


class ParseReason(enum.StrEnum):
    """Why a line could not be used."""

    INVALID_UTF8 = "parse_invalid_utf8"
    INVALID_JSON = "parse_invalid_json"
    NOT_AN_OBJECT = "parse_not_an_object"
    UNKNOWN_MESSAGE = "parse_unknown_message"
    BAD_TWEET = "parse_bad_tweet"
    BAD_DELETE = "parse_bad_delete"


class LineKind(enum.StrEnum):
    """What a stream line turned out to be."""

    TWEET = "tweet"
    DELETE = "delete"
    OTHER = "other"
    DEAD = "dead"


@dataclass(slots=True)
class ParsedLine:
    """The result of :func:`parse_line`.

    Attributes:
        kind: tweet, delete notice, other message, or dead (unusable).
        records: tweet records (for a tweet line: itself or the retweeted status first,
            then embedded statuses).
        deleted_id: the tweet id a delete notice names.
        message: for ``other``: which message (``limit``, ``blank``, …).
        is_retweet: the tweet line was a retweet (its own record is not kept).
        reason: for ``dead``: the reason code.
        detail: for ``dead``: a human-readable explanation.
        embedded_problems: embedded statuses that were skipped as malformed, with details.
        api_errors: entries of a v2 line's ``errors`` list (tweets the API could not return).
    """

    kind: LineKind
    records: list[dict[str, Any]] = field(default_factory=list)
    deleted_id: int | None = None
    message: str | None = None
    is_retweet: bool = False
    reason: ParseReason | None = None
    detail: str = ""
    embedded_problems: list[str] = field(default_factory=list)
    api_errors: int = 0


class _BadRecord(ValueError):
    """A status object lacks what a tweet record needs."""


def parse_line(line: bytes, archive: str, member: str, line_no: int) -> ParsedLine:
    """Classify and parse one stream line.

    Args:
        line: the raw line, without its newline.
        archive: archive file name (origin).
        member: member name inside the archive (origin).
        line_no: 1-based line number in the member (origin).

    Returns:
        A :class:`ParsedLine`; never raises on bad input.
    """
    if not line.strip():
        return ParsedLine(LineKind.OTHER, message="blank")
    obj: Any = _v1_fields(line)
    if obj is None:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as uexc:
                return _dead(ParseReason.INVALID_UTF8, str(uexc))
            return _dead(ParseReason.INVALID_JSON, str(exc))
        if not isinstance(obj, dict):
            return _dead(ParseReason.NOT_AN_OBJECT, f"a JSON {type(obj).__name__}, not an object")
    origin = (archive, member, line_no)
    try:
        if "delete" in obj:
            return _parse_delete(obj["delete"])
        data = obj.get("data")
        if isinstance(data, dict) or (isinstance(data, list) and data):
            return _parse_v2(obj, origin)
        if _is_v1_tweet(obj):
            return _parse_v1(obj, origin)
    except _BadRecord as exc:
        return _dead(ParseReason.BAD_TWEET, str(exc))
    for key in OTHER_MESSAGE_KEYS:
        if key in obj:
            return ParsedLine(LineKind.OTHER, message=key)
    keys = ",".join(sorted(obj)[:8])
    return _dead(ParseReason.UNKNOWN_MESSAGE, f"no known message type; keys: {keys}")


class _Extended(TypedDict, total=False):
    full_text: Any


class _V1Line(TypedDict, total=False):
    """What :func:`_parse_delete` and :func:`_parse_v1` read of a line, a quoted status or a
    retweeted one: a dict of the keys present (as ``orjson`` gives them), ``user`` and
    ``data`` kept as raw bytes, whose presence alone is read."""

    id: Any
    id_str: Any
    user: msgspec.Raw
    text: Any
    full_text: Any
    extended_tweet: _Extended | None
    lang: Any
    timestamp_ms: Any
    created_at: Any
    in_reply_to_status_id: Any
    in_reply_to_status_id_str: Any
    quoted_status_id: Any
    quoted_status_id_str: Any
    quoted_status: _V1Line | None
    retweeted_status: _V1Line | None
    delete: Any
    data: msgspec.Raw


# a number beyond a double's range in a field read is refused, as orjson refuses it
_V1_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder(_V1Line)


def _v1_fields(line: bytes) -> dict[str, Any] | None:
    """The fields of a v1 tweet or delete notice line, which :func:`parse_line` then reads as
    it reads ``orjson``'s dict; ``None`` for any other line, and for any line ``orjson`` is
    needed to classify (see the module's docstring)."""
    if line.startswith(b'{"data"'):
        return None
    try:
        obj: dict[str, Any] = _V1_DECODER.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not line.isascii():  # the fields skipped are checked as JSON, not as UTF-8
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if "delete" in obj or ("data" not in obj and _is_v1_tweet(obj)):
        return obj
    return None


def _is_v1_tweet(obj: Mapping[str, Any]) -> bool:
    return ("id_str" in obj or "id" in obj) and "user" in obj


def _dead(reason: ParseReason, detail: str) -> ParsedLine:
    return ParsedLine(LineKind.DEAD, reason=reason, detail=detail[:500])


def _parse_delete(body: Any) -> ParsedLine:
    status = body.get("status") if isinstance(body, dict) else None
    if not isinstance(status, dict):
        return _dead(ParseReason.BAD_DELETE, "delete notice without a status object")
    try:
        deleted = _id(status, "id_str", "id")
    except _BadRecord as exc:
        return _dead(ParseReason.BAD_DELETE, str(exc))
    if deleted is None:
        return _dead(ParseReason.BAD_DELETE, "delete notice without a status id")
    return ParsedLine(LineKind.DELETE, deleted_id=deleted)


# ---------------------------------------------------------------------------------------
# API v1.1


def _parse_v1(obj: dict[str, Any], origin: tuple[str, str, int]) -> ParsedLine:
    parsed = ParsedLine(LineKind.TWEET)
    retweeted = obj.get("retweeted_status")
    if isinstance(retweeted, dict):
        parsed.is_retweet = True
        _id(obj, "id_str", "id")  # the retweet itself must still be a well-formed tweet
        parsed.records.append(_v1_record(retweeted, origin, embedded=True))
        _v1_quoted(retweeted, origin, parsed)
        # a retweet of a quote also carries the quoted status at top level: same id, merged later
    else:
        parsed.records.append(_v1_record(obj, origin, embedded=False))
        _v1_quoted(obj, origin, parsed)
    return parsed


def _v1_quoted(status: Mapping[str, Any], origin: tuple[str, str, int], parsed: ParsedLine) -> None:
    quoted = status.get("quoted_status")
    if not isinstance(quoted, dict):
        return
    try:
        parsed.records.append(_v1_record(quoted, origin, embedded=True))
    except _BadRecord as exc:
        parsed.embedded_problems.append(f"quoted_status: {exc}")


def _v1_record(
    s: Mapping[str, Any], origin: tuple[str, str, int], *, embedded: bool
) -> dict[str, Any]:
    tweet_id = _id(s, "id_str", "id")
    if tweet_id is None:
        raise _BadRecord("status without an id")
    extended = s.get("extended_tweet")
    text = extended.get("full_text") if isinstance(extended, dict) else None
    if not isinstance(text, str):
        text = s.get("full_text")
    if not isinstance(text, str):
        text = s.get("text")
    if not isinstance(text, str):
        raise _BadRecord(f"status {tweet_id} has no text")
    quote_of = _id(s, "quoted_status_id_str", "quoted_status_id")
    if quote_of is None and isinstance(s.get("quoted_status"), dict):
        quote_of = _id(s["quoted_status"], "id_str", "id")
    return _record(
        tweet_id,
        created_at=_v1_time(s),
        lang=s.get("lang") if isinstance(s.get("lang"), str) else None,
        text=text,
        reply_to_id=_id(s, "in_reply_to_status_id_str", "in_reply_to_status_id"),
        quote_of_id=quote_of,
        embedded=embedded,
        origin=origin,
    )


def _v1_time(s: Mapping[str, Any]) -> int | None:
    ms = s.get("timestamp_ms")
    if ms is not None:
        try:
            return int(ms)
        except (TypeError, ValueError):
            pass
    created = s.get("created_at")
    if isinstance(created, str):
        try:
            return _utc_ms(created)
        except ValueError:
            return None
    return None


_DAYS = frozenset(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))
_MONTHS = {m: i for i, m in enumerate(calendar.month_abbr) if m}


def _utc_ms(created: str) -> int:
    """``created_at`` (``Wed Oct 10 20:19:24 +0000 2018``) in ms since the epoch.

    Twitter's own form (UTC, two-digit day) is read by slicing; anything else goes to
    ``strptime``, which this equals on every string it reads (``test_parse.py``).

    Raises:
        ValueError: not a time in ``_V1_TIME``, or not a valid date.
    """
    c = created
    if (
        len(c) == 30
        and c[20:26] == "+0000 "
        and c[3] == c[7] == c[10] == c[19] == " "
        and c[13] == c[16] == ":"
        and c[:3] in _DAYS
        and c[4:7] in _MONTHS
        and (digits := c[8:10] + c[11:13] + c[14:16] + c[17:19] + c[26:]).isascii()
        and digits.isdigit()
    ):
        moment = datetime(
            int(c[26:]), _MONTHS[c[4:7]], int(c[8:10]), int(c[11:13]), int(c[14:16]), int(c[17:19])
        )
        return calendar.timegm(moment.timetuple()) * 1000
    return int(datetime.strptime(c, _V1_TIME).timestamp() * 1000)


# ---------------------------------------------------------------------------------------
# API v2


def _parse_v2(obj: dict[str, Any], origin: tuple[str, str, int]) -> ParsedLine:
    """A v2 line: one tweet (``data`` an object) or a response page (``data`` a list).

    On a page, every ``data`` item is read as a tweet line of its own would be; a malformed
    item is an embedded problem (the rest of the page is kept); the line is a retweet only
    when every item is one.
    """
    data = obj["data"]
    parsed = ParsedLine(LineKind.TWEET)
    errors = obj.get("errors")
    parsed.api_errors = len(errors) if isinstance(errors, list) else 0
    if isinstance(data, dict):
        parsed.is_retweet = _add_v2_tweet(parsed, data, origin)
    else:
        retweets = 0
        for i, item in enumerate(data):
            try:
                if not isinstance(item, dict):
                    raise _BadRecord("data item is not an object")
                retweets += _add_v2_tweet(parsed, item, origin)
            except _BadRecord as exc:
                parsed.embedded_problems.append(f"data[{i}]: {exc}")
        if len(parsed.embedded_problems) == len(data):
            raise _BadRecord(f"no readable tweet in a page of {len(data)}")
        parsed.is_retweet = retweets == len(data)
    includes = obj.get("includes")
    included = includes.get("tweets") if isinstance(includes, dict) else None
    for tweet in included if isinstance(included, list) else ():
        try:
            if not isinstance(tweet, dict):
                raise _BadRecord("includes.tweets item is not an object")
            parsed.records.append(_v2_record(tweet, _v2_refs(tweet), origin, embedded=True))
        except _BadRecord as exc:
            parsed.embedded_problems.append(f"includes.tweets: {exc}")
    if parsed.is_retweet and not parsed.records:
        parsed.embedded_problems.append("retweet without the retweeted tweet in includes")
    return parsed


def _add_v2_tweet(
    parsed: ParsedLine, data: Mapping[str, Any], origin: tuple[str, str, int]
) -> bool:
    """Append one v2 ``data`` tweet's record (none for a retweet); True for a retweet."""
    refs = _v2_refs(data)
    if "retweeted" in refs:
        if _id(data, "id") is None:
            raise _BadRecord("v2 tweet without an id")
        return True
    parsed.records.append(_v2_record(data, refs, origin, embedded=False))
    return False


def _v2_refs(data: Mapping[str, Any]) -> dict[str, int]:
    refs: dict[str, int] = {}
    for ref in data.get("referenced_tweets") or ():
        if isinstance(ref, dict) and isinstance(ref.get("type"), str):
            ref_id = _id(ref, "id")
            if ref_id is not None:
                refs.setdefault(ref["type"], ref_id)
    return refs


def _v2_record(
    data: Mapping[str, Any],
    refs: Mapping[str, int],
    origin: tuple[str, str, int],
    *,
    embedded: bool,
) -> dict[str, Any]:
    tweet_id = _id(data, "id")
    if tweet_id is None:
        raise _BadRecord("v2 tweet without an id")
    note = data.get("note_tweet")
    text = note.get("text") if isinstance(note, dict) else None
    if not isinstance(text, str):
        text = data.get("text")
    if not isinstance(text, str):
        raise _BadRecord(f"v2 tweet {tweet_id} has no text")
    return _record(
        tweet_id,
        created_at=_iso_time(data.get("created_at")),
        lang=data.get("lang") if isinstance(data.get("lang"), str) else None,
        text=text,
        reply_to_id=refs.get("replied_to"),
        quote_of_id=refs.get("quoted"),
        embedded=embedded,
        origin=origin,
    )


def _iso_time(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------


def _id(obj: Mapping[str, Any], *keys: str) -> int | None:
    """The first present id among ``keys``, as an int; ids may be strings or numbers."""
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        if isinstance(value, bool):
            raise _BadRecord(f"{key} is a boolean")
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise _BadRecord(f"{key}={str(value)[:40]!r} is not an integer id") from None
        if not 0 < number < 1 << 63:
            raise _BadRecord(f"{key}={number} is outside the int64 id range")
        return number
    return None


def _record(
    tweet_id: int,
    *,
    created_at: int | None,
    lang: str | None,
    text: str,
    reply_to_id: int | None,
    quote_of_id: int | None,
    embedded: bool,
    origin: tuple[str, str, int],
) -> dict[str, Any]:
    return {
        "id": tweet_id,
        "created_at": created_at,
        "lang": lang,
        "text": text,
        "reply_to_id": reply_to_id,
        "quote_of_id": quote_of_id,
        "embedded_only": embedded,
        "origin_archive": origin[0],
        "origin_member": origin[1],
        "origin_line": origin[2],
    }


def merge_records(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Merge the records of one tweet id into the one to keep, whatever their order.

    A record seen as a stream line of its own beats an embedded copy; then the longer text
    (a full text beats a truncated one); then the smaller origin. Reply and quote links, the
    language and the time are filled, in that same order, from the first record that has them.
    """
    ranked = sorted(records, key=_rank)
    merged = dict(ranked[0])
    merged["embedded_only"] = all(r["embedded_only"] for r in ranked)
    for key in ("reply_to_id", "quote_of_id", "lang", "created_at"):
        if merged[key] is None:
            merged[key] = next((r[key] for r in ranked if r[key] is not None), None)
    return merged


def _rank(r: Mapping[str, Any]) -> tuple[bool, int, str, str, int]:
    return (
        bool(r["embedded_only"]),
        -len(r["text"]),
        r["origin_archive"],
        r["origin_member"],
        r["origin_line"],
    )
