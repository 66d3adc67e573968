"""A release on object storage -> where its current version's pairs are, as globs that polars,
DuckDB and ``datasets`` read straight from the bucket, without corpusforge.

    corpusforge versions s3://bucket/releases/en --current
    s3://bucket/releases/en/versions/20261127T101500Z-0a1b2c3d/pairs/all/*.parquet

A version never changes once committed (:mod:`corpusforge.release.objectstore`), so a reader
given these globs reads one whole version even while the next build commits; only the
pointer and the version's manifest are fetched here, the manifest checked against the
pointer's sha256. The globs come from the manifest's file list
(:func:`corpusforge.release.layout.pair_globs`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from corpusforge.release.bucketnames import Location, relative_key
from corpusforge.release.errors import ReleaseError
from corpusforge.release.layout import MANIFEST_NAME, PAIRS, pair_globs, training_glob

_GLOB_CHARACTERS = frozenset("*?[]{}")


def current_pairs(uri: str, client: Any = None) -> dict[str, Any]:
    """Where the current version of the bucket release ``uri`` holds its pairs.

    Args:
        uri: ``s3://BUCKET/PATH`` or ``gs://BUCKET/PATH`` (the release, as given to ``--out``).
        client: the store's client (default: boto3's or google-cloud-storage's, from the
            standard environment).

    Returns:
        ``version``, ``uri`` (the version's folder, ending in ``/``), ``pairs`` (the training
        pairs' glob: the ``all`` dataset of a Twitter release, else every dataset) and
        ``datasets`` (each dataset's glob), every location a full bucket URI.

    Raises:
        FileNotFoundError: ``uri`` holds no committed release.
        ReleaseError: the manifest is missing or not the one the pointer names, or lists a
            pair file outside ``pairs/`` or whose name a glob would read as a pattern (nothing
            a bucket says is trusted: a reader must not be sent elsewhere).
    """
    from corpusforge.release.buckets import open_bucket
    from corpusforge.release.reading import POINTER, read_pointer

    where = Location.parse(uri.rstrip("/"))
    bucket = open_bucket(where, client)
    found = read_pointer(bucket)  # its names checked (bucketnames.check_pointer)
    if found is None:
        raise FileNotFoundError(f"{uri}: no release there (no {POINTER})")
    pointer = found[0]
    got = bucket.get(where.key(pointer["manifest"]))
    if got is None or hashlib.sha256(got[0]).hexdigest() != pointer["manifest_sha256"]:
        raise ReleaseError(
            f"{where.uri(pointer['manifest'])}: not the manifest {where.uri(POINTER)} "
            "names (missing, or its sha256 differs)"
        )
    try:
        datasets = json.loads(got[0])["datasets"]
        files = [str(f) for ds in datasets.values() for f in ds.get("files", [])]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ReleaseError(
            f"{where.uri(pointer['prefix'], MANIFEST_NAME)}: not a manifest"
        ) from None
    prefix = where.key(pointer["prefix"])
    for path in files:
        relative_key(where, prefix, f"{prefix}/{path}")  # no empty, ".", ".." segment
        if not path.startswith(f"{PAIRS}/") or _GLOB_CHARACTERS & set(path):
            raise ReleaseError(
                f"{where.uri(pointer['manifest'])}: lists {path!r}, not a pair file of the "
                "version; not read"
            )
    folder = where.uri(pointer["prefix"]) + "/"
    return {
        "version": pointer["version"],
        "uri": folder,
        "pairs": folder + training_glob(datasets),
        "datasets": {name: folder + glob for name, glob in pair_globs(datasets).items()},
    }
