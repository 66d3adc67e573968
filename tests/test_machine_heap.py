"""``keep_freed_blocks``: a process that frees a member's blocks and allocates the same again
reuses its heap's pages instead of faulting in fresh ones (corpusforge.local.machine)."""

from __future__ import annotations

import subprocess
import sys

import pytest

_FAULTS = """
import resource, sys
from corpusforge.local.machine import keep_freed_blocks
if sys.argv[1] == "keep":
    assert keep_freed_blocks(32 * 2**20, 64 * 2**20)
def member():  # a decoded member: sixteen blocks of a megabyte, every page written
    return [b"\\x01" * 2**20 for _ in range(16)]
held = member()
del held
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
held = member()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults_of_the_second_member(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_second_member_reuses_the_pages_of_the_first() -> None:
    pages = 16 * 2**20 // 4096
    assert _faults_of_the_second_member("default") > pages // 2  # mapped afresh, faulted in
    assert _faults_of_the_second_member("keep") < pages // 20
