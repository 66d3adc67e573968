"""Release statistics -> the dataset card's plots, as SVG: the funnel, the text lengths and
the filter scores of bitext and ParaNMT pairs.

Turns :func:`corpusforge.inspect.stats.release_stats` (with histograms) into pygal charts
rendered as standalone SVG (no external script, no web font: pygal's inline config block is
inert data), which GitHub and the Hugging Face Hub show inline from the release's ``card/``
folder. Each chart gets a fixed id instead of
pygal's random one, so :func:`corpusforge.inspect.card.write_card` writes the same bytes on
every run. pygal draws in a few milliseconds and imports in a few tens of them, so the card
adds almost nothing to a small build.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pygal
from pygal.style import Style

WIDTH = 1000
"""Width of every plot, in SVG pixels."""

STYLE = Style(
    font_family="DejaVu Sans, Helvetica, Arial, sans-serif",
    background="white",
    plot_background="white",
    colors=(
        "#4c72b0",
        "#dd8452",
        "#55a868",
        "#c44e52",
        "#8172b3",
        "#937860",
        "#da8bc3",
        "#8c8c8c",
        "#ccb974",
        "#64b5cd",
    ),
    title_font_size=15,
    label_font_size=11,
    major_label_font_size=11,
    legend_font_size=12,
    value_font_size=11,
    opacity="0.85",
)


def _chart(kind: Any, chart_id: str, height: int, **options: Any) -> Any:
    chart = kind(
        width=WIDTH,
        height=height,
        style=STYLE,
        js=(),
        truncate_label=-1,
        truncate_legend=-1,
        **options,
    )
    chart.uuid = chart_id  # pygal's default is a fresh uuid4: the same bytes twice need this
    return chart


def _render(chart: Any) -> bytes:
    svg: bytes = chart.render()
    return svg


def funnel_svg(funnel: Mapping[str, Any]) -> bytes:
    """Counts per stage, from lines read to pairs kept.

    Args:
        funnel: ``release_stats(...)["funnel"]``: its ``stages`` (label, count).
    """
    stages = funnel["stages"]
    chart = _chart(
        pygal.HorizontalBar,
        "funnel",
        80 + 32 * len(stages),
        title="from lines read to pairs kept",
        show_legend=False,
        print_values=True,
        print_values_position="top",
        value_formatter=lambda v: f"{v:,.0f}",
    )
    chart.x_labels = [s["label"] for s in stages][::-1]
    chart.add("count", [s["count"] for s in stages][::-1])
    return _render(chart)


def children_svg(funnel: Mapping[str, Any]) -> bytes:
    """Candidate children per dataset: kept (in pairs) and dropped, stacked by reason.

    Args:
        funnel: ``release_stats(...)["funnel"]``: per dataset, its ``rows`` (children in
            pairs) and ``dropped`` children by reason.
    """
    datasets = funnel["datasets"]
    names = list(datasets)
    reasons = sorted({r for d in datasets.values() for r in d["dropped"]})
    chart = _chart(
        pygal.HorizontalStackedBar,
        "children",
        140 + 40 * max(len(names), 1) + 18 * (len(reasons) + 1) // 2,
        title="candidate children per dataset",
        legend_at_bottom=True,
        legend_at_bottom_columns=2,
        value_formatter=lambda v: f"{v:,.0f}",
    )
    chart.x_labels = names[::-1]
    chart.add("kept (children in pairs)", [datasets[n]["rows"] for n in names][::-1])
    for reason in reasons:
        chart.add(reason, [datasets[n]["dropped"].get(reason, 0) for n in names][::-1])
    return _render(chart)


def lengths_svg(name: str, dataset: Mapping[str, Any]) -> bytes:
    """Histogram of one dataset's text lengths in characters, anchor and positive.

    Args:
        name: the dataset.
        dataset: ``release_stats(..., histograms=True)["datasets"][name]``.
    """
    hist = dataset["histograms"]
    edges = hist["edges"]
    chart = _chart(
        pygal.XY,
        f"lengths-{name}",
        320,
        title=f"{name} (pairs: {dataset['rows']:,})",
        x_title="characters",
        y_title="texts",
        show_dots=False,
        stroke_style={"width": 1.5},
        legend_at_bottom=True,
        y_labels=_ticks(max([*hist["anchor"], *hist["positive"], 1])),
        x_value_formatter=lambda v: f"{v:,.0f}",
    )
    for side in ("anchor", "positive"):
        chart.add(side, _stairs(edges, hist[side]))
    return _render(chart)


def scores_svg(name: str, dataset: Mapping[str, Any]) -> bytes:
    """The distribution of each filter score of one dataset's pairs: min, p5, p50, p95 and
    max, a line per score (length ratio, each side's language-id probability, the
    paraphrase score, the trigram overlap), to see where a threshold would cut.

    Args:
        name: the dataset.
        dataset: ``release_stats(...)["datasets"][name]``, with its ``scores``.
    """
    points = ("min", "p5", "p50", "p95", "max")
    chart = _chart(
        pygal.Line,
        f"scores-{name}",
        320,
        title=f"{name}: filter scores of the pairs kept",
        x_title="quantile",
        legend_at_bottom=True,
        value_formatter=lambda v: f"{v:.3f}",
    )
    chart.x_labels = list(points)
    for score, values in dataset["scores"].items():
        chart.add(score, [values[p] for p in points])
    return _render(chart)


def _ticks(top: int) -> list[int]:
    """Whole-number ticks from 0 past ``top``, about five, at steps of 1, 2 or 5 × 10^k."""
    scale = 1
    while True:
        for step in (scale, 2 * scale, 5 * scale):
            if top / step <= 5:
                return list(range(0, top + step, step))
        scale *= 10


def _stairs(edges: list[float], counts: list[int]) -> list[tuple[float, int]]:
    """A histogram as the corners of its outline: flat over each bin, steps at the edges."""
    points: list[tuple[float, int]] = [(edges[0], 0)]
    for left, right, count in zip(edges, edges[1:], counts, strict=False):
        points += [(left, count), (right, count)]
    points.append((edges[len(counts)], 0))
    return points
