"""Workers forked inside ``shared_at_fork`` inherit this process's objects frozen out of the
garbage collector's sight (corpusforge.local.workers), and this process gets them back."""

from __future__ import annotations

import gc

import pytest

from corpusforge.local.machine import process_context
from corpusforge.local.workers import shared_at_fork, worker_pool


def _frozen_here() -> int:
    return gc.get_freeze_count()


@pytest.mark.skipif(
    process_context().get_start_method() != "fork", reason="only a forked worker inherits"
)
def test_a_worker_forked_inside_inherits_the_objects_frozen() -> None:
    held = [[n] for n in range(1000)]  # lists: objects the collector tracks
    with shared_at_fork(), worker_pool("a test worker", 1) as pool:
        assert gc.get_freeze_count() > len(held)
        in_worker = pool.result(pool.submit(_frozen_here))
    assert in_worker > len(held)
    assert gc.get_freeze_count() == 0  # back under this process's collector


def test_the_objects_come_back_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError), shared_at_fork():
        assert gc.get_freeze_count() > 0
        raise RuntimeError("a failed fork")
    assert gc.get_freeze_count() == 0
