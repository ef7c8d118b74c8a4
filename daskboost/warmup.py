"""A fresh process's start, at ``import daskboost``: numba started in the background and
glibc's dynamic malloc thresholds raised (``memory.raise_dynamic_thresholds``), so that a
first fit does not pay for either.

The first call of any numba function in a process, even one loaded from numba's cache,
first builds numba's CPU target (its typing and lowering registries; with scipy
installed that imports ``scipy.linalg`` too): ~0.3 s, which a fresh process's first fit
spent inside its first kernel.  ``start()`` does that work in a daemon thread right after
import, while the caller reads or prepares its data; a fit that starts earlier simply
waits on numba's own lock for the rest of it.

A fork while the thread runs could copy a held lock (the import lock, numba's compiler
lock) into the child, so the process waits for the warm-up to end before any fork
(``os.register_at_fork``).  ``DASKBOOST_NO_WARMUP=1`` turns both off.
"""

import os
import threading

import numba
import numpy as np

from .memory import raise_dynamic_thresholds

_thread = None


@numba.njit(nogil=True, cache=True)
def _first_kernel(values):
    # any cached kernel: loading it builds numba's CPU target
    return values.sum()


def _warm():
    try:
        _first_kernel(np.zeros(1))
    except Exception:  # noqa: BLE001  (a warm-up must never break the import or a fit)
        pass


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
    _thread = threading.Thread(target=_warm, name="daskboost-numba-warmup", daemon=True)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_wait_before_fork)
    _thread.start()
