"""ParaNMT-50M paraphrase pairs -> :class:`RawParaphrase` items and dead letters.

    from corpusforge.sources.paranmt import read_paranmt
    for item in read_paranmt("para-nmt-50m.txt.gz"):
        ...  # RawParaphrase -> pairfilters.check_paraphrase; DeadLetter -> dead letters

Pure Python, no Beam; the record and reason types are shared with ``sources/opus``.
"""

from __future__ import annotations

from corpusforge.sources.paranmt.parse import (
    DATASET,
    RawParaphrase,
    parse_paranmt_line,
    read_paranmt,
)

__all__ = ["DATASET", "RawParaphrase", "parse_paranmt_line", "read_paranmt"]
