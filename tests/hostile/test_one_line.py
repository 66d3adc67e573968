"""Every failure a user can cause or meet ends in one ``error:`` line, never a traceback.

Each case runs the real ``corpusforge`` command in a fresh process and checks its exit
status, that stderr is exactly one line starting with ``error:``, and what is left beside the
release: a full disk under ``--out`` (a real 1 MiB tmpfs), a training run on a release without
pairs, ``--runner prism`` without the Prism binary, an input that is not there, a broken
manifest (an unexpected exception: its type is named). ``--debug`` and ``CORPUSFORGE_DEBUG=1``
show the traceback. SIGTERM and SIGINT are in ``test_signals.py``; the S3 failures in
``tests/s3``. The small items of issue 36 point 7 follow: ``--out`` a symbolic link, a bitext
file name holding a newline, a ``--dataset`` that is not a folder name.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from corpusforge.schemas import PAIR, arrow_schema
from corpusforge.synth.twitter import write_synthetic_archive

MAIN = "from corpusforge.cli import main; main()"
ROWS = [
    "Je voudrais un café, s'il vous plaît.\tI would like a coffee, please.",
    "Nous habitons à Paris depuis dix ans.\tWe have lived in Paris for ten years.",
    "Le chat dort toute la journée sur le canapé.\tThe cat sleeps on the sofa all day.",
]


def corpusforge(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``corpusforge ARGS`` in a fresh interpreter, through the console script's ``main``."""
    environment = {k: v for k, v in os.environ.items() if k != "CORPUSFORGE_DEBUG"}
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        cwd=cwd,
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_error_line(proc: subprocess.CompletedProcess[str], status: int) -> str:
    """The one ``error:`` line ``proc`` printed, after checking its exit status."""
    assert proc.returncode == status, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def beside(out: Path) -> list[str]:
    """The draft, lock or old release left beside ``out``."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def tsv(path: Path, lines: int) -> Path:
    """A French-English TSV of ``lines`` distinct pairs (the three rows, numbered)."""
    rows = [f"{ROWS[i % 3].replace('.', f' {i}.')}\n" for i in range(lines)]
    path.write_text("".join(rows), encoding="utf-8")
    return path


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs; skips where it cannot be mounted (not root, no mount namespace)."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError as exc:
        pytest.skip(f"cannot mount a tmpfs: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def inputs_of(source: str, folder: Path) -> tuple[Path, Path]:
    """A few records of ``source`` and many: their extract or spill does not fit in 1 MiB."""
    if source == "bitext":
        return tsv(folder / "few.fr-en.tsv", 3), tsv(folder / "many.fr-en.tsv", 40_000)
    few, many = folder / "few.zip", folder / "many.zip"
    write_synthetic_archive(few, tweets=300, seed=1, truth=False)
    write_synthetic_archive(many, tweets=8000, seed=2, truth=False)
    return few, many


@pytest.mark.parametrize("source", ["bitext", "twitter"])
def test_a_full_disk_under_out_is_one_line_naming_the_folder(
    source: str, tmpfs: Path, tmp_path: Path
) -> None:
    out = tmpfs / "release"
    few, many = inputs_of(source, tmp_path)
    built = corpusforge(source, "build", str(few), "--out", str(out), "--quiet")
    assert built.returncode == 0, built.stderr
    before = digests(out)
    proc = corpusforge(source, "build", str(many), "--out", str(out), "--workers", "2", "--quiet")
    line = one_error_line(proc, 1)
    assert line.startswith(f"error: no space left on the device of {out} (")
    assert line.endswith(" MiB free); nothing published")
    assert beside(out) == []
    assert digests(out) == before


def test_training_on_a_release_without_pairs_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pairs = tmp_path / "release" / "pairs" / "all"
    pairs.mkdir(parents=True)
    pq.write_table(arrow_schema(PAIR).empty_table(), pairs / "part-00000.parquet")
    proc = corpusforge("train", "--data", "release/pairs/all", "--out", "m", cwd=tmp_path)
    assert one_error_line(proc, 2) == "error: release/pairs/all holds no pairs to train on"
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("source", ["bitext", "twitter"])
def test_runner_prism_without_its_binary_is_one_line_and_no_draft(
    source: str, tmp_path: Path
) -> None:
    given = tsv(tmp_path / "few.fr-en.tsv", 3) if source == "bitext" else tmp_path / "a.zip"
    given.touch()
    out = tmp_path / "release"
    missing = tmp_path / "no-prism"
    proc = corpusforge(
        source,
        "build",
        str(given),
        "--out",
        str(out),
        "--runner",
        "prism",
        env={"CORPUSFORGE_PRISM": str(missing)},
    )
    line = one_error_line(proc, 2)
    assert line.startswith("error: --runner prism needs the Prism runner")
    assert "bash scripts/prism.sh" in line and str(missing) in line
    assert "PrismRunner" not in line
    assert not out.exists() and beside(out) == []


def test_a_missing_input_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "release"
    proc = corpusforge("bitext", "build", str(tmp_path / "absent.fr-en.tsv"), "--out", str(out))
    assert "absent.fr-en.tsv" in one_error_line(proc, 2)
    assert not out.exists() and beside(out) == []


def broken_release(tmp_path: Path) -> Path:
    release = tmp_path / "release"
    release.mkdir()
    (release / "manifest.json").write_text("{not json", encoding="utf-8")
    return release


def test_an_unexpected_error_is_one_line_naming_its_type(tmp_path: Path) -> None:
    proc = corpusforge("stats", str(broken_release(tmp_path)))
    line = one_error_line(proc, 1)
    assert line.startswith("error: JSONDecodeError: ")
    assert line.endswith("(--debug shows the traceback)")


@pytest.mark.parametrize("how", ["--debug", "CORPUSFORGE_DEBUG=1"])
def test_debug_shows_the_traceback(how: str, tmp_path: Path) -> None:
    release = str(broken_release(tmp_path))
    if how == "--debug":
        proc = corpusforge("--debug", "stats", release)
    else:
        proc = corpusforge("stats", release, env={"CORPUSFORGE_DEBUG": "1"})
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback (most recent call last):")
    assert "json.decoder.JSONDecodeError" in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("error: JSONDecodeError: ")
    assert "--debug shows" not in proc.stderr


def test_debug_shows_the_traceback_of_a_build_error(tmp_path: Path) -> None:
    proc = corpusforge(
        "--debug", "bitext", "build", str(tmp_path / "absent.fr-en.tsv"), "--out", "x"
    )
    assert proc.returncode == 2
    assert "Traceback (most recent call last):" in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("error: ")


# --------------------------------------------------------------------------- point 7


def test_out_a_symbolic_link_replaces_the_release_it_points_to(tmp_path: Path) -> None:
    first = tsv(tmp_path / "first.fr-en.tsv", 3)
    (tmp_path / "releases").mkdir()
    target = tmp_path / "releases" / "v1"
    built = corpusforge("bitext", "build", str(first), "--out", str(target), "--quiet")
    assert built.returncode == 0, built.stderr
    link = tmp_path / "current"
    link.symlink_to(target)
    second = tsv(tmp_path / "second.fr-en.tsv", 6)
    built = corpusforge("bitext", "build", str(second), "--out", str(link), "--quiet")
    assert built.returncode == 0, built.stderr
    assert link.is_symlink() and link.resolve() == target
    manifest = json.loads((target / "manifest.json").read_text())
    assert [i["name"] for i in manifest["inputs"]] == ["second.fr-en.tsv"]
    assert beside(link) == [] and beside(target) == []


def test_a_file_name_with_a_newline_names_its_dataset_safely(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    given = tsv(tmp_path / "My\nCorpus: x.fr-en.tsv", 3)
    out = tmp_path / "release"
    built = corpusforge("bitext", "build", str(given), "--out", str(out), "--quiet")
    assert built.returncode == 0, built.stderr
    folders = sorted(p.name for p in (out / "pairs").iterdir())
    assert folders == ["My_Corpus__x"]
    pairs = pl.read_parquet(out / "pairs" / "My_Corpus__x" / "*" / "*.parquet")
    assert pairs["dataset"].unique().to_list() == ["My_Corpus__x"]
    card = corpusforge("card", str(out))
    assert card.returncode == 0, card.stderr
    header = (out / "README.md").read_text(encoding="utf-8").split("---")[1]
    configs = yaml.safe_load(header)["configs"]
    assert [c["config_name"] for c in configs] == ["My_Corpus__x"]


def test_a_dataset_flag_that_is_no_folder_name_is_refused(tmp_path: Path) -> None:
    given = tsv(tmp_path / "few.fr-en.tsv", 3)
    out = tmp_path / "release"
    proc = corpusforge("bitext", "build", str(given), "--out", str(out), "--dataset", "a\nb")
    assert proc.returncode == 2
    assert "--dataset" in proc.stderr and "folder" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("twitter", "build", "x.zip", "--out", "rel", "--memory-limit", "200"), "--memory-limit"),
        (("validate",), "Missing argument"),
        (("validate", "no-such-folder"), "is not a directory"),
        (("no-such-command",), "No such command"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_help(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    """A value a flag refuses, a missing argument, an unknown command: one line, exit 2, and
    the help page to read (the parser's usage box was six lines)."""
    line = one_error_line(corpusforge(*args, cwd=tmp_path), 2)
    assert says in line and line.endswith("--help)")
    assert not (tmp_path / "rel").exists()


def test_a_budget_below_the_floor_prints_no_empty_summary(tmp_path: Path) -> None:
    """A Twitter build refused before its first stage prints its one line, not an empty run
    summary above it."""
    archive = tmp_path / "day.zip"
    write_synthetic_archive(archive, tweets=200, layout="zip-2020")
    line = one_error_line(
        corpusforge(
            "twitter", "build", str(archive), "--out", "rel", "--memory-limit", "260", cwd=tmp_path
        ),
        2,
    )
    assert "below the" in line
