"""Names of the tagged outputs of the composites' DoFns (``ParDo(...).with_outputs``)."""

from __future__ import annotations

DEAD = "dead"
"""Dead-letter rows: what could not be read or parsed, with its reason and origin."""
COUNTS = "counts"
"""``(key, n)`` counts, summed per key into a release's accounting."""
DELETES = "deletes"
"""Twitter delete notices."""
REJECTED = "rejected"
"""Bitext and ParaNMT pairs read but not kept, with their reason."""
HELDOUT = "heldout"
"""Bitext and ParaNMT pairs set aside for evaluation (``--holdout``)."""
