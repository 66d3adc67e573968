"""The local bitext/ParaNMT engine publishes the Beam pipeline's release, byte for byte.

Each case builds the same inputs with ``engine="beam"`` (Beam's in-process runner) and with
the local engine on 1 worker (under the smallest ``--memory-limit``, which fits one) and on 2, and
compares every file of the releases, the manifest included: the pairs, the dead letters,
every count. Partitions are forced down to a few
kilobytes in one case, so duplicates and capped groups are spread over many partitions and
the exact cap's threshold must be found across them.
"""

from __future__ import annotations

import gzip
import hashlib
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from corpusforge.builds import bitext, paranmt
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.local import bitext as engine
from corpusforge.local import bitext_filter
from corpusforge.release.io import InputError
from corpusforge.sources.opus.streams import EXPANSION, decompressed_bytes
from tests.bitext.test_build_bitext import write_fixtures
from tests.bitext.test_build_paranmt import GOOD, LINES, write_paranmt

TATOEBA = Path("tatoeba-laser-v1")


def files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def same_on_every_engine(
    build: Callable[..., dict[str, Any]], config_of: Callable[[Path], Any], tmp_path: Path
) -> dict[str, str]:
    """Build with Beam, then locally on 1 and 2 workers; every release's files are equal."""
    beam = tmp_path / "beam"
    manifest = build(replace(config_of(beam), engine="beam"))
    assert manifest["accounting"]["balanced"]
    expected = files(beam)
    assert any(name.startswith("pairs/") for name in expected)
    for workers, memory_limit in ((1, 256), (2, None)):
        local = tmp_path / f"local-{workers}"
        config = replace(config_of(local), engine="local", workers=workers)
        build(replace(config, memory_limit=memory_limit))
        assert files(local) == expected, f"{workers} worker(s), --memory-limit {memory_limit}"
    return expected


def test_a_tight_memory_limit_makes_the_partitions_smaller() -> None:
    """Partitions are read once the filter workers have ended: only this process's own
    memory is set aside from the budget."""
    mib = 2**20
    assert engine.partition_bytes(None) == engine.PARTITION_BYTES
    assert engine.partition_bytes(12 * 2**30) == engine.PARTITION_BYTES  # never larger
    free = 384 * mib - engine.WRITE_MAIN_BYTES
    assert engine.partition_bytes(384 * mib) == free // engine.BYTES_PER_INPUT_BYTE
    assert engine.partition_bytes(384 * mib) < engine.PARTITION_BYTES
    assert engine.partition_bytes(engine.WRITE_MAIN_BYTES) == mib  # the floor


def test_two_pair_shards_are_written_at_once_only_where_both_fit() -> None:
    """Once the filter workers have ended, a build given two or more writes two pair shards
    at once only where two fit what filtering was given: its budget, or without one, this
    process and its workers as modelled."""
    mib = 2**20
    size, rows = 80 * mib, 250_000
    shard = min(engine.SHARD_BYTES_PER_INPUT_BYTE * size, engine.SHARD_BYTES_PER_ROW * rows)
    two = engine.WRITE_MAIN_BYTES + 2 * shard
    assert engine.floor_bytes(size, rows) == engine.WRITE_MAIN_BYTES + shard < two
    filtering = engine.MAIN_BYTES + 2 * engine.FILTER_WORKER_BYTES
    assert filtering < two  # default shards: the tail would plan more than filtering did
    for budget in (None, 12 * 2**30):  # no --memory-limit: half the machine's
        assert engine.shard_threads(budget, size, rows, workers=2) == 1
        assert engine.shard_threads(budget, size, rows, workers=16) == 2
        assert engine.shard_threads(budget, size, 10_000, workers=2) == 2
        assert engine.shard_threads(budget, size, 10_000, workers=1) == 1
    assert engine.shard_threads(two, size, rows, workers=16) == 2
    assert engine.shard_threads(two - 1, size, rows, workers=16) == 1


def test_every_format_with_bad_records_and_a_cap(tmp_path: Path) -> None:
    """One row per shard: pairs and dead letters spread over shards by their keys' hash."""
    inputs = tuple(write_fixtures(tmp_path / "in"))
    same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(
            inputs=inputs, out=str(out), max_pairs_per_lang=2, rows_per_shard=1
        ),
        tmp_path,
    )


@pytest.mark.slow  # nine builds of 3,000 real pairs: run by .ci/run
def test_real_tatoeba_languages_capped_over_many_partitions(
    realdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three real Tatoeba language pairs, capped at 150 of their ~1,000 pairs each, with the
    dedup partitions forced to a few kilobytes of input (dozens of partitions), and four
    shards per language pair."""
    monkeypatch.setattr(engine, "PARTITION_BYTES", 4096)
    names = ("deu", "fra", "ara")
    sides = tuple(
        str(realdata / TATOEBA / f"tatoeba.{lang}-eng.{side}")
        for lang in names
        for side in (lang, "eng")
    )
    expected = same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(
            inputs=sides, out=str(out), max_pairs_per_lang=150, seed=7, rows_per_shard=40
        ),
        tmp_path,
    )
    assert "pairs/tatoeba/en-de/part-00003-of-00004.parquet" in expected
    assert {name.split("/")[2] for name in expected if name.startswith("pairs/")} == {
        "en-de",
        "en-fr",
        "en-ar",
    }


def test_paranmt_with_reversed_duplicates_and_bad_lines(tmp_path: Path) -> None:
    lines = [*LINES, "\t".join((*GOOD[2], "0.55")), "\t".join((GOOD[2][1], GOOD[2][0], "0.6"))]
    uri = write_paranmt(tmp_path / "in" / "para.txt.gz")
    more = tmp_path / "in" / "more.txt"
    more.write_text("\n".join(lines) + "\n", encoding="utf-8")
    same_on_every_engine(
        paranmt.build,
        lambda out: ParaphraseConfig(inputs=(uri, str(more)), out=str(out)),
        tmp_path,
    )


def test_nothing_read_publishes_nothing(tmp_path: Path) -> None:
    junk = tmp_path / "notes.data"
    junk.write_text("nothing to see here\n", encoding="utf-8")
    out = tmp_path / "release"
    with pytest.raises(InputError, match="no input yielded a pair"):
        bitext.build(BitextConfig(inputs=(str(junk),), out=str(out), engine="local"))
    assert not out.exists()
    assert not list(tmp_path.glob(".release*"))  # no draft, lock or spill left behind


def test_a_cap_whose_threshold_rank_is_shared_by_many_pairs(
    realdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranks forced into three values, so hundreds of pairs tie at the cap's threshold: the
    local engine holds only ranks in its first pass and must break the tie by dedup key, as
    the Beam cap's (rank, dedup key) order does."""
    from corpusforge.transforms.bitext import opus

    def few_ranks(seed: int, dataset: str, group: str, dedup: str) -> tuple[int, str]:
        return int(dedup[0], 16) % 3, dedup

    monkeypatch.setattr(opus, "cap_rank", few_ranks)
    monkeypatch.setattr(bitext_filter, "cap_rank", few_ranks)
    monkeypatch.setattr(engine, "PARTITION_BYTES", 8192)
    sides = tuple(str(realdata / TATOEBA / f"tatoeba.deu-eng.{side}") for side in ("deu", "eng"))
    expected = same_on_every_engine(
        bitext.build,
        lambda out: BitextConfig(inputs=sides, out=str(out), max_pairs_per_lang=400),
        tmp_path,
    )
    assert "pairs/tatoeba/en-de/part-00000-of-00001.parquet" in expected


def test_compressed_and_zipped_inputs_are_sized_by_what_they_hold(tmp_path: Path) -> None:
    """The partitions (and the memory floor) are sized from an input's decompressed bytes:
    sized from a gzip's own, a 2M-line build held partitions five times too large (698 MiB
    summed PSS against 397 for the same lines plain). A zip's members say their sizes; a
    gzip, bz2 or xz file counts ``EXPANSION`` times, more than text reaches."""
    text = b"".join(b"Ein Satz, Nummer %d.\n" % i for i in range(5_000))
    plain = tmp_path / "t.de-en.de"
    plain.write_bytes(text)
    gz = tmp_path / "t.de-en.de.gz"
    gz.write_bytes(gzip.compress(text))
    zipped = tmp_path / "de-en.txt.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("T.de-en.de", text)
        zf.writestr("T.de-en.en", text[:100])
    not_zip = tmp_path / "pk.txt"
    not_zip.write_bytes(b"PK but no zip\n")
    assert decompressed_bytes(str(plain)) == len(text)
    assert decompressed_bytes(str(gz)) == gz.stat().st_size * EXPANSION >= len(text)
    assert decompressed_bytes(str(zipped)) == len(text) + 100
    assert decompressed_bytes(str(not_zip)) == not_zip.stat().st_size
    assert decompressed_bytes(str(tmp_path / "missing.gz")) == 0
