"""Tests of corpusforge.eval; ``write_benchmark`` writes small benchmark files for them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from corpusforge.schemas import BENCHMARK, arrow_schema


def write_benchmark(path: Path, rows: Sequence[tuple[str, Sequence[str], Sequence[int]]]) -> Path:
    """Write ``(query, candidates, labels)`` rows with the real ``benchmark.v1`` schema.

    Ids are made up; any other column the schema has is filled with row numbers (integers),
    query texts (strings) or per-candidate row numbers (lists), so that the files keep
    following the schema as it grows.
    """
    schema = arrow_schema(BENCHMARK)
    known: dict[str, list[Any]] = {
        "query": [q for q, _, _ in rows],
        "candidates": [list(c) for _, c, _ in rows],
        "labels": [list(y) for _, _, y in rows],
        "query_id": list(range(len(rows))),
        "candidate_ids": [
            [1000 * i + j for j in range(len(c))] for i, (_, c, _) in enumerate(rows)
        ],
    }
    columns = {}
    for field in schema:
        if field.name in known:
            columns[field.name] = known[field.name]
        elif pa.types.is_list(field.type):
            columns[field.name] = [[i] * len(c) for i, (_, c, _) in enumerate(rows)]
        elif pa.types.is_string(field.type):
            columns[field.name] = known["query"]
        else:
            columns[field.name] = list(range(len(rows)))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path)
    return path
