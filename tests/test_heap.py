"""The cpu backend pads glibc's heap (core/_heap.py): a step's freed arrays stay with the process instead of being
faulted back in on the next step; a MALLOC_TOP_PAD_ the user set is left alone."""
import ast
import os
import subprocess
import sys

import pytest

_ROUNDS = """
import resource
import numpy as np
import mindtorch_v2  # noqa: F401  (registers the cpu backend)
faults = []
for _ in range(6):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    arrays = [np.ones(25_000, np.float32) for _ in range(160)]  # 16 MB in 100 KB arrays: on the heap
    del arrays
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(faults)
"""

glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                           reason="glibc's mallopt")


def _faults(**env):
    out = subprocess.run([sys.executable, "-c", _ROUNDS], env={**os.environ, **env}, capture_output=True, text=True,
                         check=True).stdout
    return ast.literal_eval(out)


@glibc
def test_arrays_freed_and_allocated_again_reuse_the_heap_without_faulting_pages_in():
    faults = _faults()
    assert faults[0] > 1000 and max(faults[1:]) < 100  # (the first round grows the heap; later ones reuse it)


@glibc
def test_a_top_pad_the_user_set_is_kept(monkeypatch):
    faults = _faults(MALLOC_TOP_PAD_="131072")  # (glibc's default: the heap trimmed after each round)
    assert min(faults[1:]) > 1000
    from mindtorch_v2.core import _heap
    monkeypatch.setenv("MALLOC_TOP_PAD_", "131072")
    assert _heap.pad_heap() is False
    monkeypatch.delenv("MALLOC_TOP_PAD_")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.top_pad=131072")
    assert _heap.pad_heap() is False
