"""What a build refuses, in one line and exit 2, before it publishes anything: files that are
not archives, FIFOs and devices, folders, an ``--out`` that cannot take a release; and what
it takes literally (a file name with glob characters) or never takes (its own output)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from corpusforge.inspect.validate import validate_release
from tests.buckets import cli

from .conftest import GOOD, member, write_zip
from .readers import quiet_cli

NOT_ARCHIVES = {
    "html": b"<!DOCTYPE html><html><head><title>404 Not Found</title></head></html>\n",
    "empty": b"",
    "random": bytes((i * 7919 + 13) % 256 for i in range(4096)),
}


def good_archive(path: Path) -> str:
    return write_zip(path, [("2021/01/01/00/00.json.bz2", member(GOOD))])


@pytest.mark.parametrize("kind", sorted(NOT_ARCHIVES))
def test_a_file_that_is_no_archive_publishes_nothing(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "twitter-stream-2021-01-01.zip"
    path.write_bytes(NOT_ARCHIVES[kind])
    out = tmp_path / "release"
    code, lines = quiet_cli("twitter", "build", str(path), "--out", str(out))
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("error: no input could be read")
    assert "published: twitter-stream-2021-01-01.zip: " in lines[0]  # the file, what is wrong
    assert lines[0].endswith("(read_archive_not_an_archive)")
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no release, no draft


def test_an_unreadable_file_beside_a_good_one_is_named_and_the_rest_published(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "page.zip"
    bad.write_bytes(NOT_ARCHIVES["html"])
    good = good_archive(tmp_path / "good.zip")
    out = tmp_path / "release"
    code, lines = quiet_cli("twitter", "build", good, str(bad), "--out", str(out))
    assert code == 0
    assert any("page.zip: not a zip" in line for line in lines)
    assert validate_release(out).ok
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["dead_letter_archives"] == 1


@pytest.mark.parametrize(
    "source",  # the three builds share the input check; one in the default run
    [
        "twitter",
        pytest.param("bitext", marks=pytest.mark.slow),
        pytest.param("paranmt", marks=pytest.mark.slow),
    ],
)
def test_fifos_devices_and_folders_are_refused_at_once(source: str, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.zip"
    os.mkfifo(fifo)
    folder = tmp_path / "archives"
    folder.mkdir()
    out = str(tmp_path / "release")
    # a FIFO nobody writes to would block whoever opens it: a child process, with a timeout
    proc = cli(source, "build", str(fifo), "--out", out, "--quiet", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == f"error: input {fifo}: is a FIFO; only " + (
        "regular files are read"
    )
    code, lines = quiet_cli(source, "build", "/dev/null", "--out", out)
    assert (code, lines) == (
        2,
        ["error: input /dev/null: is a device; only regular files are read"],
    )
    code, lines = quiet_cli(source, "build", str(folder), "--out", out)
    assert code == 2 and lines == [
        f"error: input {folder}: is a folder; give the files in it, e.g. '{folder}/*'"
    ]
    assert not Path(out).exists()


@pytest.mark.parametrize("source", ["bitext", "paranmt"])
def test_bitext_inputs_that_yield_no_record_publish_nothing(source: str, tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_bytes(NOT_ARCHIVES["html"])
    out = tmp_path / "release"
    code, lines = quiet_cli(source, "build", str(page), "--out", str(out))
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith("error: no input yielded a pair, nothing published: page.txt (")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.txt"]


def test_out_that_cannot_take_a_release_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = good_archive(tmp_path / "good.zip")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("mine")
    cases = {
        str(a_file): "exists and is not a folder",
        str(a_file / "release"): "a folder above it is a file",
        str(foreign): "a folder that holds no release",
    }
    if Path("/sys").is_dir():
        cases["/sys/corpusforge-release"] = "cannot write in /sys"
    for out, message in cases.items():
        code, lines = quiet_cli("twitter", "build", archive, "--out", out)
        assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: --out {out}: ")
        assert message in lines[0]
    assert a_file.read_text() == "mine" and (foreign / "thesis.tex").read_text() == "mine"
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    code, lines = quiet_cli("twitter", "build", archive, "--out", ".")
    assert code == 2 and lines == [
        "error: --out .: holds the working directory, which the swap would move; "
        "run the build from outside it"
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_in_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    archive = good_archive(tmp_path / "good.zip")
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, lines = quiet_cli("twitter", "build", archive, "--out", str(locked / "release"))
    finally:
        locked.chmod(0o755)
    assert code == 2 and lines == [
        f"error: --out {locked / 'release'}: cannot write in {locked}: Permission denied"
    ]


def test_a_file_name_with_glob_characters_is_taken_literally(tmp_path: Path) -> None:
    literal = Path(good_archive(tmp_path / "day [1].zip"))
    shutil.copy(literal, tmp_path / "day 1.zip")  # what the pattern would match instead
    out = tmp_path / "release"
    code, lines = quiet_cli("twitter", "build", str(literal), "--out", str(out))
    assert code == 0, lines
    manifest = json.loads((out / "manifest.json").read_text())
    assert [i["name"] for i in manifest["inputs"]] == ["day [1].zip"]


def test_the_release_inside_the_input_pattern_is_never_read(tmp_path: Path) -> None:
    good_archive(tmp_path / "good.zip")
    out = tmp_path / "release"
    pattern = str(tmp_path / "**")
    for _ in range(2):  # the second build finds the first's release under the pattern
        code, lines = quiet_cli("twitter", "build", pattern, "--out", str(out))
        assert code == 0, lines
        manifest = json.loads((out / "manifest.json").read_text())
        assert [i["name"] for i in manifest["inputs"]] == ["good.zip"]
    assert validate_release(out).ok
