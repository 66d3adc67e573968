"""OPUS bitext in its four distribution formats -> :class:`RawPair`, dead letters and skips.

    from corpusforge.sources.opus import plan_inputs, read_opus, orient_english
    for unit in plan_inputs(["tatoeba.deu-eng.deu", "tatoeba.deu-eng.eng", "de-en.tmx.gz"]):
        for item in read_opus(unit):
            ...  # RawPair: orient_english, filters; DeadLetter: dead letters; Skipped: count

Modules: :mod:`.formats` (detection, planning, dispatch), one reader per format
(:mod:`.moses`, :mod:`.tmx`, :mod:`.xces`, :mod:`.tsv`), :mod:`.records` (the item types and
reason codes, shared with ``sources/paranmt``), :mod:`.names` (what file names say),
:mod:`.streams` and :mod:`.xmlstream` (bytes in). Pure Python, no Beam.
"""

from __future__ import annotations

from corpusforge.sources.opus.formats import (
    OpusFormat,
    OpusInput,
    UnknownFormatError,
    detect_format,
    plan_inputs,
    read_opus,
)
from corpusforge.sources.opus.moses import read_moses_files, read_moses_zip
from corpusforge.sources.opus.names import infer_dataset, languages_from_name
from corpusforge.sources.opus.records import (
    DeadLetter,
    Origin,
    RawPair,
    Skipped,
    SkipReason,
    SourceItem,
    SourceReason,
    orient_english,
)
from corpusforge.sources.opus.tmx import read_tmx
from corpusforge.sources.opus.tsv import TsvLayout, read_tsv
from corpusforge.sources.opus.xces import DocumentStore, read_xces

__all__ = [
    "DeadLetter",
    "DocumentStore",
    "OpusFormat",
    "OpusInput",
    "Origin",
    "RawPair",
    "SkipReason",
    "Skipped",
    "SourceItem",
    "SourceReason",
    "TsvLayout",
    "UnknownFormatError",
    "detect_format",
    "infer_dataset",
    "languages_from_name",
    "orient_english",
    "plan_inputs",
    "read_moses_files",
    "read_moses_zip",
    "read_opus",
    "read_tmx",
    "read_tsv",
    "read_xces",
]
