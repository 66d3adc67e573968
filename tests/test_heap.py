"""A Beam worker's freed large buffers go back to the system (corpusforge.heap, issue 37)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# In a fresh process: free one 16 MiB block (glibc then serves blocks up to 16 MiB from its
# arenas), allocate 200 blocks of 1 MiB and free all but the last; print how much of the
# 200 MiB the process still holds.
_HELD_AFTER_FREE = textwrap.dedent(
    """
    import sys
    from corpusforge import heap
    if sys.argv[1] == "bound":
        assert heap.bound_worker_heap()
    def rss_mib():
        with open("/proc/self/status") as f:
            line = next(line for line in f if line.startswith("VmRSS"))
        return int(line.split()[1]) >> 10
    big = bytearray(16 << 20)
    del big
    before = rss_mib()
    blocks = [bytearray(1 << 20) for _ in range(200)]
    del blocks[:-1]
    print(rss_mib() - before)
    """
)


def _held_mib(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _HELD_AFTER_FREE, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap (Linux)")
def test_freed_megabyte_blocks_are_given_back_once_bound() -> None:
    assert _held_mib("default") >= 150  # glibc keeps them: what the workers met
    assert _held_mib("bound") <= 20


def test_bound_worker_heap_is_applied_once_and_answers_the_same() -> None:
    from corpusforge import heap

    first = heap.bound_worker_heap()
    assert heap.bound_worker_heap() is first
    assert first is sys.platform.startswith("linux")
