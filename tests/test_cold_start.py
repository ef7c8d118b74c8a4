"""What a fresh process pays before its first fit: no needless imports, numba started in
the background at import (``daskboost.warmup``), and that thread safe to fork around.

Each test runs its code in a fresh interpreter (``python -c``), since ``sys.modules`` and
numba's start-up are per process."""

import json
import os
import subprocess
import sys

import pytest

FIT_ON_NUMPY = """
import numpy as np
from daskboost import DaskBoostRegressor
rng = np.random.default_rng(0)
X = rng.normal(size=(500, 4)).astype(np.float32)
model = DaskBoostRegressor(n_estimators=3, max_depth=3).fit(X, X[:, 0])
model.predict(X)
"""


def run_python(code, env=None, timeout=120):
    # glibc's own MALLOC_*_ variables are left out: distributed puts
    # MALLOC_TRIM_THRESHOLD_ into os.environ once a LocalCluster started in this process
    base = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**base, **(env or {})}, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_a_fit_on_numpy_imports_neither_dask_collections_nor_distributed():
    # dask.dataframe + dask.array (with scipy) and distributed cost ~0.5 s and ~0.4 s of a
    # fresh process's first fit when they were imported only to learn that X is not a
    # dask collection, that no Client is active and that this is not a worker
    code = FIT_ON_NUMPY + """
import json, sys
print(json.dumps(sorted(m for m in ("dask.dataframe", "dask.array", "distributed")
                        if m in sys.modules)))
"""
    assert json.loads(run_python(code)) == []


def test_a_fit_after_distributed_was_imported_still_finds_no_client():
    # with distributed imported (but no Client) the scheduler lookup runs and finds none
    code = "import distributed\n" + FIT_ON_NUMPY + "print(model.n_estimators)"
    assert run_python(code) == "3"


def test_import_starts_the_numba_warmup_thread_and_it_finishes():
    code = """
import json, threading, daskboost.warmup as warmup
thread = warmup._thread
alive_at_import = thread is not None and thread.name == "daskboost-numba-warmup"
thread.join(60)
print(json.dumps([alive_at_import, thread.is_alive(), thread.daemon]))
"""
    assert json.loads(run_python(code)) == [True, False, True]


def test_the_warmup_and_a_fit_do_not_import_scipy_linalg_and_numba_blas_still_works():
    # numba's CPU target imports scipy.linalg (0.1-0.2 s) only to see that BLAS is
    # there; the warm-up skips that import, and a fit needs nothing from it.  numba
    # still checks and loads BLAS when a function calling it is compiled.
    code = FIT_ON_NUMPY + """
import json, sys, numba, numpy as np
import daskboost.warmup as warmup
warmup._thread.join(60)
before = "scipy.linalg" in sys.modules
dot = numba.njit(lambda a, b: np.dot(a, b))
value = float(dot(np.ones(3), np.arange(3.0)))
print(json.dumps([before, value, "scipy.linalg" in sys.modules]))
"""
    assert json.loads(run_python(code)) == [False, 3.0, True]


def test_a_fit_started_while_the_warmup_is_slow_still_does_not_import_scipy_linalg():
    # the warm-up holds numba's compiler lock before start() returns, so a fit's first
    # kernel waits for it instead of building numba's target (and importing
    # scipy.linalg) first; here the warm-up is made slow to lose that race surely
    code = """
import os, sys, time, json
os.environ["DASKBOOST_NO_WARMUP"] = "1"
import daskboost.warmup as warmup
del os.environ["DASKBOOST_NO_WARMUP"]
slow = warmup._import_arraymath_without_scipy_linalg
def slowly():
    time.sleep(0.5)
    slow()
warmup._import_arraymath_without_scipy_linalg = slowly
warmup.start()
""" + FIT_ON_NUMPY + """
warmup._thread.join(60)
print(json.dumps("scipy.linalg" in sys.modules))
"""
    assert json.loads(run_python(code)) is False


def test_the_warmup_can_be_turned_off():
    code = "import daskboost.warmup as warmup; print(warmup._thread is None)"
    assert run_python(code, env={"DASKBOOST_NO_WARMUP": "1"}) == "True"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_right_after_import_gives_a_working_child():
    # the parent waits for the warm-up before forking (os.register_at_fork), so the
    # child inherits no lock the warm-up thread held (the import lock, numba's compiler
    # lock) and can run a fit
    code = """
import os, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)   # fork with threads: Python 3.12
import daskboost
pid = os.fork()
if pid == 0:
    import numpy as np
    X = np.arange(200, dtype=np.float32).reshape(100, 2)
    daskboost.DaskBoostRegressor(n_estimators=2, max_depth=2).fit(X, X[:, 0])
    os._exit(0)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    assert run_python(code, timeout=120) == "0"


MMAPPED_BLOCKS_AROUND_A_4_MIB_ARRAY = """
import ctypes, json, numpy as np
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
before = libc.mallinfo2().hblks
block = np.ones(4 * 2 ** 20, dtype=np.uint8)
during = libc.mallinfo2().hblks
print(json.dumps(during - before))
"""


def _glibc_with_mallinfo2():
    try:
        import ctypes
        return hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2")
    except OSError:
        return False


@pytest.mark.skipif(not _glibc_with_mallinfo2(), reason="needs glibc >= 2.33 (mallinfo2)")
@pytest.mark.parametrize("env,mapped", [
    ({}, 0),
    ({"DASKBOOST_NO_WARMUP": "1"}, 1),
    # malloc tuned from the environment (distributed's nanny gives its workers
    # MALLOC_TRIM_THRESHOLD_=65536) turns glibc's dynamic thresholds off: kept as set
    ({"MALLOC_TRIM_THRESHOLD_": "65536"}, 1),
])
def test_import_raises_the_malloc_mmap_threshold(env, mapped):
    # a fresh process maps a 4 MiB array with mmap (threshold 128 KiB); after
    # ``import daskboost`` raised the threshold to 24 MiB it comes from the heap: the
    # level loop's histograms then stop being mapped and unmapped every pass
    # (the warm-up thread is joined first: while it allocates, a contended main arena
    # can send the main thread's request to another arena, where it may be mapped)
    code = ("import daskboost, daskboost.warmup as warmup\n"
            "warmup._thread is None or warmup._thread.join(60)\n"
            + MMAPPED_BLOCKS_AROUND_A_4_MIB_ARRAY)
    assert json.loads(run_python(code, env=env)) == mapped
