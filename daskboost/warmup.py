"""A fresh process's start, at ``import daskboost``: numba started in the background and
glibc's dynamic malloc thresholds raised (``memory.raise_dynamic_thresholds``), so that a
first fit does not pay for either.

The first call of any numba function in a process, even one loaded from numba's cache,
first builds numba's CPU target (its typing and lowering registries; with scipy
installed, numba imports ``scipy.linalg`` there to look for BLAS, which
``_import_arraymath_without_scipy_linalg`` avoids): ~0.3 s, which a fresh process's
first fit spent inside its first kernel.  ``start()`` does that work in a daemon thread
right after import, while the caller reads or prepares its data; a fit that starts
earlier simply waits on numba's own lock for the rest of it: ``start()`` returns only
once the thread holds that lock, so a fit's first kernel cannot build the target
first (with the ``scipy.linalg`` import) by winning the race to it.

A fork while the thread runs could copy a held lock (the import lock, numba's compiler
lock) into the child, so the process waits for the warm-up to end before any fork
(``os.register_at_fork``).  ``DASKBOOST_NO_WARMUP=1`` turns both off.
"""

import importlib.util
import os
import sys
import threading

import numba
import numpy as np

try:
    from numba.core.compiler_lock import global_compiler_lock
except ImportError:  # (numba's internals moved: warm up without holding it)
    import contextlib
    global_compiler_lock = contextlib.nullcontext()

from .memory import raise_dynamic_thresholds

_thread = None


@numba.njit(nogil=True, cache=True)
def _first_kernel(values):
    # any cached kernel: loading it builds numba's CPU target
    return values.sum()


def _import_arraymath_without_scipy_linalg():
    """Import ``numba.np.arraymath`` (part of numba's CPU target) without the import of
    ``scipy.linalg`` that it does to learn whether BLAS is there.

    At its import that module calls ``numba.np.linalg.ensure_blas`` once, which imports
    ``scipy.linalg.cython_blas`` and with it all of ``scipy.linalg`` (0.1-0.2 s here;
    daskboost compiles no BLAS call).  For that one call, ``ensure_blas`` is replaced
    by a check that scipy is installed, what the import would have found.  The real
    check, scipy's BLAS width included, still runs whenever numba compiles a function
    that calls BLAS.  Nothing is done if the module is already imported, or if numba's
    internals are not as expected."""
    if "numba.np.arraymath" in sys.modules:
        return
    try:
        import numba.np.linalg as linalg
        ensure_blas = linalg.ensure_blas
    except (ImportError, AttributeError):
        return

    def scipy_installed():
        if importlib.util.find_spec("scipy") is None:
            raise ImportError("scipy is not installed")

    linalg.ensure_blas = scipy_installed
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        linalg.ensure_blas = ensure_blas


def _warm(holding_the_compiler_lock):
    try:
        # under numba's compiler lock, as a first kernel call imports numba's modules:
        # the same order of that lock and the modules' import locks as a fit's thread
        # starting its first kernel
        with global_compiler_lock:
            holding_the_compiler_lock.set()
            _import_arraymath_without_scipy_linalg()
        _first_kernel(np.zeros(1))
    except Exception:  # noqa: BLE001  (a warm-up must never break the import or a fit)
        pass
    finally:
        holding_the_compiler_lock.set()


def _wait_before_fork():
    thread = _thread
    if thread is not None and thread.is_alive() and thread is not threading.current_thread():
        thread.join()


def start():
    """Raise the malloc thresholds and start the warm-up thread, once per process,
    unless ``DASKBOOST_NO_WARMUP`` is set."""
    global _thread
    if _thread is not None or os.environ.get("DASKBOOST_NO_WARMUP", "") not in ("", "0"):
        return
    raise_dynamic_thresholds()
    holding_the_compiler_lock = threading.Event()
    _thread = threading.Thread(target=_warm, args=(holding_the_compiler_lock,),
                               name="daskboost-numba-warmup", daemon=True)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_wait_before_fork)
    _thread.start()
    # ~0.1 ms, the thread's start; bounded, as another thread may be compiling with
    # numba's lock held: then the import goes on and the race is that thread's to win
    holding_the_compiler_lock.wait(timeout=1.0)
