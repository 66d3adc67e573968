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

from corpusforge.release.layout import MANIFEST_NAME, pair_globs, training_glob
from corpusforge.release.publish import ReleaseError


def current_pairs(uri: str, client: Any = None) -> dict[str, Any]:
    """Where the current version of the bucket release ``uri`` holds its pairs.

    Args:
        uri: ``s3://BUCKET/PATH`` (the release, as given to ``--out``).
        client: an S3 client (default: boto3's, from the standard environment).

    Returns:
        ``version``, ``uri`` (the version's folder, ending in ``/``), ``pairs`` (the training
        pairs' glob: the ``all`` dataset of a Twitter release, else every dataset) and
        ``datasets`` (each dataset's glob), every location a full bucket URI.

    Raises:
        FileNotFoundError: ``uri`` holds no committed release.
        ReleaseError: the manifest is missing or not the one the pointer names.
    """
    from corpusforge.release.objectstore import current_version
    from corpusforge.release.s3 import Bucket, Location, s3_client

    where = Location.parse(uri.rstrip("/"))
    client = client or s3_client()
    pointer = current_version(uri, client)  # its names checked (bucketnames.check_pointer)
    got = Bucket(where, client).get(where.key(pointer["manifest"]))
    if got is None or hashlib.sha256(got[0]).hexdigest() != pointer["manifest_sha256"]:
        raise ReleaseError(
            f"{where.uri(pointer['manifest'])}: not the manifest {where.uri('_current.json')} "
            "names (missing, or its sha256 differs)"
        )
    try:
        datasets = json.loads(got[0])["datasets"]
    except (ValueError, KeyError, TypeError):
        raise ReleaseError(
            f"{where.uri(pointer['prefix'], MANIFEST_NAME)}: not a manifest"
        ) from None
    folder = where.uri(pointer["prefix"]) + "/"
    return {
        "version": pointer["version"],
        "uri": folder,
        "pairs": folder + training_glob(datasets),
        "datasets": {name: folder + glob for name, glob in pair_globs(datasets).items()},
    }
