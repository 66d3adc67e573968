"""A release's manifest, statistics, samples and plots -> the dataset card's Markdown.

``render_card`` writes the Hugging Face dataset-card YAML header, then the sections: what
the data is, its contents and held-out benchmarks, unreadable inputs, the funnel from lines
read to pairs kept, text lengths and languages, sample pairs, how it was built, licence and
ethics, and how to load it. A pure function of its arguments:
:func:`corpusforge.inspect.card.write_card` gathers them from the release.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from corpusforge.inspect.stats import ordered
from corpusforge.release.layout import pair_globs, training_glob

SAMPLE_CHARS = 200

_TWITTER_DATASETS = {
    "qt": "quoted tweet (anchor) and a quote of it (positive)",
    "rp": "replied-to tweet (anchor) and a reply to it (positive)",
    "coqt": "two quotes of the same tweet",
    "corp": "two replies to the same tweet",
    "all": "the four datasets together (the `dataset` column says which)",
}
_TWITTER_BENCHMARKS = {
    "dq": "a tweet; positives are its quotes",
    "dr": "a tweet; positives are its replies",
    "cq": "a quote; positives are other quotes of the same tweet",
    "cr": "a reply; positives are other replies to the same tweet",
}
_KIND_TITLE = {
    "twitter-pairs": "weakly similar tweet pairs",
    "bitext-pairs": "bitext pairs",
    "paranmt-pairs": "paraphrase pairs",
}


def _cell(text: Any, limit: int = SAMPLE_CHARS) -> str:
    """A Markdown table cell: one line, pipes escaped, cut at ``limit`` characters."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("\\", "\\\\").replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str) -> list[str]:
    """A Markdown table; ``align`` has one letter per column, ``l`` or ``r``."""
    marks = [":---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else ("–" if value is None else str(value))


def _size_category(n: int) -> str:
    bounds = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
        (100_000_000, "10M<n<100M"),
    ]
    for bound, label in bounds:
        if n < bound:
            return label
    return "100M<n<1B"


def _languages(stats: Mapping[str, Any]) -> list[str]:
    codes = set()
    for ds in stats["datasets"].values():
        for key in ds["languages"]:
            codes.update(key.split("-"))
    return sorted(codes)


def render_card(
    manifest: Mapping[str, Any],
    stats: Mapping[str, Any],
    samples: Mapping[str, list[dict[str, Any]]],
    plots: Mapping[str, str],
    *,
    name: str,
    unreadable: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The card's Markdown.

    Args:
        manifest: the release manifest.
        stats: :func:`corpusforge.inspect.stats.release_stats` with histograms.
        samples: sample pair rows per dataset.
        plots: card-relative paths of the plots: ``funnel``, ``children`` (when the release
            has datasets with a funnel) and ``lengths-<dataset>`` (per dataset).
        name: the release folder's name, used in the loading examples.
        unreadable: the archives and members that could not be read at all
            (:func:`corpusforge.inspect.unreadable.unreadable_inputs`).
    """
    kind = manifest["kind"]
    datasets = ordered(manifest["datasets"])
    total = (
        datasets["all"]["rows"] if "all" in datasets else sum(d["rows"] for d in datasets.values())
    )
    twitter = kind == "twitter-pairs"
    title = f"{name}: {_KIND_TITLE.get(kind, kind)}"
    out: list[str] = ["---", f"pretty_name: {json.dumps(title, ensure_ascii=False)}"]
    out += ["language:"] + [f"- {code}" for code in _languages(stats)]
    out += [
        "license: other",
        "task_categories:",
        "- sentence-similarity",
        "size_categories:",
        f"- {_size_category(total)}",
        "configs:",
    ]
    globs = pair_globs(datasets)
    for ds_name in datasets:
        out += [f"- config_name: {_yaml_name(ds_name)}"]
        if ds_name == "all":
            out += ["  default: true"]
        out += [
            "  data_files:",
            "  - split: train",
            f"    path: {json.dumps(globs[ds_name], ensure_ascii=False)}",
        ]
    out += ["---", ""]

    out += [f"# {title}", ""]
    out += [*_summary(manifest, total, twitter), ""]
    out += _contents(manifest, datasets, twitter)
    out += _unreadable_section(unreadable)
    out += _funnel_section(stats["funnel"], plots)
    out += _lengths_section(stats, plots)
    out += _scores_section(stats, plots)
    out += _samples_section(samples)
    out += _build_section(manifest)
    out += _ethics_section(manifest) if twitter else _generic_licence_section()
    out += _loading_section(name, datasets)
    return "\n".join(out).rstrip("\n") + "\n"


def _summary(manifest: Mapping[str, Any], total: int, twitter: bool) -> list[str]:
    inputs = manifest["inputs"]
    if not twitter:
        return [
            f"{total:,} text pairs built by corpusforge {manifest['corpusforge_version']} from "
            f"{len(inputs)} input files. Columns follow sentence-transformers' convention: "
            "`anchor` and `positive`."
        ]
    langs = ", ".join(manifest["config"].get("langs", []))
    return [
        f"{total:,} pairs of weakly similar tweets ({langs}), mined from the conversation "
        f"graph of {len(inputs)} Archive Team Twitter stream archive(s) by corpusforge "
        f"{manifest['corpusforge_version']}, following *Exploiting Twitter as Source of Large "
        "Corpora of Weakly Similar Pairs for Semantic Sentence Embeddings* (Di Giovanni & "
        "Brambilla, 2021): each root tweet gives at most one pair per dataset, the child used "
        "is chosen by a seeded hash of the tweet ids, and identical `(anchor, positive)` texts "
        "are kept once. Columns follow sentence-transformers' convention: `anchor` and "
        "`positive`. Tweets of the held-out ranking benchmarks are kept out of every "
        "training pair, by id and by cleaned text.",
    ]


def _yaml_name(name: str) -> str:
    """A dataset's name in the card's YAML header: as it is when plain, else quoted (a name
    from a hostile file name, a manifest written by hand)."""
    return (
        name
        if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", name)
        else json.dumps(name, ensure_ascii=False)
    )


def _contents(manifest: Mapping[str, Any], datasets: Mapping[str, Any], twitter: bool) -> list[str]:
    out = ["## Contents", ""]
    rows = []
    for ds_name, ds in datasets.items():
        what = _TWITTER_DATASETS.get(ds_name, "") if twitter else ""
        folder = os.path.dirname(ds["files"][0]) if ds.get("files") else f"pairs/{ds_name}"
        rows.append(
            [f"`{ds_name}`", _n(ds["rows"]), _n(ds.get("candidates")), f"`{folder}/`", what]
        )
    out += _table(["dataset", "pairs", "candidates", "files", "what"], rows, "lrrll")
    out += [
        "",
        "Every file, with its rows and sha256, is listed in `manifest.json`; "
        "`corpusforge validate` checks a copy against it.",
        "",
    ]
    benchmarks = manifest.get("benchmarks") or {}
    if benchmarks:
        scores = (manifest.get("reference_scores") or {}).get("benchmarks", {})
        out += ["### Held-out ranking benchmarks", ""]
        rows = []
        for b, info in benchmarks.items():
            ref = scores.get(b, {})
            ndcg = ref.get("ndcg")
            rows.append(
                [
                    f"`{b}`",
                    _n(info["rows"]),
                    _n(info.get("requested")),
                    _n(info.get("eligible_queries")),
                    _n(info.get("shortfall")),
                    "–" if ndcg is None else f"{ndcg:.3f}",
                    _TWITTER_BENCHMARKS.get(b, ""),
                ]
            )
        out += _table(
            ["benchmark", "queries", "requested", "eligible", "shortfall", "TF-IDF nDCG", "query"],
            rows,
            "lrrrrrl",
        )
        config = manifest["config"].get("benchmarks", {})
        out += [
            "",
            f"Each query has {config.get('positives', '?')} positives and "
            f"{config.get('negatives', '?')} negatives (`benchmarks/*.parquet`, schema "
            "`benchmark.v1`); a shortfall is reported, never padded. TF-IDF nDCG is the "
            "lexical baseline's score, a floor for any model.",
            "",
        ]
    return out


def _funnel_section(funnel: Mapping[str, Any], plots: Mapping[str, str]) -> list[str]:
    out = ["## From lines read to pairs kept", ""]
    rows = []
    for s in funnel["stages"]:
        removed = ", ".join(f"{k} {v:,}" for k, v in s["removed"].items() if v)
        rows.append([s["label"], _n(s["count"]), removed])
    out += _table(["stage", "count", "removed on the way"], rows, "lrl")
    out += ["", f"![funnel]({plots['funnel']})", ""]
    if funnel["datasets"]:
        rows = []
        for ds_name, d in funnel["datasets"].items():
            dropped = ", ".join(f"{k} {v:,}" for k, v in d["dropped"].items())
            rows.append([f"`{ds_name}`", _n(d["candidates"]), _n(d["rows"]), dropped])
        out += _table(
            ["dataset", "candidate children", "pairs", "dropped, by reason"], rows, "lrrl"
        )
        out += [
            "",
            "Counts close exactly: candidates = pairs × children per pair (1, or 2 "
            "for two children of one tweet) + dropped; `manifest.json` `accounting` "
            "lists every identity.",
            "",
        ]
        if "children" in plots:
            out += [f"![candidate children per dataset]({plots['children']})", ""]
    return out


def _scores_section(stats: Mapping[str, Any], plots: Mapping[str, str]) -> list[str]:
    """The filter scores the pairs carry (bitext and ParaNMT): a table and a plot per
    dataset; nothing for a release without them."""
    scored = {n: ds["scores"] for n, ds in stats["datasets"].items() if ds.get("scores")}
    if not scored:
        return []
    out = ["## Filter scores", ""]
    out += [
        "Each pair carries the values its filters computed, after the training columns, "
        "to tune thresholds with:",
        "",
    ]
    rows = []
    for ds_name, scores in scored.items():
        for score, d in scores.items():
            cells = " / ".join(_n(d[k]) for k in ("min", "p5", "p50", "p95", "max"))
            rows.append([f"`{ds_name}`", f"`{score}`", f"{cells} (mean {_n(d['mean'])})"])
    out += _table(["dataset", "score", "min / p5 / p50 / p95 / max"], rows, "llr")
    out += [""]
    for ds_name in scored:
        if f"scores-{ds_name}" in plots:
            out += [f"![filter scores: {ds_name}]({plots[f'scores-{ds_name}']})", ""]
    return out


def _lengths_section(stats: Mapping[str, Any], plots: Mapping[str, str]) -> list[str]:
    out = ["## Text lengths and languages", ""]
    rows = []
    for ds_name, ds in stats["datasets"].items():
        for side, units in ds["lengths"].items():
            cells = []
            for unit in ("chars", "tokens"):
                d = units[unit]
                cells.append(
                    f"{_n(d['min'])} / {_n(d['p5'])} / {_n(d['p50'])} / {_n(d['p95'])} / "
                    f"{_n(d['max'])} (mean {_n(d['mean'])})"
                )
            rows.append([f"`{ds_name}`", side, *cells])
    out += _table(
        ["dataset", "side", "characters: min / p5 / p50 / p95 / max", "whitespace tokens"],
        rows,
        "llrr",
    )
    out += [""]
    for ds_name in stats["datasets"]:
        if f"lengths-{ds_name}" in plots:
            out += [f"![text lengths: {ds_name}]({plots[f'lengths-{ds_name}']})", ""]
    rows = []
    for ds_name, ds in stats["datasets"].items():
        n = max(ds["rows"], 1)
        mix = ", ".join(f"{k} {v:,} ({100 * v / n:.1f}%)" for k, v in ds["languages"].items())
        rows.append([f"`{ds_name}`", mix])
    out += [*_table(["dataset", "languages"], rows, "ll"), ""]
    return out


def _samples_section(samples: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    out = ["## Samples", "", "The pairs with the smallest hash of their ids, per dataset.", ""]
    for ds_name, rows in samples.items():
        out += [f"### `{ds_name}`", ""]
        if not rows:
            out += ["(no pairs)", ""]
            continue
        out += _table(
            ["anchor", "positive"],
            [[_cell(r["anchor"]), _cell(r["positive"])] for r in rows],
            "ll",
        )
        out += [""]
    return out


UNREADABLE_ROWS = 50
"""Unreadable archives and members listed by name in the card; the rest are counted."""


def _unreadable_section(unreadable: Sequence[Mapping[str, Any]]) -> list[str]:
    if not unreadable:
        return []
    out = ["## Unreadable archives and members", ""]
    out += [
        f"{len(unreadable):,} input archive(s) or member(s) could not be read at all and are "
        "missing from this release; each is a row of `dead_letter/` with its reason:",
        "",
    ]
    out += _table(
        ["archive", "member", "reason", "detail"],
        [
            [
                f"`{_cell(u['origin_archive'] or '')}`",
                f"`{_cell(u['origin_member'])}`" if u["origin_member"] else "(the archive)",
                f"`{u['reason']}`",
                _cell(u["detail"] or ""),
            ]
            for u in unreadable[:UNREADABLE_ROWS]
        ],
        "llll",
    )
    if len(unreadable) > UNREADABLE_ROWS:
        out += ["", f"… and {len(unreadable) - UNREADABLE_ROWS:,} more in `dead_letter/`."]
    return [*out, ""]


def _build_section(manifest: Mapping[str, Any]) -> list[str]:
    out = ["## How it was built", ""]
    out += [
        f"corpusforge {manifest['corpusforge_version']} ({manifest['kind']}), Beam runner "
        f"`{manifest.get('runner', '?')}`. Configuration, as recorded in "
        "`manifest.json`:",
        "",
    ]
    out += ["```json", json.dumps(manifest["config"], indent=2, sort_keys=True), "```", ""]
    out += ["Inputs:", ""]
    out += _table(
        ["input", "bytes", "sha256"],
        [[f"`{_cell(i['name'])}`", _n(i["bytes"]), f"`{i['sha256']}`"] for i in manifest["inputs"]],
        "lrl",
    )
    out += ["", "Software:", ""]
    out += _table(["package", "version"], sorted(manifest["software"].items()), "ll")
    out += [
        "",
        "Schemas: "
        + ", ".join(f"`{v}`" for v in sorted(manifest["schemas"].values()))
        + " (`schemas/` in the corpusforge repository).",
        "",
    ]
    return out


def _ethics_section(manifest: Mapping[str, Any]) -> list[str]:
    from corpusforge.text.clean import PROFILES

    counts = manifest["counts"]
    clean = manifest["config"].get("clean", "paper")
    profile = PROFILES.get(clean)
    mode = {"remove": "removed", "token": "replaced by a placeholder token", "keep": "kept"}
    if profile is not None:
        cleaning = (
            f"Texts were cleaned with the `{clean}` profile: URLs "
            f"{mode.get(profile.urls, profile.urls)}, @mentions "
            f"{mode.get(profile.mentions, profile.mentions)}"
            + (", lowercased" if profile.lowercase else "")
            + "."
        )
    else:
        cleaning = f"Texts were cleaned with the `{clean}` profile."
    deleted = counts.get("dropped", {}).get("tweet_deleted", 0)
    return [
        "## Licence and ethics",
        "",
        "- **Source.** The texts are tweets: Twitter (now X) content, written by their "
        "authors and collected from Twitter's public sample stream by Archive Team "
        '(archive.org, "twitterstream" collection). This release grants no licence to '
        "them; their use is subject to the terms that apply to Twitter content and to the "
        "law where you are. The corpusforge code is Apache-2.0.",
        f"- **Deletions honoured.** Every tweet named by a delete notice anywhere in the "
        f"input archives ({counts.get('delete_notices', 0):,} notices) is removed before "
        f"pairing: {deleted:,} tweets in this build. Deletions made after the archives were "
        "captured are not known to it; rebuild with later archives to honour them.",
        f"- **Cleaning.** {cleaning} The default profile `paper` removes both.",
        "- **No user ids.** `pairs/` and `benchmarks/` hold cleaned texts, tweet ids, the "
        "dataset and the language: no user ids, screen names or profiles. Tweet ids can be "
        "looked up, and texts can still name people or hold personal or offensive content. "
        "The build caches `tweets/` (raw texts, with mentions and URLs) and `dead_letter/` "
        "(excerpts of unreadable raw lines, which may include user fields) are not meant to "
        "be published.",
        "- **Bias.** A sample stream over the archives' dates, languages as Twitter's `lang` "
        "field gives them; pairs follow who quotes and replies to whom, so popular "
        "accounts and topics are over-represented even with one pair per root.",
        "",
    ]


def _generic_licence_section() -> list[str]:
    return [
        "## Licence and ethics",
        "",
        "The texts keep the licences of their sources (the inputs above); this release "
        "grants none of its own. The corpusforge code is Apache-2.0.",
        "",
    ]


def _loading_section(name: str, datasets: Mapping[str, Any]) -> list[str]:
    train = f"{name}/{training_glob(datasets)}"
    first = next((d for d in datasets if d != "all"), "all")
    first_glob = f"{name}/{pair_globs(datasets)[first]}" if first in datasets else train
    return [
        "## How to load it",
        "",
        f"Paths are relative to the folder that holds `{name}/`.",
        "",
        "With 🤗 `datasets`:",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'pairs = load_dataset("parquet", data_files={{"train": "{train}"}})["train"]',
        "```",
        "",
        "With polars:",
        "",
        "```python",
        "import polars as pl",
        "",
        f'pairs = pl.scan_parquet("{first_glob}").select("anchor", "positive").collect()',
        "```",
        "",
        "From object storage: a release published to `s3://BUCKET/PATH` or `gs://BUCKET/PATH` "
        "keeps each version whole, in this layout, under `PATH/versions/<version>/`, and "
        "`PATH/_current.json` names the current one. `corpusforge versions URI --current` "
        f"prints the current version's training pairs (`URI/versions/<version>/"
        f"{training_glob(datasets)}`, `--json` for each dataset), a glob that polars, DuckDB "
        "and `datasets` read straight from the bucket given its endpoint and credentials "
        "(polars' and `datasets`' `storage_options`, DuckDB's `CREATE SECRET`; corpusforge's "
        "`docs/builds.md` shows each).",
        "",
        "Training with sentence-transformers and MultipleNegativesRankingLoss (in-batch "
        "negatives over `(anchor, positive)` pairs, as in the paper):",
        "",
        "```python",
        "from datasets import load_dataset",
        "from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer",
        "from sentence_transformers.losses import MultipleNegativesRankingLoss",
        "",
        f'train = load_dataset("parquet", data_files={{"train": "{train}"}})["train"]',
        'train = train.select_columns(["anchor", "positive"])',
        'model = SentenceTransformer("microsoft/mpnet-base")',
        "loss = MultipleNegativesRankingLoss(model)",
        "SentenceTransformerTrainer(model=model, train_dataset=train, loss=loss).train()",
        "```",
    ]
