"""Record types shared by the bitext and paraphrase readers."""

from __future__ import annotations

from dataclasses import replace

from corpusforge.schemas import BITEXT, DEAD_LETTER, arrow_schema
from corpusforge.sources.opus.records import (
    DeadLetter,
    Origin,
    RawPair,
    Skipped,
    SkipReason,
    SourceReason,
    orient_english,
)

PAIR = RawPair("Hallo Welt", "Hello world", "de", "en", "demo", "de-en.tmx", None, 7)


def test_orient_english_puts_english_first_and_keeps_origin() -> None:
    oriented = orient_english(PAIR)
    assert (oriented.src, oriented.trg) == ("Hello world", "Hallo Welt")
    assert (oriented.src_lang, oriented.trg_lang) == ("en", "de")
    assert oriented.key == PAIR.key


def test_orient_english_leaves_english_first_pairs_alone() -> None:
    en_fr = replace(PAIR, src="Hello", trg="Bonjour", src_lang="en", trg_lang="fr")
    assert orient_english(en_fr) is en_fr


def test_orient_english_without_english_orders_alphabetically() -> None:
    fr_es = replace(PAIR, src="Bonjour", trg="Hola", src_lang="fr", trg_lang="es")
    oriented = orient_english(fr_es)
    assert (oriented.src_lang, oriented.src) == ("es", "Hola")
    assert orient_english(oriented) is oriented


def test_to_bitext_row_follows_the_schema() -> None:
    """The training columns, in the schema's order; the filter scores follow them, added by
    the per-pair rule (``pairing/candidates.py``)."""
    row = PAIR.to_bitext_row()
    assert list(row) == arrow_schema(BITEXT).names[:5]
    assert row["anchor"] == "Hello world"
    assert row["anchor_lang"] == "en"


def test_dead_letter_takes_stage_from_reason_and_cuts_excerpt() -> None:
    letter = DeadLetter.of(
        SourceReason.PARSE_COLUMN_COUNT, Origin("f.tsv", None, 3), "bad", "x" * 500
    )
    assert letter.stage == "parse"
    assert letter.reason == "parse_column_count"
    assert len(letter.excerpt) == 200
    assert list(letter.to_row()) == arrow_schema(DEAD_LETTER).names


def test_dead_letter_decodes_byte_excerpts_with_replacement() -> None:
    letter = DeadLetter.of(SourceReason.READ_DECODE_ERROR, ("f", None, 1), "x", b"ab\xffcd")
    assert letter.excerpt == "ab\ufffdcd"


def test_keys_differ_by_line_and_part() -> None:
    keys = {PAIR.key, replace(PAIR, origin_line=8).key, replace(PAIR, origin_part=1).key}
    assert len(keys) == 3


def test_skip_stage() -> None:
    skip = Skipped.of(SkipReason.ALIGN_EMPTY_SIDE, Origin("a", None, 1))
    assert skip.stage == "align"


def test_reason_codes_are_snake_case_and_prefixed_by_stage() -> None:
    for reason in [*SourceReason, *SkipReason]:
        stage, _, rest = reason.value.partition("_")
        assert stage in {"read", "parse", "align"} and rest
        assert reason.value == reason.value.lower()
