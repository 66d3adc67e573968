"""The README stays a short user guide; the documents it points to exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
MAX_README_BYTES = 8_500
DOCUMENTS = [
    README,
    REPO / "ARCHITECTURE.md",
    REPO / "docs" / "builds.md",
    REPO / "benchmarks" / "RESULTS.md",
    REPO / "deploy" / "README.md",
]


def test_readme_is_a_short_guide() -> None:
    size = len(README.read_bytes())
    assert size < MAX_README_BYTES, (
        f"README.md is {size:,} bytes (limit {MAX_README_BYTES:,}): move measurements to "
        "benchmarks/RESULTS.md, details to docs/builds.md, internals to ARCHITECTURE.md"
    )


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    assert (REPO / "scripts" / "demo.sh").is_file()
    assert (REPO / "scripts" / "test.sh").is_file()


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_to_files(document: Path) -> None:
    links = re.findall(r"\]\(([^)#\s]+)\)", document.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    missing = [link for link in local if not (document.parent / link).exists()]
    assert missing == [], f"{document.name} links to missing files: {missing}"
