"""The release library every build uses: its files, counts and inputs -> a published release.

- :mod:`~corpusforge.release.layout`: where things go in a release;
- :mod:`~corpusforge.release.accounting`: the accounting identities (the build checks them
  before it publishes, ``validate`` again on a published release);
- :mod:`~corpusforge.release.manifest`: ``manifest.json``, and publishing through the store;
- :mod:`~corpusforge.release.deadletter`, :mod:`~corpusforge.release.staging`: dead-letter
  shards, staged shards moved into place;
- :mod:`~corpusforge.release.pipeline`, :mod:`~corpusforge.release.driver`: the last step
  of a one-pipeline build (bitext, ParaNMT) and the driver that runs it;
- :mod:`~corpusforge.release.stores` (``--out`` -> its store), :mod:`~corpusforge.release.publish`,
  :mod:`~corpusforge.release.objectstore`, :mod:`~corpusforge.release.s3`,
  :mod:`~corpusforge.release.gcs`: the release store (a local folder swapped in one step, or
  ``s3://``/``gs://`` versions committed by a pointer);
- :mod:`~corpusforge.release.io`: inputs, paths and URIs, JSON side files.
"""
