"""``write_card``: README.md with the manifest's numbers, self-contained SVGs, identical bytes
twice."""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from corpusforge.inspect.card import sample_pairs, write_card
from corpusforge.inspect.card_plots import WIDTH, _ticks
from corpusforge.inspect.stats import read_manifest
from corpusforge.inspect.validate import validate_release
from tests.release import copy_release, real_release, synthetic_release

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def carded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    release = copy_release(synthetic_release(tmp_path_factory), tmp_path_factory.mktemp("card"))
    write_card(str(release))
    return release


def _digests(release: Path) -> dict[str, str]:
    files = [release / "README.md", *sorted((release / "card").iterdir())]
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


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
        "![funnel](card/funnel.svg)",
        "![candidate children per dataset](card/children.svg)",
    ):
        assert needle in card, needle
    for name in manifest["datasets"]:
        assert f"![text lengths: {name}](card/lengths-{name}.svg)" in card


def test_the_plots_are_self_contained_svgs_that_show_the_counts(carded: Path) -> None:
    manifest = read_manifest(carded)
    names = sorted(p.name for p in (carded / "card").iterdir())
    lengths = [f"lengths-{n}.svg" for n in manifest["datasets"]]
    assert names == sorted(["funnel.svg", "children.svg", *lengths])
    for name in names:
        root = ET.fromstring((carded / "card" / name).read_bytes())
        assert root.tag == f"{SVG}svg" and root.get("id") == f"chart-{name[:-4]}"
        assert root.get("viewBox", "").split()[2] == str(WIDTH)
        for script in root.iter(f"{SVG}script"):  # pygal's inline config, never a fetch
            assert set(script.attrib) == {"type"}
            assert "http://" not in script.text and "https://" not in script.text
    funnel = ET.fromstring((carded / "card" / "funnel.svg").read_bytes())
    texts = {t.text for t in funnel.iter(f"{SVG}text")}
    assert f"{manifest['counts']['lines_read']:,}" in texts
    assert "stream lines read" in texts


def test_an_older_cards_plots_are_removed(carded: Path) -> None:
    (carded / "card" / "funnel.png").write_bytes(b"an older card's plot")
    write_card(str(carded))
    assert not (carded / "card" / "funnel.png").exists()


@pytest.mark.parametrize(
    ("top", "ticks"),
    [(1, [0, 1]), (5, [0, 1, 2, 3, 4, 5]), (6, [0, 2, 4, 6]), (24, [0, 5, 10, 15, 20, 25])],
)
def test_histogram_ticks_are_whole_numbers_past_the_top(top: int, ticks: list[int]) -> None:
    assert _ticks(top) == ticks


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
