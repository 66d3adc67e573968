"""Bitext matching accuracy on hand-checked vectors and on real Tatoeba bitext."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from corpusforge.train.bitext_eval import bitext_matching_accuracy, read_aligned_lines


class Lookup:
    """Embeds each text as a fixed, given vector (normalised)."""

    def __init__(self, vectors: dict[str, tuple[float, ...]]) -> None:
        self.vectors = vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.array([self.vectors[t] for t in texts], dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


# Sources a = (1, 0) and b = (0.8, 0.6); targets x = (1, 0) and y = (0, 1).
# cos: a-x 1, a-y 0, b-x 0.8, b-y 0.6.
# en -> x: a picks x (right), b picks x (wrong): 1/2.
# x -> en: x picks a (1 > 0.8, right), y picks b (0.6 > 0, right): 2/2.
HUB = Lookup({"a": (1.0, 0.0), "b": (0.8, 0.6), "x": (1.0, 0.0), "y": (0.0, 1.0)})


@pytest.mark.parametrize("block_rows", [1, 4096])
def test_hand_checked_hub(block_rows: int) -> None:
    result = bitext_matching_accuracy(HUB, ["a", "b"], ["x", "y"], block_rows=block_rows)
    assert result == {"en_to_x": 0.5, "x_to_en": 1.0}


@pytest.mark.parametrize("block_rows", [1, 2, 4096])
def test_ties_go_to_the_first_candidate(block_rows: int) -> None:
    flat = Lookup({t: (0.0, 0.0) for t in "abcxyz"})
    result = bitext_matching_accuracy(flat, list("abc"), list("xyz"), block_rows=block_rows)
    assert result == {"en_to_x": pytest.approx(1 / 3), "x_to_en": pytest.approx(1 / 3)}


def test_sides_must_align() -> None:
    with pytest.raises(ValueError, match="2 source but 1 target"):
        bitext_matching_accuracy(HUB, ["a", "b"], ["x"])
    with pytest.raises(ValueError, match="no sentences"):
        bitext_matching_accuracy(HUB, [], [])


def test_read_aligned_lines_splits_on_line_feeds_only(tmp_path: Path) -> None:
    (tmp_path / "s.eng").write_text("one\u2028still one\r\ntwo\n", encoding="utf-8")
    (tmp_path / "s.deu").write_text("eins\nzwei\n", encoding="utf-8")
    src, trg = read_aligned_lines(tmp_path / "s.eng", tmp_path / "s.deu")
    assert src == ["one\u2028still one", "two"]
    assert trg == ["eins", "zwei"]
    (tmp_path / "short.deu").write_text("eins\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has 2 lines but"):
        read_aligned_lines(tmp_path / "s.eng", tmp_path / "short.deu")


def test_real_tatoeba_with_the_lexical_baseline(realdata: Path) -> None:
    from corpusforge.eval.lexical import TfidfEncoder

    folder = realdata / "tatoeba-laser-v1"
    eng, deu = read_aligned_lines(folder / "tatoeba.deu-eng.eng", folder / "tatoeba.deu-eng.deu")
    assert len(eng) == len(deu) == 1000
    result = bitext_matching_accuracy(TfidfEncoder(eng + deu), eng, deu)
    # Shared names, numbers and cognates: far above chance (1/1000), far from perfect
    # (0.088 and 0.096 when written).
    assert 0.02 < result["en_to_x"] < 0.5
    assert 0.02 < result["x_to_en"] < 0.5
