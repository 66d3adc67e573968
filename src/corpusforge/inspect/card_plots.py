"""Release statistics -> the dataset card's plots: the funnel and the text lengths.

Turns :func:`corpusforge.inspect.stats.release_stats` (with histograms) into matplotlib
figures drawn by the Agg renderer at a fixed size and ``DPI``, under matplotlib's default
style whatever the user's ``matplotlibrc`` says, so the PNGs that
:func:`corpusforge.inspect.card.write_card` saves are the same bytes on every run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

DPI = 100


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _styled(draw: Any) -> Any:
    """Run ``draw()`` under matplotlib's default style, whatever the user's rc says."""
    import matplotlib.style

    with matplotlib.style.context("default"):
        return draw()


def funnel_figure(funnel: Mapping[str, Any]) -> Any:
    """The funnel: counts per stage (log scale) and candidate children per dataset.

    Args:
        funnel: ``release_stats(...)["funnel"]``: ``stages`` (label, count) and, per
            dataset, its ``rows`` and ``dropped`` children by reason.
    """

    def draw() -> Any:
        stages = funnel["stages"]
        datasets = funnel["datasets"]
        figure = _figure(10, 4.5)
        left, right = figure.subplots(1, 2, width_ratios=[1.1, 1])
        labels = [s["label"] for s in stages][::-1]
        counts = [s["count"] for s in stages][::-1]
        left.barh(range(len(counts)), [max(c, 0.8) for c in counts], color="#4c72b0")
        left.set_yticks(range(len(labels)), labels, fontsize=8)
        left.set_xscale("log")
        left.set_title("from lines read to pairs kept", fontsize=10)
        for y, c in enumerate(counts):
            left.annotate(
                f"{c:,}",
                (max(c, 0.8), y),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
        left.margins(x=0.25)
        names = list(datasets)
        reasons = sorted({r for d in datasets.values() for r in d["dropped"]})
        colors = _palette(len(reasons) + 1)
        base = np.zeros(len(names))
        kept = np.array([datasets[n]["rows"] for n in names], dtype=float)
        right.barh(names, kept, color=colors[0], label="kept (children in pairs)")
        base += kept
        for i, reason in enumerate(reasons, start=1):
            values = np.array([datasets[n]["dropped"].get(reason, 0) for n in names], float)
            right.barh(names, values, left=base, color=colors[i], label=reason)
            base += values
        right.invert_yaxis()
        right.set_title("candidate children per dataset", fontsize=10)
        right.tick_params(labelsize=8)
        if names:
            right.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return figure

    return _styled(draw)


def _palette(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return [cmap(i % 20) for i in range(max(n, 1))]


def lengths_figure(datasets: Mapping[str, Any]) -> Any:
    """Histograms of text lengths in characters, anchor and positive, one panel per dataset.

    Args:
        datasets: ``release_stats(..., histograms=True)["datasets"]``.
    """

    def draw() -> Any:
        names = [n for n, d in datasets.items() if d.get("histograms")]
        cols = 2
        rows = max(1, math.ceil(len(names) / cols))
        figure = _figure(10, 2.4 * rows)
        axes = np.atleast_1d(figure.subplots(rows, cols, squeeze=False)).ravel()
        for ax, name in zip(axes, names, strict=False):
            hist = datasets[name]["histograms"]
            edges = hist["edges"]
            for side, color in (("anchor", "#4c72b0"), ("positive", "#dd8452")):
                ax.stairs(hist[side], edges, label=side, color=color)
            ax.set_title(f"{name} (pairs: {datasets[name]['rows']:,})", fontsize=9)
            ax.set_ylabel("texts", fontsize=8)
            ax.set_xlabel("characters", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.legend(fontsize=7)
        for ax in axes[len(names) :]:
            ax.set_axis_off()
        return figure

    return _styled(draw)
