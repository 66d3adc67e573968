"""corpusforge: reproducible corpora of text pairs for sentence embeddings."""

from __future__ import annotations

__version__ = "0.1.0"
