"""A ``gs://`` release's bucket -> the calls of :class:`corpusforge.release.buckets.Bucket`,
on google-cloud-storage (the ``gcp`` extra, through ``apache-beam[gcp]``), and their failures
-> one line.

Credentials are Google's application default ones (``GOOGLE_APPLICATION_CREDENTIALS``,
``gcloud auth application-default login``, a VM's service account); with
``STORAGE_EMULATOR_HOST`` set (``http://127.0.0.1:4443``: fake-gcs-server, as the tests
marked ``gcs`` run it) the client talks to that emulator without credentials. None is ever
written into a release or a log.

A failed call (a connection refused or dropped, 429, 5xx) is retried as google-cloud-storage
retries it, with a growing pause, for at most ``CORPUSFORGE_GCS_RETRY_SECONDS`` (default: the
library's 120 s, right for GCS; a test or an emulator that may be down sets fewer, as
``AWS_MAX_ATTEMPTS`` bounds boto3's retries on ``s3://``): :func:`retry_policy`.

A token is an object's generation: the pointer is written with ``ifGenerationMatch`` (0 for
a release's first version, else the generation this build read), the one precondition the
commit needs (deploy/object-storage.md). fake-gcs-server honours it on uploads, which is
where it is used; copies and deletes are sent without preconditions.

Beam's ``gcsio`` copies and deletes in batch requests, whose parts google-cloud-storage
sends without a ``Content-ID``: GCS accepts that, fake-gcs-server skips such parts and
answers an empty batch, which the client reports as ``ValueError: Bad response: not
multi-part``. With ``STORAGE_EMULATOR_HOST`` set, and only then, :func:`number_batch_parts`
gives each part one (as the Java client always does).
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import itertools
import os
import re
from collections.abc import Iterator
from typing import Any

from corpusforge.release.bucketnames import Location
from corpusforge.release.errors import BucketError, ConditionFailed, ReleaseError, causes


def gcs_client() -> Any:
    """A ``google.cloud.storage.Client`` from the standard environment: the emulator of
    ``STORAGE_EMULATOR_HOST`` without credentials, else the application default credentials.

    Raises:
        ReleaseError: google-cloud-storage is missing, or there are no credentials.
    """
    try:
        from google.auth.exceptions import DefaultCredentialsError
        from google.cloud import storage
    except ImportError:  # pragma: no cover - the gcp extra is missing
        raise ReleaseError(
            "gs:// needs google-cloud-storage: pip install 'corpusforge[gcp]' (apache-beam[gcp])"
        ) from None
    if os.environ.get("STORAGE_EMULATOR_HOST"):
        from google.auth.credentials import AnonymousCredentials

        number_batch_parts()

        project = os.environ.get("GOOGLE_CLOUD_PROJECT") or "corpusforge"
        return storage.Client(project=project, credentials=AnonymousCredentials())
    try:
        return storage.Client()
    except DefaultCredentialsError:
        raise ReleaseError(
            "gs://: no Google credentials (set GOOGLE_APPLICATION_CREDENTIALS or run "
            "gcloud auth application-default login)"
        ) from None


RETRY_SECONDS = "CORPUSFORGE_GCS_RETRY_SECONDS"
"""The environment variable that bounds how long a failed GCS call is retried."""


def retry_policy() -> Any:
    """google-cloud-storage's retry of a failed call, for at most ``$CORPUSFORGE_GCS_RETRY_SECONDS``
    seconds (unset: the library's own, 120 s).

    Raises:
        ReleaseError: the variable is not a number of seconds >= 0.
    """
    from google.cloud.storage.retry import DEFAULT_RETRY

    raw = os.environ.get(RETRY_SECONDS, "").strip()
    if not raw:
        return DEFAULT_RETRY
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also NaN
        raise ReleaseError(f"{RETRY_SECONDS} must be a number of seconds >= 0, got {raw!r}")
    return DEFAULT_RETRY.with_timeout(seconds)


def number_batch_parts() -> None:
    """Give each part of google-cloud-storage's batch requests a ``Content-ID``, in this
    process, when ``STORAGE_EMULATOR_HOST`` names an emulator (fake-gcs-server skips parts
    without one); nothing otherwise, so real GCS gets the client's requests unchanged."""
    if not os.environ.get("STORAGE_EMULATOR_HOST"):
        return
    try:
        from google.cloud.storage import batch
    except ImportError:  # pragma: no cover - the gcp extra is missing
        return
    prepare = batch.Batch._prepare_batch_request
    if getattr(prepare, "numbers_parts", False):
        return

    def numbered(self: Any) -> tuple[Any, bytes, Any]:
        headers, body, timeout = prepare(self)
        data = body if isinstance(body, bytes) else str(body).encode()
        count = itertools.count(1)
        data = re.sub(
            rb"Content-Type: application/http\r?\n",
            lambda m: m.group(0) + b"Content-ID: <%d>\r\n" % next(count),
            data,
        )
        return headers, data, timeout

    numbered.numbers_parts = True  # type: ignore[attr-defined]
    batch.Batch._prepare_batch_request = numbered


def failure_in_words(exc: BaseException, bucket: str, endpoint: str) -> str | None:
    """What went wrong in a GCS call, in words; None when ``exc`` is not such a failure.

    Walks the exception and what it was raised from or during. Never names a credential.

    Args:
        exc: what the call raised.
        bucket: the bucket it was called on.
        endpoint: the client's endpoint URL.
    """
    import requests
    from google.api_core import exceptions as gex
    from google.auth import exceptions as aex

    for seen in causes(exc):
        if isinstance(seen, gex.Forbidden | gex.Unauthorized):
            return "access denied (check the credentials)"
        if isinstance(seen, gex.NotFound) and "bucket" in str(seen).lower():
            return f"no bucket named {bucket}"
        if isinstance(seen, gex.GoogleAPICallError):
            return f"the server answered {seen.code or 'an error'}"
        if isinstance(seen, aex.DefaultCredentialsError | aex.RefreshError):
            return "no usable Google credentials (check GOOGLE_APPLICATION_CREDENTIALS)"
        if isinstance(seen, gex.RetryError):  # the client retried for its deadline
            last = failure_in_words(seen.cause, bucket, endpoint) if seen.cause else None
            return (
                f"{last or f'the endpoint {endpoint} did not answer'} (gave up retrying; "
                f"{RETRY_SECONDS} sets for how long)"
            )
        if isinstance(seen, requests.exceptions.ConnectionError):
            return f"could not connect to the endpoint {endpoint}"
        if isinstance(seen, requests.exceptions.Timeout):
            return f"the endpoint {endpoint} did not answer in time"
    return None


class GcsBucket:
    """:class:`corpusforge.release.buckets.Bucket` on GCS: each failure a user can meet is a
    :class:`BucketError` naming the object (``gs://bucket/key``); a token is a generation.

    Args:
        where: the release.
        client: a ``google.cloud.storage.Client``.
    """

    def __init__(self, where: Location, client: Any) -> None:
        self.where = where
        self.client = client
        self._bucket = client.bucket(where.bucket)
        self._retry = retry_policy()

    @property
    def endpoint(self) -> str:
        return str(getattr(self.client, "api_endpoint", None) or "https://storage.googleapis.com")

    @contextlib.contextmanager
    def _failures(self, key: str) -> Iterator[None]:
        """Turn a failure of the calls inside into one line naming ``key``."""
        try:
            yield
        except (BucketError, ConditionFailed):
            raise
        except Exception as exc:
            cause = failure_in_words(exc, self.where.bucket, self.endpoint)
            if cause is None:
                raise
            raise BucketError(f"{self.where.object_uri(key)}: {cause}") from None

    def get(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and generation, or None when it does not exist. The bytes are
        those of that generation (a newer one written meanwhile is read again)."""
        from google.api_core.exceptions import NotFound, PreconditionFailed

        with self._failures(key):
            while True:
                blob = self._bucket.get_blob(key, retry=self._retry)
                if blob is None:
                    return None
                try:
                    data = blob.download_as_bytes(
                        if_generation_match=blob.generation, retry=self._retry
                    )
                except NotFound:
                    return None
                except PreconditionFailed:
                    continue  # rewritten between the two calls: read the new one
                return bytes(data), str(blob.generation)

    def put(self, key: str, data: bytes, expect: str | None) -> str:
        """Write an object if it is absent (``expect`` None: ``ifGenerationMatch=0``) or its
        generation is ``expect``; its new generation.

        Raises:
            ConditionFailed: the condition did not hold.
        """
        from google.api_core.exceptions import PreconditionFailed

        blob = self._bucket.blob(key)
        with self._failures(key):
            try:
                blob.upload_from_string(
                    data,
                    content_type="application/json",
                    if_generation_match=0 if expect is None else int(expect),
                    retry=self._retry,
                )
            except PreconditionFailed as exc:
                raise ConditionFailed(self.where.object_uri(key)) from exc
        return str(blob.generation)

    def upload(self, path: str, key: str) -> None:
        with self._failures(key):
            self._bucket.blob(key).upload_from_filename(path, retry=self._retry)

    def download(self, key: str, path: str) -> None:
        with self._failures(key):
            self._bucket.blob(key).download_to_filename(path, retry=self._retry)

    def copy(self, source: str, key: str) -> None:
        """Copy the object ``source`` to ``key`` on the server (a rewrite, in as many calls
        as the server asks for)."""
        with self._failures(key):
            target = self._bucket.blob(key)
            token, _, _ = target.rewrite(self._bucket.blob(source))
            while token is not None:
                token, _, _ = target.rewrite(self._bucket.blob(source), token=token)

    def objects(self, prefix: str) -> Iterator[tuple[str, datetime.datetime]]:
        """Every object whose key starts with ``prefix``: its key and when the server last
        wrote it (the server's clock)."""
        with self._failures(prefix):
            for blob in self.client.list_blobs(self.where.bucket, prefix=prefix, retry=self._retry):
                yield blob.name, blob.updated

    def keys(self, prefix: str) -> Iterator[str]:
        for key, _ in self.objects(prefix):
            yield key

    def folders(self, prefix: str) -> list[str]:
        """The names directly under ``prefix/``."""
        with self._failures(prefix):
            listing = self.client.list_blobs(
                self.where.bucket, prefix=prefix.rstrip("/") + "/", delimiter="/", retry=self._retry
            )
            for _ in listing:  # the prefixes are gathered page by page
                pass
            return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in listing.prefixes)

    def delete_prefix(self, prefix: str) -> int:
        from google.api_core.exceptions import NotFound

        keys = list(self.keys(prefix.rstrip("/") + "/"))
        with self._failures(prefix):
            for key in keys:
                with contextlib.suppress(NotFound):
                    self._bucket.blob(key).delete(retry=self._retry)
        return len(keys)

    def now(self) -> datetime.datetime:
        """The server's clock: the ``Date`` of its answer to a small listing."""
        url = f"{self.endpoint.rstrip('/')}/storage/v1/b/{self.where.bucket}/o"
        with self._failures(self.where.key()):
            answer = self.client._http.get(url, params={"maxResults": 1, "fields": "kind"})
        date = answer.headers.get("Date")
        if not date:
            return datetime.datetime.now(datetime.UTC)
        return email.utils.parsedate_to_datetime(date)
