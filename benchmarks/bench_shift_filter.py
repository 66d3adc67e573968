"""How much of a corpus shifted by one line the length-ratio filter stops, and what it costs.

    PYTHONPATH=src python benchmarks/bench_shift_filter.py
    PYTHONPATH=src python benchmarks/bench_shift_filter.py --ratios 2 2.5 3 4

Input: the real line-aligned pairs of ``../shared/realdata`` (Tatoeba deu, fra, spa, ita,
ara, tur with English, 1,000 lines each; OPUS RF en-fr, 175 lines). For each file pair the
"true" pairs are line ``n`` with line ``n``; the "shifted" pairs are line ``n`` with line
``n + 1`` of the other side, what a corpus missing one line pairs from that line on. Only
pairs within the token limits (3 to 100 per side) are counted, since the others are dropped
anyway. Language id cannot tell a shifted pair (both sides are in the right language), so
the length ratio is the filter that can.

Prints, per threshold, the share of shifted pairs stopped (``bitext_length_ratio``) and of
true pairs lost, per file pair and over all. Deterministic: one run is the figure.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from corpusforge.pairing.filters import BitextFilterConfig, FilterReason, check_bitext_length

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"
LENGTH_ONLY = BitextFilterConfig(max_length_ratio=None)


def file_pairs() -> dict[str, tuple[list[str], list[str]]]:
    pairs = {}
    tatoeba = REALDATA / "tatoeba-laser-v1"
    for lang in ("deu", "fra", "spa", "ita", "ara", "tur"):
        pairs[f"tatoeba {lang}-eng"] = (
            (tatoeba / f"tatoeba.{lang}-eng.{lang}").read_text("utf-8").splitlines(),
            (tatoeba / f"tatoeba.{lang}-eng.eng").read_text("utf-8").splitlines(),
        )
    rf = REALDATA / "opus-rf-sample" / "t" / "moses"
    pairs["RF en-fr"] = (
        (rf / "RF-tokenized.fr").read_text("utf-8").splitlines(),
        (rf / "RF-tokenized.en").read_text("utf-8").splitlines(),
    )
    return pairs


def stopped(pairs: list[tuple[str, str]], ratio: float) -> tuple[int, int]:
    """(pairs within the token limits, of them stopped by the ratio)."""
    config = BitextFilterConfig(max_length_ratio=ratio)
    within = [(a, b) for a, b in pairs if check_bitext_length(a, b, LENGTH_ONLY) is None]
    hit = sum(
        check_bitext_length(a, b, config) is FilterReason.BITEXT_LENGTH_RATIO for a, b in within
    )
    return len(within), hit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ratios", type=float, nargs="+", default=[2.0, 2.5, 3.0])
    args = parser.parse_args()
    report: dict[str, dict[str, str]] = {}
    for ratio in args.ratios:
        totals = [0, 0, 0, 0]
        rows = {}
        for name, (other, english) in file_pairs().items():
            true = list(zip(english, other, strict=True))
            shifted = list(zip(english[1:], other[:-1], strict=True))
            t_n, t_hit = stopped(true, ratio)
            s_n, s_hit = stopped(shifted, ratio)
            totals = [totals[0] + s_n, totals[1] + s_hit, totals[2] + t_n, totals[3] + t_hit]
            rows[name] = f"shifted stopped {s_hit}/{s_n}, true lost {t_hit}/{t_n}"
        s_n, s_hit, t_n, t_hit = totals
        rows["all"] = (
            f"shifted stopped {s_hit}/{s_n} ({s_hit / s_n:.1%}), "
            f"true lost {t_hit}/{t_n} ({t_hit / t_n:.2%})"
        )
        report[f"max_length_ratio {ratio:g}"] = rows
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
