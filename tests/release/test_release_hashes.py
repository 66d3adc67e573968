"""Proof that nothing changes for users: the sha256 of every file of four releases.

The releases are built from a synthetic Twitter archive (fixed seed, shared with the other
release tests), the real Archive Team sample, the Tatoeba German-English sample (both in
``../shared/realdata``) and the small ParaNMT file of ``tests/bitext/test_build_paranmt.py``.
Every file under each release folder is hashed, the manifest included, and compared with
``release_hashes.json`` next to this module.

Nothing is left out: two builds into different folders give the same bytes (the manifest
holds input names, not paths, and no timestamp). The manifest's ``software`` field and the
Parquet footers do record the package versions, so upgrading pyarrow, Beam or Python may
change the hashes; the failure then says which versions differ from the recorded ones.

The hashes change only on purpose, and the commit that changes them says why. Regenerate
them with::

    CORPUSFORGE_UPDATE_HASHES=1 .venv/bin/pytest tests/release/test_release_hashes.py
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from corpusforge.release.io import software
from tests.release import real_release, synthetic_release

HASHES = Path(__file__).with_name("release_hashes.json")
UPDATE = os.environ.get("CORPUSFORGE_UPDATE_HASHES") == "1"
TATOEBA = Path("tatoeba-laser-v1") / "tatoeba.deu-eng"


def _tatoeba(factory: pytest.TempPathFactory, realdata: Path) -> Path:
    from corpusforge.builds.bitext import build
    from corpusforge.config.bitext import BitextConfig

    out = factory.mktemp("tatoeba") / "release"
    sides = (f"{realdata / TATOEBA}.deu", f"{realdata / TATOEBA}.eng")
    build(BitextConfig(inputs=sides, out=str(out)))
    return out


def _paranmt(factory: pytest.TempPathFactory, realdata: Path) -> Path:
    from corpusforge.builds.paranmt import build
    from corpusforge.config.bitext import ParaphraseConfig
    from tests.bitext.test_build_paranmt import write_paranmt

    root = factory.mktemp("paranmt")
    uri = write_paranmt(root / "in" / "para-nmt-sample.txt.gz")
    build(ParaphraseConfig(inputs=(uri,), out=str(root / "release")))
    return root / "release"


def _synthetic(factory: pytest.TempPathFactory, realdata: Path) -> Path:
    return synthetic_release(factory)


RELEASES: dict[str, tuple[Callable[[pytest.TempPathFactory, Path], Path], bool]] = {
    # name: (builder, needs ../shared/realdata)
    "twitter-synthetic": (_synthetic, False),
    "twitter-real": (real_release, True),
    "bitext-tatoeba-deu-eng": (_tatoeba, True),
    "paranmt-sample": (_paranmt, False),
}


def release_hashes(release: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``release``, sorted by path."""
    return {
        f.relative_to(release).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(release.rglob("*"))
        if f.is_file()
    }


def _recorded() -> dict:
    return json.loads(HASHES.read_text()) if HASHES.exists() else {"releases": {}}


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_release_files_keep_their_hashes(
    name: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    builder, needs_realdata = RELEASES[name]
    realdata = request.getfixturevalue("realdata") if needs_realdata else Path()
    hashes = release_hashes(builder(tmp_path_factory, realdata))
    assert hashes, f"{name}: the build wrote no files"
    if UPDATE:
        doc = _recorded()
        doc["software"] = software()
        doc["releases"][name] = hashes
        doc["releases"] = dict(sorted(doc["releases"].items()))
        HASHES.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return
    doc = _recorded()
    expected = doc["releases"].get(name)
    assert expected is not None, f"{name}: no recorded hashes; run with CORPUSFORGE_UPDATE_HASHES=1"
    changed = sorted(p for p in expected.keys() | hashes.keys() if expected.get(p) != hashes.get(p))
    now = software()
    recorded = doc.get("software", {})
    versions = {k: (v, now.get(k)) for k, v in recorded.items() if now.get(k) != v}
    assert changed == [], (
        f"{name}: these release files changed: {changed}"
        + (f" (package versions differ from the recorded ones: {versions})" if versions else "")
        + "; if on purpose, regenerate with CORPUSFORGE_UPDATE_HASHES=1 and say why in the commit"
    )
