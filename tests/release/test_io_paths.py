"""Local paths through release.io: files land atomically, folders and files go, moves and
listings work, all without Beam (URIs alone reach Beam's FileSystems)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from corpusforge.release import io


def test_a_file_lands_whole_in_a_folder_made_for_it(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "part-00000-of-00001.parquet"
    io.write_file_atomically(str(path), b"first")
    io.write_file_atomically(str(path), b"second")  # replaces
    assert path.read_bytes() == b"second"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no .tmp left


def test_json_side_files_round_trip(tmp_path: Path) -> None:
    path = str(tmp_path / "_counts.json")
    io.write_json(path, {"b": 2, "a": "é"})
    assert io.read_json(path) == {"a": "é", "b": 2}
    assert json.loads(Path(path).read_text(encoding="utf-8")) == {"a": "é", "b": 2}


def test_listing_moving_and_deleting(tmp_path: Path) -> None:
    root = tmp_path / "release"
    assert io.files_under(str(root)) == []
    for name in ("pairs/qt/x.parquet", "pairs/rp/y.parquet", "z.json"):
        io.write_file_atomically(io.join(str(root), name), name.encode())
    assert sorted(io.files_under(str(root / "pairs"))) == [
        str(root / "pairs" / "qt" / "x.parquet"),
        str(root / "pairs" / "rp" / "y.parquet"),
    ]
    io.rename(str(root / "z.json"), str(root / "pairs" / "z.json"))
    assert (root / "pairs" / "z.json").read_bytes() == b"z.json"
    io.delete([str(root / "pairs" / "qt"), str(root / "pairs" / "z.json")])
    assert io.files_under(str(root)) == [str(root / "pairs" / "rp" / "y.parquet")]
    io.delete_tree(str(root))
    assert not io.exists(str(root))
    io.delete_tree(str(root))  # already gone: nothing to do
    with pytest.raises(FileNotFoundError):
        io.delete([str(root)])


def test_local_paths_never_import_beam(tmp_path: Path) -> None:
    code = f"""
import sys
from corpusforge.release import io
root = io.join({str(tmp_path)!r}, "r")
io.ensure_dir(root)
io.write_json(io.join(root, "x.json"), [1])
io.rename(io.join(root, "x.json"), io.join(root, "y.json"))
assert io.files_under(root) == [io.join(root, "y.json")] and io.exists(root)
io.delete_tree(root)
print("apache_beam" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
