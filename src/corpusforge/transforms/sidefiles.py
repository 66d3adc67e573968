"""Beam steps that read a build's Parquet files and write its JSON side files.

``read_parquet`` gives the rows of a list of files (none: an empty collection);
``WriteJsonPerKeyFn`` writes one JSON document per key, such as a folder's ``_files.json``
and ``_counts.json``, atomically (:func:`corpusforge.release.io.write_json`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import apache_beam as beam
from apache_beam.io.parquetio import ReadAllFromParquet

from corpusforge.release.io import join, write_json


class WriteJsonPerKeyFn(beam.DoFn):
    """(folder, items) -> folder/<name>, with items turned into a JSON document."""

    def __init__(self, name: str, to_doc: Callable[[Iterable[Any]], Any]) -> None:
        self._name = name
        self._to_doc = to_doc

    def process(self, element: tuple[str, Iterable[Any]]) -> None:
        folder, items = element
        write_json(join(folder, self._name), self._to_doc(items))


def read_parquet(
    p: beam.Pipeline, label: str, files: list[str], columns: list[str] | None = None
) -> beam.PCollection:
    """Rows (dicts) of ``files``, or only ``columns`` of them; empty when there are none."""
    paths = p | f"{label}Files" >> beam.Create(files)
    if not files:
        return paths
    return paths | f"Read{label}" >> ReadAllFromParquet(columns=columns)
