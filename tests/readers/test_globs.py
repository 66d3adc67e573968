"""The globs ``versions --current`` and the card give readers: each matches exactly the
files the manifest lists (bitext groups included), with no server needed."""

from __future__ import annotations

import fnmatch

import pytest

from corpusforge.release.layout import files_glob, pair_globs, training_glob

TWITTER = {
    name: {
        "files": [
            f"pairs/{name}/part-00000-of-00002.parquet",
            f"pairs/{name}/part-00001-of-00002.parquet",
        ]
    }
    for name in ("qt", "rp", "all")
}
BITEXT = {
    "tatoeba": {"files": ["pairs/tatoeba/de-en/part-00000-of-00001.parquet",
                          "pairs/tatoeba/en-fr/part-00000-of-00001.parquet"]},
    "wikimatrix": {"files": ["pairs/wikimatrix/de-en/part-00000-of-00001.parquet"]},
}  # fmt: skip


def test_a_twitter_release_trains_on_its_all_dataset() -> None:
    assert training_glob(TWITTER) == "pairs/all/*.parquet"
    assert pair_globs(TWITTER)["qt"] == "pairs/qt/*.parquet"


def test_bitext_groups_are_one_folder_deeper() -> None:
    assert pair_globs(BITEXT) == {
        "tatoeba": "pairs/tatoeba/*/*.parquet",
        "wikimatrix": "pairs/wikimatrix/de-en/*.parquet",
    }
    assert training_glob(BITEXT) == "pairs/*/*/*.parquet"


@pytest.mark.parametrize("datasets", [TWITTER, BITEXT], ids=["twitter", "bitext"])
def test_each_glob_matches_its_files(datasets: dict) -> None:
    listed = [f for ds in datasets.values() for f in ds["files"]]
    for name, glob in pair_globs(datasets).items():
        # fnmatch's * crosses "/": check the depth too, as the readers' globs do
        hits = [f for f in listed if fnmatch.fnmatch(f, glob) and f.count("/") == glob.count("/")]
        assert sorted(hits) == sorted(datasets[name]["files"])


def test_files_at_different_depths_get_a_recursive_glob() -> None:
    assert files_glob(["pairs/a/x.parquet", "pairs/b/en-de/y.parquet"]) == "pairs/**/*.parquet"
