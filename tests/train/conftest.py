"""Fixtures of the training tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def torch_one_thread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Torch on one thread for the test (tiny models run fastest on one; many threads contend
    on a shared machine), with the Hugging Face Hub offline: nothing is downloaded."""
    import torch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
