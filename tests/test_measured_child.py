"""The fault tests' memory bounds read a child's own peak (tests/faults/conftest.py): a parent that
once held a lot must not lend it its peak. With ru_maxrss it does (Linux keeps the parent's high
water mark across fork/vfork and exec), which failed eleven fault tests in a full run whose pytest
process had grown to 1.4 GB; VmHWM is the child's own."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.faults.conftest import PRINT_OWN_PEAK

# A parent of 400 MB (touched, so resident) runs two children that do nothing: one prints its
# VmHWM the way the fault tests do, one its ru_maxrss.
PARENT = f"""
import subprocess, sys
held = bytearray(400 * 1024 * 1024)
for i in range(0, len(held), 4096):
    held[i] = 1
own = {PRINT_OWN_PEAK!r}
rusage = 'import resource; print("peak_rss_kb=%d" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)'
for code in (own, rusage):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    print(int(out.strip().splitlines()[-1].split("=")[1]) // 1024)
"""


@pytest.mark.slow
def test_a_child_peak_is_its_own_not_its_parents() -> None:
    done = subprocess.run([sys.executable, "-c", PARENT], capture_output=True, text=True, check=True, timeout=60)
    own_mb, rusage_mb = (int(line) for line in done.stdout.split())
    assert rusage_mb >= 400, f"ru_maxrss no longer inherits the parent's peak ({rusage_mb} MB): the trap is gone"
    assert own_mb < 100, f"the child's own peak reads {own_mb} MB"
