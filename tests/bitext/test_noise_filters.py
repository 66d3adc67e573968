"""The noise filters on real OPUS data: each catches the noise the samples hold, on both
engines, counted in the manifest.

Inputs, read in place: the RF corpus's German-English XCES alignment
(``../shared/realdata/opus-rf-sample/t/xml/de-en.xml.gz``: Swedish government statements,
whose numbered headings are aligned one sentence off in places) and Tatoeba's Arabic-English
sample (``tatoeba-laser-v1``, the corpus OPUS distributes: two of its "Arabic" sentences are
Spanish). The samples hold no HTML and no token longer than 26 characters, so the HTML and
longest-word filters are shown to drop nothing here at OpusFilter's defaults (their catches
are in ``test_pairfilters.py``); the others are shown on the pairs they catch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from corpusforge.builds import bitext
from corpusforge.config.bitext import BitextConfig
from corpusforge.pairing.filters import BitextFilterConfig, FilterReason
from corpusforge.pairing.noise import check_bitext_noise
from corpusforge.sources.opus.formats import OpusInput, plan_inputs, read_opus
from corpusforge.sources.opus.records import RawPair, bitext_row
from tests.bitext.test_local_engine import same_on_every_engine

MISALIGNED = (
    "Sweden 's commitment and responsibility does not end at Europe 's borders .",
    "3. Die Umwelt wird deutlich und langfristig prioritiert .",
)
"""A heading's number on the German side, aligned with the sentence before it."""
SPANISH_AS_ARABIC = "Al cabo de poco tiempo, Laila se quedó embarazada."

# OpusFilter's defaults, but a stricter punctuation score (-1: a penalty of at most 1)
OPUS_DEFAULTS = BitextFilterConfig(
    max_word_chars=39,
    drop_html=True,
    min_script_ratio=1.0,
    min_punctuation_score=-1.0,
    min_numeral_similarity=0.5,
)


def _inputs(realdata: Path) -> tuple[str, ...]:
    tatoeba = realdata / "tatoeba-laser-v1" / "tatoeba.ara-eng"
    return (
        str(realdata / "opus-rf-sample" / "t" / "xml" / "de-en.xml.gz"),
        f"{tatoeba}.ara",
        f"{tatoeba}.eng",
    )


def _rows(uris: tuple[str, ...]) -> Iterator[dict[str, str]]:
    for unit in plan_inputs(uris):
        assert isinstance(unit, OpusInput)
        for item in read_opus(unit):
            if isinstance(item, RawPair):
                yield bitext_row(item, item.src, item.trg)


@pytest.mark.parametrize(
    ("config", "reason", "caught"),
    [
        (BitextFilterConfig(min_script_ratio=1.0), "script_ratio", SPANISH_AS_ARABIC),
        (BitextFilterConfig(min_punctuation_score=-1.0), "terminal_punctuation", MISALIGNED[1]),
        (BitextFilterConfig(min_numeral_similarity=0.5), "numerals_mismatch", MISALIGNED[1]),
        (BitextFilterConfig(max_positive_chars=20), "chars_too_long", MISALIGNED[1]),
        (BitextFilterConfig(max_word_chars=39), "word_too_long", None),
        (BitextFilterConfig(drop_html=True), "html_tags", None),
    ],
)
def test_each_filter_alone_on_real_pairs(
    realdata: Path, config: BitextFilterConfig, reason: str, caught: str | None
) -> None:
    dropped = [
        row["positive"]
        for row in _rows(_inputs(realdata))
        if check_bitext_noise(
            row["anchor"], row["positive"], row["anchor_lang"], row["positive_lang"], config
        )
        is FilterReason(f"bitext_{reason}")
    ]
    if caught is None:
        assert dropped == []  # no false positive on clean text at OpusFilter's default
    else:
        assert caught in dropped


def test_real_noise_is_dropped_and_counted_on_every_engine(realdata: Path, tmp_path: Path) -> None:
    def config(out: Path, filters: BitextFilterConfig = OPUS_DEFAULTS) -> BitextConfig:
        return BitextConfig(inputs=_inputs(realdata), out=str(out), dataset="opus", filters=filters)

    same_on_every_engine(bitext.build, config, tmp_path)
    filtered = json.loads((tmp_path / "beam" / "manifest.json").read_text())
    plain = bitext.build(config(tmp_path / "plain", BitextFilterConfig()))
    assert filtered["accounting"]["balanced"]
    assert filtered["config"]["filters"]["min_script_ratio"] == 1.0
    assert "min_script_ratio" not in plain["config"]["filters"]

    groups = filtered["datasets"]["opus"]["lang_pairs"]
    # fastText would also drop the Spanish, but the script check comes first, and is cheaper
    assert groups["en-ar"]["dropped"]["bitext_script_ratio"] == 2
    en_de = groups["en-de"]["dropped"]
    assert en_de["bitext_terminal_punctuation"] >= 10
    assert en_de["bitext_numerals_mismatch"] >= 1
    assert not {"bitext_html_tags", "bitext_word_too_long"} & (
        en_de.keys() | groups["en-ar"]["dropped"].keys()
    )

    def positives(release: Path) -> set[str]:
        tables = [pq.read_table(p) for p in sorted(release.glob("pairs/opus/en-de/*.parquet"))]
        return {text for table in tables for text in table.column("positive").to_pylist()}

    assert MISALIGNED[1] in positives(tmp_path / "plain")
    assert MISALIGNED[1] not in positives(tmp_path / "beam")
    plain_en_de = plain["datasets"]["opus"]["lang_pairs"]["en-de"]
    assert groups["en-de"]["rows"] < plain_en_de["rows"]
