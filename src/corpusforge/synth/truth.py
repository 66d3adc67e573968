"""The ground truth of a synthetic archive: what a correct reader must find in it.

Turns the planner's counts, edges and deletes into a ``SynthTruth``, written beside the
archive as ``FILE.truth.json`` (``truth_path``) and read back by ``SynthTruth.read``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson


@dataclass(frozen=True)
class SynthTruth:
    """What a correct reader must find in a synthetic archive.

    Tweet lines are v1 lines with ``id_str`` and ``user`` or v2 lines with ``data``.
    ``edges`` come from tweet lines that are not retweets: ``(id, in_reply_to_status_id,
    "reply")`` and ``(id, quoted_status_id, "quote")`` (v2: ``referenced_tweets`` of type
    ``replied_to`` / ``quoted``); a tweet that both replies and quotes gives two edges.
    Quotes and retweets embedded inside retweets give no edge.

    Attributes:
        archive: file name of the archive.
        layout: one of ``LAYOUTS``.
        api: ``v1`` or ``v2``.
        seed: the generator seed.
        start: archive-local time of the first member, ISO 8601.
        members: member paths (files only), in archive order.
        multistream_members: bz2 members made of two or more concatenated streams.
        lines: every line, blank keep-alives included.
        tweet_lines: lines holding a tweet (retweets included).
        delete_notices: ``{"delete": ...}`` lines.
        other_messages: the rest: ``limit`` / ``errors`` notices and blank keep-alives.
        blank_lines: the blank keep-alives among ``other_messages``.
        retweet_lines: tweet lines that are retweets.
        uncompressed_bytes: sum of the decompressed member sizes.
        languages: tweet lines per top-level ``lang`` (v2: ``data.lang``).
        edges: ``(child_id, parent_id, kind)`` with kind ``reply`` or ``quote``, in line
            order.
        edges_with_parent_line: per kind, edges whose parent is itself a tweet line of
            the archive (a v1 reply pair needs that; quotes carry their parent).
        deleted_ids: status ids named by delete notices, in line order.
        deleted_in_archive: those of ``deleted_ids`` that are tweet lines of the archive.
        conversations: ``(root_id, lang, topic, child_lines, root_in_archive)`` for each
            conversation with at least one reply, quote or retweet line; ``topic`` keys
            the vocabulary its texts share.
    """

    archive: str
    layout: str
    api: str
    seed: int
    start: str
    members: tuple[str, ...]
    multistream_members: tuple[str, ...]
    lines: int
    tweet_lines: int
    delete_notices: int
    other_messages: int
    blank_lines: int
    retweet_lines: int
    uncompressed_bytes: int
    languages: dict[str, int] = field(default_factory=dict)
    edges: tuple[tuple[int, int, str], ...] = ()
    edges_with_parent_line: dict[str, int] = field(default_factory=dict)
    deleted_ids: tuple[int, ...] = ()
    deleted_in_archive: tuple[int, ...] = ()
    conversations: tuple[tuple[int, str, int, int, bool], ...] = ()

    def to_json(self) -> bytes:
        """The truth as indented JSON (ids as JSON integers)."""
        return orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2)

    @classmethod
    def read(cls, path: Path | str) -> SynthTruth:
        """Load a ``FILE.truth.json`` written by ``write_synthetic_archive``.

        Args:
            path: the truth file.

        Returns:
            The ``SynthTruth`` it holds.
        """
        raw = orjson.loads(Path(path).read_bytes())
        return cls(
            **{
                **raw,
                "members": tuple(raw["members"]),
                "multistream_members": tuple(raw["multistream_members"]),
                "edges": tuple((int(c), int(p), str(k)) for c, p, k in raw["edges"]),
                "deleted_ids": tuple(raw["deleted_ids"]),
                "deleted_in_archive": tuple(raw["deleted_in_archive"]),
                "conversations": tuple(
                    (int(r), str(lang), int(t), int(n), bool(a))
                    for r, lang, t, n, a in raw["conversations"]
                ),
            }
        )


def truth_path(out: Path | str) -> Path:
    """Where the truth of archive ``out`` is written: ``out + ".truth.json"``."""
    return Path(str(out) + ".truth.json")
