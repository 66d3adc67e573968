"""A bucket is not trusted: the pointer's names, the keys under a version and the local
folders a reader or a build uses are checked before anything is written or deleted.

Pure checks and a tiny in-memory client here; the same against a real S3 server, for every
reader command, in ``tests/s3/test_hostile_buckets_s3.py``.
"""

from __future__ import annotations

import ast
import datetime
import hashlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from corpusforge.release import bucketnames, objectstore, reading
from corpusforge.release.bucketnames import Location
from corpusforge.release.private import private_folder
from corpusforge.release.publish import ReleaseError

V = "20260101T000000Z-0123abcd"
URI = "s3://b/rel"
POINTER_URI = "s3://b/rel/_current.json"


def pointer(**changes: Any) -> dict[str, Any]:
    doc = {
        "format": reading.POINTER_FORMAT,
        "version": V,
        "prefix": f"versions/{V}/",
        "manifest": f"versions/{V}/manifest.json",
        "manifest_sha256": "0" * 64,
        "history": [V],
    }
    return {**doc, **changes}


def test_a_pointer_as_a_build_writes_it_is_followed() -> None:
    bucketnames.check_pointer(pointer(), POINTER_URI)
    assert bucketnames.is_version_id(objectstore.new_version_id())


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"version": "/tmp/victim"}, "version"),
        ({"version": "../../victim"}, "version"),
        ({"version": f"{V}/../.."}, "version"),
        ({"version": f"{V}\n"}, "version"),
        ({"version": 7}, "version"),
        ({"prefix": "versions/../../"}, "prefix"),
        ({"prefix": f"/versions/{V}/"}, "prefix"),
        ({"manifest": "/etc/passwd"}, "manifest"),
        ({"manifest_sha256": "../x"}, "manifest_sha256"),
        ({"history": [V, "../../x"]}, "history"),
    ],
)
def test_a_pointer_naming_anything_else_is_refused(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ReleaseError) as refused:
        bucketnames.check_pointer(pointer(**changes), POINTER_URI)
    message = str(refused.value)
    assert message.startswith(f"{POINTER_URI}: {field}"), message
    assert "\n" not in message


WHERE = Location("s3", "b", "rel")
PREFIX = f"rel/versions/{V}"


@pytest.mark.parametrize(
    "key",
    [
        f"{PREFIX}/../../victim/x",
        f"{PREFIX}/pairs/../../../x",
        f"{PREFIX}//etc/passwd",
        f"{PREFIX}/..",
        f"{PREFIX}/./x",
        f"{PREFIX}/a\\..\\..\\x",
        f"{PREFIX}/",
        f"{PREFIX}/a/",
        "rel/versions/other/x",
        f"{PREFIX}-evil/x",
    ],
)
def test_a_key_that_leaves_its_version_is_refused(key: str) -> None:
    with pytest.raises(ReleaseError) as refused:
        bucketnames.relative_key(WHERE, PREFIX, key)
    assert str(refused.value) == f"s3://b/{key}: a key that leaves its version's folder; not read"


@pytest.mark.parametrize("rel", ["a..b", "pairs/all/x..y.parquet", "..a/b..", "manifest.json"])
def test_two_dots_inside_a_name_are_a_name(rel: str) -> None:
    assert bucketnames.relative_key(WHERE, PREFIX, f"{PREFIX}/{rel}") == rel


# -- a reader's local copy, on a tiny in-memory bucket -------------------------------------


class FakeS3:
    """The few client calls a reader makes, on a dict of key -> bytes (one bucket)."""

    def __init__(self, objects: dict[str, bytes]) -> None:
        self.objects = objects
        self.downloaded: list[str] = []

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        if Key not in self.objects:
            error = Exception("NoSuchKey")
            error.response = {"Error": {"Code": "NoSuchKey"}}  # type: ignore[attr-defined]
            raise error
        return {"Body": io.BytesIO(self.objects[Key]), "ETag": '"e"'}

    def get_paginator(self, name: str) -> FakeS3:
        return self

    def paginate(self, Bucket: str, Prefix: str, Delimiter: str = "") -> Iterator[dict[str, Any]]:
        when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
        keys = sorted(k for k in self.objects if k.startswith(Prefix))
        yield {"Contents": [{"Key": k, "LastModified": when} for k in keys]}

    def download_file(self, bucket: str, key: str, path: str) -> None:
        self.downloaded.append(key)
        Path(path).write_bytes(self.objects[key])

    def copy_object(self, Bucket: str, Key: str, CopySource: dict[str, str]) -> None:
        self.objects[Key] = self.objects[CopySource["Key"]]


def bucket_with(keys: dict[str, bytes]) -> FakeS3:
    manifest = b'{"files": []}'
    doc = pointer(manifest_sha256=hashlib.sha256(manifest).hexdigest())
    return FakeS3(
        {
            "rel/_current.json": json.dumps(doc).encode(),
            f"{PREFIX}/manifest.json": manifest,
            **keys,
        }
    )


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A private cache folder and, beside it, a sentinel folder a hostile key aims at."""
    cache = tmp_path / "cache"
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("mine")
    monkeypatch.setenv("CORPUSFORGE_CACHE", str(cache))
    return cache, sentinel


def test_a_version_as_a_build_writes_it_is_copied(folders: tuple[Path, Path]) -> None:
    client = bucket_with({f"{PREFIX}/pairs/a..b.parquet": b"x"})
    copy = Path(reading.local_copy(URI, client=client))
    assert copy.parent.parent == folders[0]
    assert (copy / "pairs" / "a..b.parquet").read_bytes() == b"x"


@pytest.mark.parametrize(
    "key", [f"{PREFIX}/../../../sentinel/keep.txt", f"{PREFIX}//sentinel/x", f"{PREFIX}/a/../../x"]
)
def test_a_hostile_key_writes_and_deletes_nothing(folders: tuple[Path, Path], key: str) -> None:
    cache, sentinel = folders
    client = bucket_with({key: b"planted", f"{PREFIX}/pairs/x.parquet": b"x"})
    with pytest.raises(ReleaseError, match="a key that leaves its version's folder"):
        reading.local_copy(URI, client=client)
    assert client.downloaded == []  # every key is checked before the first download
    assert (sentinel / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in sentinel.iterdir()) == ["keep.txt"]
    assert not any(p.is_file() for p in cache.rglob("*"))


@pytest.mark.parametrize("key", [f"{PREFIX}/tweets/../../../../x", f"{PREFIX}/tweets//x"])
def test_a_build_carrying_a_hostile_key_over_copies_nothing(
    folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """A build whose draft is in the bucket copies the current version's extracts on the
    server: a key leaving the version stops it before the first copy."""
    monkeypatch.setenv("CORPUSFORGE_DRAFTS", str(folders[0].parent / "drafts"))
    monkeypatch.setenv("CORPUSFORGE_S3_DRAFT", "bucket")
    client = bucket_with({key: b"planted", f"{PREFIX}/tweets/a/x.parquet": b"x"})
    before = dict(client.objects)
    store = objectstore.ObjectStore(URI, client=client)
    with pytest.raises(ReleaseError, match="a key that leaves its version's folder"):
        store.begin(rebuilt=("pairs", "manifest.json"))
    assert client.objects == before


def test_a_pointer_naming_a_missing_version_names_the_pointer(
    folders: tuple[Path, Path],
) -> None:
    client = bucket_with({})
    del client.objects[f"{PREFIX}/manifest.json"]
    with pytest.raises(ReleaseError) as refused:
        reading.local_copy(URI, client=client)
    assert str(refused.value).startswith(f"{POINTER_URI}: names version {V}, which is not in")
    assert str(folders[0]) not in str(refused.value)


# -- private folders -------------------------------------------------------------------------


def test_the_folders_default_to_a_private_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORPUSFORGE_DRAFTS", raising=False)
    monkeypatch.delenv("CORPUSFORGE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    drafts, cache = Path(objectstore.drafts_root()), Path(reading.cache_root())
    assert drafts == tmp_path / "xdg" / "corpusforge" / "drafts"
    assert cache == tmp_path / "xdg" / "corpusforge" / "releases"
    for folder in (drafts, cache, drafts.parent):
        assert folder.stat().st_mode & 0o777 == 0o700


def _other_owner(path: Path) -> None:
    os.chown(path, 65534, 65534)


def _world_writable(path: Path) -> None:
    path.chmod(0o777)


def _group_writable(path: Path) -> None:
    path.chmod(0o770)


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (_other_owner, "owned by another user (uid 65534)"),
        (_world_writable, "writable by other users (mode 0777)"),
        (_group_writable, "writable by other users (mode 0770)"),
    ],
)
@pytest.mark.parametrize("variable", ["CORPUSFORGE_DRAFTS", "CORPUSFORGE_CACHE", None])
def test_a_folder_another_user_can_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spoil: Any, why: str, variable: str | None
) -> None:
    if os.getuid() != 0 and spoil is _other_owner:
        pytest.skip("chown to another user needs root")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "corpusforge" / "drafts"
    if variable:
        folder = tmp_path / "planted"
        monkeypatch.setenv(variable, str(folder))
    else:
        monkeypatch.delenv("CORPUSFORGE_DRAFTS", raising=False)
    folder.mkdir(parents=True, mode=0o700)
    spoil(folder)
    root = reading.cache_root if variable == "CORPUSFORGE_CACHE" else objectstore.drafts_root
    with pytest.raises(ReleaseError) as refused:
        root()
    assert str(refused.value).startswith(f"{folder} (")
    assert why in str(refused.value)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_a_symlink_or_a_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    planted = tmp_path / "planted"
    if kind == "symlink":
        planted.symlink_to(elsewhere)
    else:
        planted.write_text("")
    monkeypatch.setenv("CORPUSFORGE_DRAFTS", str(planted))
    with pytest.raises(ReleaseError, match=r"a symbolic link|not a folder"):
        objectstore.ObjectStore("s3://b/rel", client=object())
    assert list(elsewhere.iterdir()) == []


def test_the_parent_of_the_default_folders_is_checked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORPUSFORGE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "corpusforge").mkdir(mode=0o777)
    (tmp_path / "corpusforge").chmod(0o777)
    with pytest.raises(ReleaseError, match="writable by other users"):
        private_folder("CORPUSFORGE_CACHE", "releases")
    assert list((tmp_path / "corpusforge").iterdir()) == []


STORE_MODULES = ("buckets", "errors", "gcs", "objectstore", "publish", "reading", "s3", "stores")


def release_imports(tree: ast.AST) -> set[str]:
    """The ``corpusforge.release`` modules a module's source imports, wherever it does."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "corpusforge.release":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    prefix = "corpusforge.release."
    return {
        name.removeprefix(prefix).split(".")[0] if name.startswith(prefix) else name
        for name in found
    }


def test_the_store_modules_import_one_another_one_way() -> None:
    """No cycle among the release store's modules, counting the imports inside functions:
    ``stores.open_store`` is the one place that knows every backend."""
    import corpusforge.release

    folder = Path(corpusforge.release.__file__).parent
    imports = {
        name: release_imports(ast.parse((folder / f"{name}.py").read_text())) & set(STORE_MODULES)
        for name in STORE_MODULES
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(nxt == goal or reaches(nxt, goal, seen | {nxt}) for nxt in imports[start] - seen)

    cycles = [name for name in STORE_MODULES if reaches(name, name, set())]
    assert not cycles, {name: sorted(imports[name]) for name in cycles}
