"""The accounting identities (``release/accounting.py``), and what a build does when they fail.

A build checks its accounting before it publishes: one that does not balance (here a count
is bent on purpose) publishes nothing, the release already there stays as it was, and the
command says so in one line and exits 3.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from corpusforge.builds import paranmt as paranmt_build
from corpusforge.builds import twitter as twitter_build
from corpusforge.cli import app
from corpusforge.config.bitext import ParaphraseConfig
from corpusforge.inspect.validate import validate_release
from corpusforge.release import pipeline
from corpusforge.release.accounting import (
    AccountingError,
    pair_accounting,
    require_balanced,
    twitter_accounting,
)
from corpusforge.synth.twitter import write_synthetic_archive
from tests.bitext.test_build_paranmt import write_paranmt

# ---------------------------------------------------------------------------------------
# The identities, on inline numbers


def _twitter_numbers() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    counts = {
        "lines_read": 10,
        "tweets": 7,
        "delete_notices": 1,
        "other_messages": 1,
        "dead_letter_lines": 1,
        "dead_letter_members": 0,
        "dead_letter_archives": 0,
        "embedded_skipped": 0,
        "dead_letter": 1,
        "members_listed": 2,
        "members_read": 2,
        "records_in": 7,
        "records_lang_not_selected": 2,
        "records_outside_conversations": 3,
        "records_in_conversations": 2,
        "tweets_distinct": 7,
        "tweets_eligible": 6,
        "dropped": {"clean_too_short": 1, "qt.pair_parent_missing": 1},
    }
    datasets: dict[str, Any] = {
        d: {"rows": 0, "candidates": 0, "dropped": {}} for d in ("qt", "rp", "coqt", "corp")
    }
    datasets["qt"] = {"rows": 1, "candidates": 2, "dropped": {"pair_parent_missing": 1}}
    datasets["all"] = {"rows": 1}
    files = [
        {"path": "dead_letter/a-1/part-00000-of-00001.parquet", "rows": 1},
        {"path": "pairs/qt/part-00000-of-00001.parquet", "rows": 1},
        {"path": "pairs/all/part-00000-of-00001.parquet", "rows": 1},
    ]
    return counts, datasets, files


def test_twitter_identities_close() -> None:
    acc = twitter_accounting(*_twitter_numbers())
    assert acc.balanced, acc.failures()
    names = [i["name"] for i in acc.recorded]
    assert names[:4] == [
        "lines_read == tweets + delete_notices + other_messages + dead_letter_lines",
        "members_listed == members_read",
        "dead_letter == rows in dead_letter/",
        "tweets_distinct == tweets_eligible + tweet-level drops",
    ]
    assert acc.to_manifest() == {"balanced": True, "identities": acc.recorded}


def test_records_in_is_checked_though_not_recorded() -> None:
    counts, datasets, files = _twitter_numbers()
    counts["records_in"] += 1
    acc = twitter_accounting(counts, datasets, files)
    assert all(i["holds"] for i in acc.recorded)
    assert not acc.balanced
    assert acc.failures() == [
        "records_in == records_lang_not_selected + records_outside_conversations + "
        "records_in_conversations: 8 != 7"
    ]
    with pytest.raises(AccountingError, match=r"^out: the accounting does not balance \(records"):
        require_balanced(acc, "out")


def test_a_missing_count_is_noted_not_raised() -> None:
    counts, datasets, files = _twitter_numbers()
    del counts["members_read"]
    acc = twitter_accounting(counts, datasets, files)
    assert not acc.balanced
    assert [name for name, _ in acc.missing] == ["members_listed == members_read"]
    assert "members_read" in acc.failures()[0]


def test_pair_identities_per_language_pair() -> None:
    counts = {
        "lines_read": 5,
        "pairs_read": 4,
        "dead_letter_lines": 1,
        "skipped": {},
        "rows": 3,
        "dead_letter": 1,
        "dropped": {"lang_mismatch": 1},
    }
    tally = {"rows": 3, "candidates": 4, "dropped": {"lang_mismatch": 1}}
    datasets = {"d": {**tally, "lang_pairs": {"en-de": dict(tally)}}}
    files = [
        {"path": "pairs/d/en-de/part-00000-of-00001.parquet", "rows": 3},
        {"path": "dead_letter/part-00000-of-00001.parquet", "rows": 1},
    ]
    assert pair_accounting(counts, datasets, files).balanced
    files[0]["rows"] = 2
    failed = {i["name"] for i in pair_accounting(counts, datasets, files).identities}
    assert "d en-de: rows == rows in pairs/d/en-de/" in failed
    assert not pair_accounting(counts, datasets, files).balanced


# ---------------------------------------------------------------------------------------
# A build that does not balance publishes nothing


def _hashes(release: Path) -> dict[str, str]:
    return {
        str(f.relative_to(release)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(release.rglob("*"))
        if f.is_file()
    }


def _bent(original: Callable[..., Any], key: str) -> Callable[..., Any]:
    """``original`` (an ``assemble_counts``), with ``counts[key]`` one too high."""

    def bent(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        result[0][key] += 1
        return result

    return bent


def _cli(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, [*args, "--quiet"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, [line for line in result.output.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("key", "identity"),
    [("tweets", "lines_read == tweets"), ("records_in", "records_in == records_lang")],
)
def test_an_unbalanced_twitter_build_keeps_the_old_release(
    key: str, identity: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(archive, tweets=300, layout="zip-2020", seed=1)
    out = tmp_path / "release"
    build = ["twitter", "build", str(archive), "--out", str(out), "--benchmark-queries", "0"]
    assert _cli(*build)[0] == 0
    before = _hashes(out)

    monkeypatch.setattr(twitter_build, "assemble_counts", _bent(twitter_build.assemble_counts, key))
    code, lines = _cli(*build, "--seed", "7")  # another release would have replaced it
    assert code == 3
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {out}: the accounting does not balance ({identity}")
    assert "nothing published" in lines[0]
    assert _hashes(out) == before
    assert not (tmp_path / ".release.draft").exists()
    assert validate_release(out).ok


def test_an_unbalanced_paranmt_build_keeps_the_old_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipelines.paranmt_pairs import run

    uri = write_paranmt(tmp_path / "in" / "para-nmt-sample.txt.gz")
    out = tmp_path / "release"
    assert _cli("paranmt", "build", uri, "--out", str(out))[0] == 0
    before = _hashes(out)

    monkeypatch.setattr(pipeline, "assemble_counts", _bent(pipeline.assemble_counts, "lines_read"))
    code, lines = _cli(
        "paranmt", "build", uri, "--out", str(out), "--min-score", "0.5", "--engine", "beam"
    )
    assert code == 3
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {out}: the accounting does not balance (lines_read")
    assert _hashes(out) == before
    assert not (tmp_path / ".release.draft").exists()

    capsys.readouterr()
    assert run([f"--input={uri}", f"--out={out}", "--engine=beam"]) == 3  # the Beam entry point
    assert "the accounting does not balance" in capsys.readouterr().err
    assert _hashes(out) == before

    config = ParaphraseConfig(inputs=(uri,), out=str(out), dataset="other", engine="local")
    with pytest.raises(AccountingError, match="nothing published"):
        paranmt_build.build(config)  # the local engine publishes the same way
    assert _hashes(out) == before
    assert not (tmp_path / ".release.draft").exists()
    assert validate_release(out).ok
