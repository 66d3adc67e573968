"""``--out`` -> the :class:`~corpusforge.release.publish.ReleaseStore` that publishes a build
there: the one module that knows every backend, so none of them imports another.

    store = open_store("s3://bucket/releases/en", runner)   # or gs://…, hdfs://…, a folder
    with store.locked():
        draft = store.begin(rebuilt=("manifest.json", "pairs"))
        ...
        store.commit()

:mod:`~corpusforge.release.publish` holds the local folder (and the in-place store of other
URIs); :mod:`~corpusforge.release.objectstore` the versions on ``s3://`` and ``gs://``, whose
local draft is a :class:`~corpusforge.release.publish.LocalFolder`.
"""

from __future__ import annotations

from corpusforge.config.runner import Runner
from corpusforge.release.bucketnames import is_bucket_uri
from corpusforge.release.gcs import number_batch_parts
from corpusforge.release.objectstore import ObjectStore
from corpusforge.release.publish import InPlace, LocalFolder, ReleaseStore
from corpusforge.release.s3 import use_storage_flags
from corpusforge.sources.uris import is_uri


def open_store(out: str, runner: Runner | None = None) -> ReleaseStore:
    """The store of ``--out``: :class:`~corpusforge.release.objectstore.ObjectStore` for
    ``s3://`` and ``gs://``, :class:`~corpusforge.release.publish.InPlace` for another URI,
    else :class:`~corpusforge.release.publish.LocalFolder`.

    Args:
        out: the release (``--out``).
        runner: the build's runner (default: none named); its Beam options
            (``--s3_endpoint_url``, …) set the object store's client.

    Raises:
        ReleaseError: ``out`` is a file, or a folder that holds something other than a
            release.
    """
    runner = runner or Runner()
    use_storage_flags(runner.beam_args())  # inputs and outputs on s3:// read its --s3_* flags
    number_batch_parts()  # Beam's gcsio against a GCS emulator (gcs.py); nothing on real GCS
    if is_bucket_uri(out):
        return ObjectStore(out, runner)
    if is_uri(out):
        return InPlace(out)
    return LocalFolder(out)
