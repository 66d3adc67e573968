"""Shared test fixtures: where the real samples are, and whether they must be there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"


@pytest.fixture(scope="session")
def realdata() -> Path:
    """``../shared/realdata``; skips with a reason when absent, fails in CI."""
    if not REALDATA.is_dir():
        if os.environ.get("CORPUSFORGE_REQUIRE_REALDATA") == "1":
            pytest.fail(f"real samples required but {REALDATA} is missing")
        pytest.skip(f"real samples not found at {REALDATA}")
    return REALDATA
