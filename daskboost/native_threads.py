"""Kernels on native threads: numba's ``parallel=True`` where its threading layer is
safe for a library to use, and a context saying how many threads a kernel may take.

A Python thread pool hands work over in tens of microseconds (a future, a lock, a
wake-up under the GIL); a level pass at 20,000 rows is ~0.4 ms of kernels, so the
pool's hand-offs ate what a second thread saves (``benchmarks/RESULTS.md``). A
parallel region of numba's OpenMP layer starts in ~5 us. The kernels that take native
threads (``histogram``'s two-phase pass, ``splitting``'s search over nodes) add every
sum in the same order as their serial versions: the models are the same bytes with or
without native threads, on any number of them.

Only the ``omp`` and ``tbb`` layers are used: numba's own ``workqueue`` layer aborts
the process when two threads start parallel regions at once (concurrent fits do) and
started a region in ~190 us here. Numba picks its layer once per process; when it is
``workqueue`` (no OpenMP or TBB runtime on the machine) or the environment says
``DASKBOOST_NATIVE_THREADS=0``, every kernel runs its serial version. GNU OpenMP does
not survive ``fork``: a forked child runs the serial versions too.
"""

import contextlib
import contextvars
import os
import threading

import numba
import numpy as np

from .kernel_cache import native_threads_switched_off

SAFE_LAYERS = ("omp", "tbb")

_layer = None            # the threading layer numba chose (known after the probe)
_forked = False          # this process is a fork of one that may have used OpenMP
_switched_off = native_threads_switched_off()  # (read once)
_probe_lock = threading.Lock()

# how many native threads a kernel called from here may use (1: its serial version)
_THREADS = contextvars.ContextVar("daskboost_native_threads", default=1)


@numba.njit(parallel=True, nogil=True, cache=True)
def _probe_kernel(out):
    for i in numba.prange(out.shape[0]):
        out[i] = i


def _after_fork_in_child():
    global _forked
    _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def available():
    """Whether kernels may run on native threads in this process (the first call
    starts numba's threading layer, a parallel region of one element, to learn which
    layer it is).

    Called at a fit's start (``runtime.Runtime``, a worker's ``worker_states``), before
    any of its kernels is loaded: a kernel that links parallel ones, loaded from
    numba's cache into a process whose threading layer has not started, crashes when
    called, even on its serial path (numba issue #8578; seen here as 1-thread cluster
    workers dying with signal 11 in the split search). Compiled in the process, the
    layer starts as it compiles."""
    global _layer
    if _forked or _switched_off:
        return False
    if _layer is None:
        with _probe_lock:
            if _layer is None:
                _probe_kernel(np.zeros(1, dtype=np.int64))
                _layer = numba.threading_layer()
    return _layer in SAFE_LAYERS


def threads():
    """How many native threads a kernel called now may use (1: run the serial one)."""
    return _THREADS.get()


@contextlib.contextmanager
def use(n_threads):
    """Within the block, kernels called from this thread may use ``n_threads`` native
    threads (at most numba's pool; 1 where ``available`` says no)."""
    n = max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
    if n > 1 and not available():
        n = 1
    if n == _THREADS.get():  # (a pass within its loop's block: numba's count is set)
        yield n
        return
    token = _THREADS.set(n)
    previous = numba.get_num_threads() if n > 1 else None
    if n > 1:
        numba.set_num_threads(n)  # numba's count is per calling thread
    try:
        yield n
    finally:
        if previous is not None:
            numba.set_num_threads(previous)
        _THREADS.reset(token)
