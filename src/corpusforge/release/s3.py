"""An ``s3://`` URI and Beam's ``--s3_*`` flags -> a boto3 client and the few S3 calls a
release needs (get, conditional put, upload, download, list, delete by prefix).

Endpoint and credentials are boto3's, from the standard environment (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION``, profiles), or for a
build Beam's ``--s3_*`` flags (:func:`use_storage_flags`); none is ever written into a release
or a log. The versions and the pointer built on these calls are
:mod:`corpusforge.release.objectstore`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from corpusforge.release.io import use_filesystem_flags
from corpusforge.release.publish import ReleaseError


@dataclass(frozen=True)
class Location:
    """``s3://bucket/prefix`` split; ``prefix`` has no slash at either end."""

    scheme: str
    bucket: str
    prefix: str

    @classmethod
    def parse(cls, uri: str) -> Location:
        scheme, sep, rest = uri.partition("://")
        bucket, _, prefix = rest.partition("/")
        if not sep or not bucket:
            raise ReleaseError(f"--out {uri}: not a bucket URI (s3://BUCKET/PATH)")
        return cls(scheme, bucket, prefix.strip("/"))

    def key(self, *parts: str) -> str:
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p.strip("/"))

    def uri(self, *parts: str) -> str:
        return f"{self.scheme}://{self.bucket}/{self.key(*parts)}"


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


class Bucket:
    """The few S3 calls the commit needs, on one ``Location``."""

    def __init__(self, where: Location, client: Any) -> None:
        self.where = where
        self.client = client

    def get(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, or None when it does not exist."""
        try:
            got = self.client.get_object(Bucket=self.where.bucket, Key=key)
        except Exception as exc:
            if error_code(exc) in ("NoSuchKey", "404", "NotFound"):
                return None
            raise
        return got["Body"].read(), got["ETag"]

    def put(self, key: str, data: bytes, **condition: str) -> str:
        """Write an object; ``IfMatch`` / ``IfNoneMatch`` make it conditional. Its ETag."""
        put = self.client.put_object(Bucket=self.where.bucket, Key=key, Body=data, **condition)
        return str(put["ETag"])

    def upload(self, path: str, key: str) -> None:
        self.client.upload_file(path, self.where.bucket, key)

    def download(self, key: str, path: str) -> None:
        self.client.download_file(self.where.bucket, key, path)

    def keys(self, prefix: str) -> Iterator[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.where.bucket, Prefix=prefix
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield item["Key"]

    def folders(self, prefix: str) -> list[str]:
        """The names directly under ``prefix/``."""
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.where.bucket, Prefix=prefix.rstrip("/") + "/", Delimiter="/"
        )
        names = []
        for page in pages:
            for common in page.get("CommonPrefixes", []):
                names.append(common["Prefix"].rstrip("/").rsplit("/", 1)[-1])
        return sorted(names)

    def delete_prefix(self, prefix: str) -> int:
        keys = list(self.keys(prefix.rstrip("/") + "/"))
        for at in range(0, len(keys), 1000):
            batch = [{"Key": k} for k in keys[at : at + 1000]]
            self.client.delete_objects(Bucket=self.where.bucket, Delete={"Objects": batch})
        return len(keys)
