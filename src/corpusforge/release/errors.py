"""The release store's failures, in one module that imports nothing of the store, so the
local folder (:mod:`~corpusforge.release.publish`), the versions on object storage
(:mod:`~corpusforge.release.objectstore`) and each bucket backend
(:mod:`~corpusforge.release.s3`, :mod:`~corpusforge.release.gcs`) raise them without
importing each other. Each is one line for the user, exit 2 (``cli.py``).
"""

from __future__ import annotations

from collections.abc import Iterator


class ReleaseError(ValueError):
    """``--out`` cannot take a release (a file, a read-only place, a foreign folder)."""


class ReleaseLocked(ReleaseError):
    """Another build holds the release's lock."""


class BucketError(ReleaseError):
    """An object store call failed for a reason a user can meet: the endpoint, the
    credentials, the bucket (one line naming the object and the cause, exit 2)."""


class ConditionFailed(Exception):
    """A conditional write was refused: the object is not what the writer expected (S3's
    ``If-Match``/``If-None-Match``, GCS's ``ifGenerationMatch``). Not a user's failure by
    itself: the commit turns it into a conflict."""


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then what it was raised from or during, and so on down the chain: each
    backend's ``failure_in_words`` looks through them for the failure it can name."""
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__
