"""Load the versioned schemas in ``schemas/``: the single source of truth for every file we write.

Arrow schemas live in ``schemas/<name>.v<version>.json`` as a list of typed, documented
fields; JSON Schemas (the manifest) in ``schemas/<name>.v<version>.schema.json``. The code
never infers a Parquet schema from data: it asks this module.

    >>> arrow_schema(PAIR).names
    ['anchor', 'positive', 'anchor_id', 'positive_id', 'root_id', 'dataset', 'lang']
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa


@dataclass(frozen=True)
class SchemaRef:
    """A schema by name and version, e.g. ``SchemaRef("pair", 1)`` for ``pair.v1``."""

    name: str
    version: int

    def __str__(self) -> str:
        return f"{self.name}.v{self.version}"


TWEET = SchemaRef("tweet", 1)
DELETE = SchemaRef("delete", 1)
DEAD_LETTER = SchemaRef("dead_letter", 1)
PAIR = SchemaRef("pair", 1)
BENCHMARK = SchemaRef("benchmark", 1)
BITEXT = SchemaRef("bitext", 2)
PARAPHRASE = SchemaRef("paraphrase", 2)
REJECTED = SchemaRef("rejected", 1)
MANIFEST = SchemaRef("manifest", 1)

_SCALARS: dict[str, pa.DataType] = {
    "string": pa.string(),
    "int8": pa.int8(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "timestamp[ms, UTC]": pa.timestamp("ms", tz="UTC"),
}


def schemas_dir() -> Path:
    """The folder holding the schema files: packaged copy when installed, else the repo's."""
    packaged = resources.files("corpusforge") / "_schemas"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "schemas"


def _arrow_type(spec: str) -> pa.DataType:
    if spec.startswith("list<") and spec.endswith(">"):
        return pa.list_(_arrow_type(spec[5:-1]))
    try:
        return _SCALARS[spec]
    except KeyError:
        raise ValueError(f"unknown field type {spec!r} in a schema file") from None


@functools.cache
def load_document(ref: SchemaRef, suffix: str = ".json") -> dict[str, Any]:
    """Parse ``schemas/<name>.v<version><suffix>``."""
    path = schemas_dir() / f"{ref}{suffix}"
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


@functools.cache
def arrow_schema(ref: SchemaRef) -> pa.Schema:
    """The explicit Arrow schema for ``ref``, with its name and version in the metadata."""
    doc = load_document(ref)
    if doc["name"] != ref.name or doc["version"] != ref.version:
        raise ValueError(f"schema file for {ref} declares {doc['name']}.v{doc['version']}")
    fields = [
        pa.field(
            f["name"],
            _arrow_type(f["type"]),
            nullable=f["nullable"],
            metadata={"description": f["description"]},
        )
        for f in doc["fields"]
    ]
    return pa.schema(fields, metadata={"corpusforge.schema": str(ref)})


def json_schema(ref: SchemaRef) -> dict[str, Any]:
    """The JSON Schema document ``schemas/<name>.v<version>.schema.json``."""
    return load_document(ref, ".schema.json")


def validate_json(ref: SchemaRef, document: Any) -> None:
    """Raise ``jsonschema.ValidationError`` (the most relevant error) when ``document`` does
    not follow ``ref``."""
    import jsonschema

    error = jsonschema.exceptions.best_match(json_validator(ref).iter_errors(document))
    if error is not None:
        raise error


@functools.cache
def json_validator(ref: SchemaRef) -> Any:
    """A ``jsonschema`` validator of ``ref``'s JSON Schema. The schema itself is not checked
    against its meta-schema here (a fifth of a small build's validation time); the tests
    check every schema in ``schemas/``."""
    import jsonschema

    schema = json_schema(ref)
    return jsonschema.validators.validator_for(schema)(schema)
