"""``write_card``: README.md with the manifest's numbers, valid PNGs, identical bytes twice."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import pytest

from corpusforge.inspect.card import DPI, sample_pairs, write_card
from corpusforge.inspect.stats import read_manifest
from corpusforge.inspect.validate import validate_release
from tests.release import copy_release, real_release, synthetic_release

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def carded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    release = copy_release(synthetic_release(tmp_path_factory), tmp_path_factory.mktemp("card"))
    write_card(str(release))
    return release


def _digests(release: Path) -> dict[str, str]:
    files = [release / "README.md", *sorted((release / "card").glob("*.png"))]
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def _png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == PNG_SIGNATURE
    chunks, i = [], 8
    while i < len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        chunks.append((data[i + 4 : i + 8], data[i + 8 : i + 8 + n]))
        i += 12 + n
    return chunks


def test_the_card_mentions_the_manifest_counts(carded: Path) -> None:
    card = (carded / "README.md").read_text(encoding="utf-8")
    manifest = read_manifest(carded)
    assert card.startswith("---\npretty_name:")
    for name, ds in manifest["datasets"].items():
        assert f"| `{name}` | {ds['rows']:,} |" in card
    for name, b in manifest["benchmarks"].items():
        assert f"| `{name}` | {b['rows']:,} | {b['requested']:,} |" in card
    counts = manifest["counts"]
    assert f"| stream lines read | {counts['lines_read']:,} |" in card
    assert f"delete_notices {counts['delete_notices']:,}" in card
    for archive in manifest["inputs"]:
        assert archive["sha256"] in card
    assert f"corpusforge {manifest['corpusforge_version']}" in card
    for needle in (
        'load_dataset("parquet", data_files={"train": "release/pairs/all/*.parquet"})',
        "pl.scan_parquet(",
        "MultipleNegativesRankingLoss(model)",
        "Archive Team",
        "Deletions honoured",
        "no user ids",
        "URLs removed, @mentions removed",
        "![funnel](card/funnel.png)",
        "![text lengths](card/lengths.png)",
    ):
        assert needle in card, needle


def test_the_plots_are_valid_pngs_without_varying_metadata(carded: Path) -> None:
    plots = sorted((carded / "card").glob("*.png"))
    assert [p.name for p in plots] == ["funnel.png", "lengths.png"]
    for plot in plots:
        chunks = _png_chunks(plot.read_bytes())
        kinds = [kind for kind, _ in chunks]
        assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
        assert not {b"tEXt", b"iTXt", b"zTXt", b"tIME"} & set(kinds)
        width, height = struct.unpack(">II", chunks[0][1][:8])
        assert width == 10 * DPI and height >= 2 * DPI


def test_two_card_runs_write_identical_bytes(carded: Path) -> None:
    before = _digests(carded)
    write_card(str(carded))
    assert _digests(carded) == before


def test_the_card_leaves_the_release_valid(carded: Path) -> None:
    report = validate_release(carded)
    assert report.ok, report.failures


def test_samples_do_not_depend_on_sharding(carded: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    files = sorted((carded / "pairs" / "all").glob("*.parquet"))
    table = pq.read_table(files[0])
    half = table.num_rows // 2
    pq.write_table(table.slice(half), tmp_path / "b.parquet")
    pq.write_table(table.slice(0, half), tmp_path / "a.parquet")
    split = [tmp_path / "b.parquet", tmp_path / "a.parquet"]
    assert sample_pairs(split, 3) == sample_pairs(files, 3)
    assert len(sample_pairs(files, 3)) == min(3, table.num_rows)


def test_a_card_for_the_real_release(
    realdata: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    release = copy_release(real_release(tmp_path_factory, realdata), tmp_path)
    card = write_card(str(release)).read_text(encoding="utf-8")
    qt = read_manifest(release)["datasets"]["qt"]["rows"]
    assert f"| `qt` | {qt:,} |" in card
    assert "| `dq` | 0 |" in card  # empty benchmarks are listed, with their shortfall
