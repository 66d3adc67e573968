"""An ``s3://`` URI and Beam's ``--s3_*`` flags -> a boto3 client and the few S3 calls a
release needs (get, conditional put, upload, download, copy, list, delete by prefix), and
their failures -> one line.

Endpoint and credentials are boto3's, from the standard environment (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION``, profiles), or for a
build Beam's ``--s3_*`` flags (:func:`use_storage_flags`); none is ever written into a release
or a log. The versions and the pointer built on these calls are
:mod:`corpusforge.release.objectstore`'s; :class:`S3Bucket` is the ``s3://`` side of
:class:`corpusforge.release.buckets.Bucket`.

Every call of :class:`S3Bucket` turns a failure a user can meet (the endpoint down or gone
mid-upload, wrong credentials, no such bucket) into :class:`BucketError`, one line naming the
object and the cause in words, never a secret (:func:`failure_in_words`).
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import os
from collections.abc import Iterator, Sequence
from typing import Any

from corpusforge.release.bucketnames import Location
from corpusforge.release.errors import BucketError, ConditionFailed, ReleaseError, causes
from corpusforge.release.io import use_filesystem_flags

S3_FLAGS = {
    "s3_access_key_id": "aws_access_key_id",
    "s3_secret_access_key": "aws_secret_access_key",
    "s3_session_token": "aws_session_token",
    "s3_endpoint_url": "endpoint_url",
    "s3_region_name": "region_name",
    "s3_api_version": "api_version",
    "s3_verify": "verify",
}
"""Beam's ``--s3_*`` pipeline options -> boto3 client arguments."""


def client_settings(beam_args: Sequence[str] = ()) -> dict[str, Any]:
    """boto3 client arguments from Beam's ``--s3_*`` flags; the rest from boto3's own chain
    (environment variables, profiles, instance roles)."""
    settings: dict[str, Any] = {}
    if beam_args:
        from apache_beam.options.pipeline_options import PipelineOptions, S3Options

        s3 = PipelineOptions(list(beam_args)).view_as(S3Options)
        for flag, arg in S3_FLAGS.items():
            value = getattr(s3, flag, None)
            if value is not None:
                settings[arg] = value
        if getattr(s3, "s3_disable_ssl", False):
            settings["use_ssl"] = False
    return settings


ENV_OF_FLAG = {
    "s3_endpoint_url": "AWS_ENDPOINT_URL",
    "s3_access_key_id": "AWS_ACCESS_KEY_ID",
    "s3_secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "s3_session_token": "AWS_SESSION_TOKEN",
    "s3_region_name": "AWS_DEFAULT_REGION",
}


def use_storage_flags(beam_args: Sequence[str]) -> None:
    """Make a build's storage flags those of every client in this process: Beam's
    ``FileSystems`` get the pipeline options (:func:`corpusforge.release.io.use_filesystem_flags`),
    and the ``--s3_*`` values become the standard AWS environment variables of this process,
    which the input readers' boto3 clients (smart_open) read. Nothing is logged or written;
    with no flags, Beam is not imported."""
    use_filesystem_flags(list(beam_args))
    if not beam_args:
        return
    from apache_beam.options.pipeline_options import PipelineOptions, S3Options

    s3 = PipelineOptions(list(beam_args)).view_as(S3Options)
    for flag, env in ENV_OF_FLAG.items():
        value = getattr(s3, flag, None)
        if value:
            os.environ[env] = str(value)


def s3_client(settings: dict[str, Any] | None = None) -> Any:
    """A boto3 S3 client; ``settings`` override the standard environment."""
    try:
        import boto3
    except ImportError:  # pragma: no cover - the aws extra is missing
        raise ReleaseError(
            "s3:// needs boto3: pip install 'corpusforge[aws]' (apache-beam[aws])"
        ) from None
    return boto3.session.Session().client("s3", **(settings or {}))


def error_code(exc: Exception) -> str:
    """The S3 error code of a botocore exception (``NoSuchKey``, ``PreconditionFailed``…)."""
    response = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


DENIED = {
    "AccessDenied",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidToken",
    "ExpiredToken",
    "AllAccessDisabled",
    "403",
}
"""S3 error codes that mean the credentials do not open the bucket."""


def failure_in_words(exc: BaseException, bucket: str, endpoint: str) -> str | None:
    """What went wrong in an S3 call, in words; None when ``exc`` is not such a failure.

    Walks the exception and what it was raised from or during (boto3's upload wraps the
    client's error). Never names a credential.

    Args:
        exc: what the call raised.
        bucket: the bucket it was called on.
        endpoint: the client's endpoint URL.
    """
    from botocore import exceptions as bex

    for seen in causes(exc):
        if isinstance(seen, bex.ClientError):
            code = error_code(seen)
            if code in DENIED:
                return "access denied (check the credentials)"
            if code == "NoSuchBucket":
                return f"no bucket named {bucket}"
            if code == "RequestTimeTooSkewed":
                return "this machine's clock is too far from the server's (check the time)"
            return f"the server answered {code or 'an error'}"
        if isinstance(seen, bex.NoCredentialsError | bex.PartialCredentialsError):
            return (
                "no credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, "
                "or use a role)"
            )
        if isinstance(seen, bex.ConnectionClosedError):
            return f"the endpoint {endpoint} closed the connection (the server went away?)"
        if isinstance(seen, bex.ConnectTimeoutError | bex.ReadTimeoutError):
            return f"the endpoint {endpoint} did not answer in time"
        if isinstance(seen, bex.EndpointConnectionError):
            if "refused" in str(seen.kwargs.get("error", "")).lower():
                return f"the endpoint {endpoint} refused the connection"
            return f"could not connect to the endpoint {endpoint}"
        if isinstance(seen, bex.HTTPClientError | bex.ConnectionError):
            return f"the connection to the endpoint {endpoint} failed (the server went away?)"
    return None


class S3Bucket:
    """:class:`corpusforge.release.buckets.Bucket` on S3: each failure a user can meet is a
    :class:`BucketError` naming the object (``s3://bucket/key``); a token is an ETag."""

    def __init__(self, where: Location, client: Any) -> None:
        self.where = where
        self.client = client

    @contextlib.contextmanager
    def _failures(self, key: str) -> Iterator[None]:
        """Turn a failure of the calls inside into one line naming ``key``."""
        try:
            yield
        except BucketError:
            raise
        except Exception as exc:
            endpoint = str(getattr(getattr(self.client, "meta", None), "endpoint_url", "?"))
            cause = failure_in_words(exc, self.where.bucket, endpoint)
            if cause is None:
                raise
            raise BucketError(f"{self.where.object_uri(key)}: {cause}") from None

    def get(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, or None when it does not exist."""
        with self._failures(key):
            try:
                got = self.client.get_object(Bucket=self.where.bucket, Key=key)
            except Exception as exc:
                if error_code(exc) in ("NoSuchKey", "404", "NotFound"):
                    return None
                raise
            return got["Body"].read(), str(got["ETag"])

    def put(self, key: str, data: bytes, expect: str | None) -> str:
        """Write an object if it is absent (``expect`` None: ``If-None-Match: *``) or its ETag
        is ``expect`` (``If-Match``); its new ETag.

        Raises:
            ConditionFailed: the condition did not hold.
        """
        condition = {"IfNoneMatch": "*"} if expect is None else {"IfMatch": expect}
        try:
            put = self.client.put_object(Bucket=self.where.bucket, Key=key, Body=data, **condition)
        except Exception as exc:
            if error_code(exc) in CONDITION_FAILED:
                raise ConditionFailed(self.where.object_uri(key)) from exc
            with self._failures(key):
                raise
        return str(put["ETag"])

    def upload(self, path: str, key: str) -> None:
        with self._failures(key):
            self.client.upload_file(path, self.where.bucket, key)

    def download(self, key: str, path: str) -> None:
        with self._failures(key):
            self.client.download_file(self.where.bucket, key, path)

    def copy(self, source: str, key: str) -> None:
        """Copy the object ``source`` to ``key`` on the server."""
        with self._failures(key):
            self.client.copy_object(
                Bucket=self.where.bucket,
                Key=key,
                CopySource={"Bucket": self.where.bucket, "Key": source},
            )

    def objects(self, prefix: str) -> Iterator[tuple[str, datetime.datetime]]:
        """Every object whose key starts with ``prefix``: its key and when the server last
        wrote it (the server's clock)."""
        with self._failures(prefix):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.where.bucket, Prefix=prefix
            )
            for page in pages:
                for item in page.get("Contents", []):
                    yield item["Key"], item["LastModified"]

    def keys(self, prefix: str) -> Iterator[str]:
        for key, _ in self.objects(prefix):
            yield key

    def now(self) -> datetime.datetime:
        """The server's clock: the ``Date`` of its answer to a small listing."""
        with self._failures(self.where.key()):
            got = self.client.list_objects_v2(
                Bucket=self.where.bucket, Prefix=self.where.key(), MaxKeys=1
            )
        date = got.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
        if not date:
            return datetime.datetime.now(datetime.UTC)
        return email.utils.parsedate_to_datetime(date)

    def folders(self, prefix: str) -> list[str]:
        """The names directly under ``prefix/``."""
        names = []
        with self._failures(prefix):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.where.bucket, Prefix=prefix.rstrip("/") + "/", Delimiter="/"
            )
            for page in pages:
                for common in page.get("CommonPrefixes", []):
                    names.append(common["Prefix"].rstrip("/").rsplit("/", 1)[-1])
        return sorted(names)

    def delete_prefix(self, prefix: str) -> int:
        keys = list(self.keys(prefix.rstrip("/") + "/"))
        with self._failures(prefix):
            for at in range(0, len(keys), 1000):
                batch = [{"Key": k} for k in keys[at : at + 1000]]
                self.client.delete_objects(Bucket=self.where.bucket, Delete={"Objects": batch})
        return len(keys)


CONDITION_FAILED = ("PreconditionFailed", "412", "ConditionalRequestConflict")
"""Error codes of a conditional write whose condition did not hold."""
