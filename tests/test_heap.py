"""The cpu backend sets glibc's malloc thresholds (core/_heap.py): a step's freed arrays, small or large, stay with
the process instead of being faulted back in on the next step; a malloc setting the user made is left alone."""
import ast
import os
import subprocess
import sys

import pytest

_ROUNDS = """
import resource, sys
import numpy as np
import mindtorch_v2  # noqa: F401  (registers the cpu backend)
size, count = int(sys.argv[1]), int(sys.argv[2])
faults = []
for _ in range(6):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    arrays = [np.ones(size, np.float32) for _ in range(count)]
    del arrays
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(faults)
"""

glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                           reason="glibc's mallopt")


def _faults(size, count, **env):
    out = subprocess.run([sys.executable, "-c", _ROUNDS, str(size), str(count)], env={**os.environ, **env},
                         capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out)


@glibc
def test_arrays_freed_and_allocated_again_reuse_the_heap_without_faulting_pages_in():
    faults = _faults(25_000, 160)  # 16 MB in 100 KB arrays
    assert faults[0] > 1000 and max(faults[1:]) < 100  # (the first round grows the heap; later ones reuse it)


@glibc
def test_large_arrays_come_from_the_heap_not_a_fresh_mapping_each_time():
    # two 8 MB arrays a round: with glibc's static 128 KiB mmap threshold (a user's setting) each is mapped afresh
    # and faulted in every round (fewer faults where the kernel backs them with 2 MiB pages)
    assert max(_faults(2_000_000, 2)[1:]) < 5
    assert min(_faults(2_000_000, 2, MALLOC_MMAP_THRESHOLD_="131072")[1:]) >= 2


@glibc
def test_a_malloc_setting_the_user_made_is_kept(monkeypatch):
    faults = _faults(25_000, 160, MALLOC_TOP_PAD_="131072")  # (glibc's static defaults: trimmed each round)
    assert min(faults[1:]) > 1000
    from mindtorch_v2.core import _heap
    for name, value in [("MALLOC_TOP_PAD_", "131072"), ("MALLOC_MMAP_THRESHOLD_", "131072"),
                        ("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=131072")]:
        with monkeypatch.context() as m:
            m.setenv(name, value)
            assert _heap.tune_heap() is False
