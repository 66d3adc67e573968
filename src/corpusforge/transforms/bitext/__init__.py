"""Beam wiring of the bitext and ParaNMT pipelines: read units -> filtered, deduplicated pairs.

Four composites, each only wiring the pure functions of ``sources/opus``,
``sources/paranmt``, ``text/`` and ``pairing/``: :mod:`.opus` holds the bitext ones,
:mod:`.paranmt` the ParaNMT ones, :mod:`.common` what they share (rejects, deduplication,
counts, the language-id ``DoFn``):

- :class:`ReadBitext`: planned read units (:class:`~corpusforge.sources.opus.OpusInput`,
  and the :class:`~corpusforge.sources.opus.DeadLetter` of each file that planning could
  not use) -> :class:`~corpusforge.sources.opus.RawPair` items, dead-letter rows and counts.
  Units are fanned out with a reshuffle and each is read whole by one worker; the pairs are
  reshuffled again so that language id spreads over the workers even when one file holds
  the whole corpus.
- :class:`BitextPairs`: raw pairs -> ``((dataset, "l1-l2"), bitext row)``: optional
  cleaning, English oriented into ``anchor``, 3 to 100 words per side (by letters in scripts
  without spaces) in a ratio below 3, fastText language id on both sides agreeing with the
  declared languages, duplicates (up to case and whitespace) kept once, at most 500,000
  pairs per (dataset, language pair) by seeded hash.
- :class:`ReadParaphrases`: ParaNMT file URIs -> :class:`RawParaphrase` items, dead-letter
  rows and counts.
- :class:`ParaphrasePairs`: raw paraphrases -> ``((dataset, "en-en"), paraphrase row)``:
  optional cleaning, P-SP's mean length, score and trigram-overlap filters (the overlap is
  computed once and stored in the row), both sides English by fastText, duplicates kept
  once (``(a, b)`` and ``(b, a)`` are the same pair).

Duplicates. The reference preprocessing scripts removed duplicates with ``uniq -u``, which
drops *every* copy of a duplicated pair, so a pair that occurs twice is lost altogether. We
keep exactly one copy: the one with the smallest origin (dataset, file, member, line,
part), whatever the runner or input order. Copies are found with
:func:`~corpusforge.keys.pair_key` (equal up to case and whitespace), per
language pair and across datasets and input formats; a dropped copy is counted against its
own dataset as ``dedup_duplicate``.

Language id runs on the text that goes into the row (after cleaning), loads the model once
per worker in ``DoFn.setup`` and runs after the cheap checks (length; score and overlap for
ParaNMT), only on the pairs that pass them.

Nothing is dropped silently: every filtered, duplicate or capped pair goes to the
``rejected`` output as a :class:`Rejected` with its reason code, next to a
``Metrics.counter(stage, reason)``; the drop counts are taken from that output, so counts
and rejects cannot disagree. Counts travel as ``(key, n)`` elements with tuple keys,
summed per key (``("read", "records")``: input lines or records, each pair, skip and
dead-letter line once; ``("read", "dead_letter_lines")``: the lines the dead letters stand
for; ``("dead", reason)``: dead-letter rows; ``("skip", reason)``,
``("cand", dataset, group)``, ``("drop", dataset, group, reason)``,
``("rows", dataset, group)``), so a release's accounting does not depend on a runner's
metrics support.
"""

from __future__ import annotations

from corpusforge.transforms.bitext.common import LID_NAMESPACE, CountKey, Rejected
from corpusforge.transforms.bitext.opus import BitextPairs, ReadBitext
from corpusforge.transforms.bitext.paranmt import ParaphrasePairs, ReadParaphrases

__all__ = [
    "LID_NAMESPACE",
    "BitextPairs",
    "CountKey",
    "ParaphrasePairs",
    "ReadBitext",
    "ReadParaphrases",
    "Rejected",
]
