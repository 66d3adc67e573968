"""Beam wiring of the Twitter pipeline: archives -> normalised tweets -> pairs.

Two composites, each only wiring the pure functions of ``corpusforge.sources.twitter``,
``corpusforge.text`` and ``corpusforge.pairing`` (the local engine, ``corpusforge.local``,
calls the same ones):

- :class:`~.extract.ExtractedTweets` (:mod:`.extract`): archive URIs -> member references
  (fanned out so one big archive does not serialise on one worker) -> tweet records, delete
  notices, dead letters and counts, all tagged with their archive's extract folder.
- :class:`~.pairs.TwitterPairs` (:mod:`.pairs`): normalised tweets and delete notices -> one
  pair per root and dataset -> exact-duplicate texts kept once; with counts for every drop.
"""

from __future__ import annotations

from corpusforge.transforms.twitter.extract import ExtractedTweets
from corpusforge.transforms.twitter.pairs import (
    ConversationRecords,
    TwitterBenchmarks,
    TwitterPairs,
)

__all__ = ["ConversationRecords", "ExtractedTweets", "TwitterBenchmarks", "TwitterPairs"]
