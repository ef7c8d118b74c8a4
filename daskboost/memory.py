"""glibc's allocator: its dynamic thresholds raised once per process, tuned for a fit on
a worker, and trimmed after the raw data passes."""

import ctypes
import ctypes.util
import functools
import os
import threading

# glibc's mallopt: dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=64 KiB, which
# also pins glibc's mmap threshold at 128 KiB.  Then every histogram and position array
# of a level is a fresh mmap whose pages fault in on first touch (the histogram kernel
# measured 1.55x slower in a worker than in a plain process, 5.9 vs 3.8 ms per 125k
# rows), and whatever is freed at the top of the heap goes back to the OS at once, to
# be faulted in again by the next level: a 1M-row, 100-tree fit on two workers took
# 14.5 s, against 12.8 s with both thresholds at 64 MiB.  While a fit runs, a worker
# keeps both at 64 MiB; ``worker_states.release`` puts the worker's settings back and
# trims the heap.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_FIT_THRESHOLD = 64 * 2 ** 20
_DEFAULT_MMAP_THRESHOLD = 128 * 2 ** 10
_DEFAULT_TRIM_THRESHOLD = 128 * 2 ** 10


# glibc's dynamic thresholds: a request above the mmap threshold (128 KiB at first) is a
# fresh mmap, and free memory at the top of the heap above the trim threshold (128 KiB
# at first) goes back to the OS.  Freeing an mmapped block larger than the threshold
# raises both (mmap threshold = its size, trim = twice it; capped at 32 MiB), which most
# processes do early by chance (a temporary array while reading or making data).  One
# that had not paid page faults on every level: the level's histograms (0.1-4 MiB at 28
# features) mapped and unmapped, or the heap grown and trimmed, every pass (3,300 brk
# calls in a 20k-row fit against 260), and a 20,000-row fit took 1.0-1.4 s instead of
# 0.65-0.85 s.  ``raise_dynamic_thresholds`` frees one untouched block of 24 MiB, as
# such a process would: glibc's own rule, not a setting (mallopt would switch the
# dynamic rule off for good); up to 48 MiB of freed memory then stays for reuse.  With
# malloc tuned from the environment (MALLOC_TRIM_THRESHOLD_ and the like, as
# distributed's nanny gives its workers) glibc keeps its thresholds as set.
_PRIME_BYTES = 24 * 2 ** 20


@functools.lru_cache(maxsize=None)
def _libc():
    """The C library, loaded once: ``find_library`` runs ``ldconfig`` (2-5 ms a call),
    and it is asked for at import, at each worker fit's start and end and after each
    pass over the raw data."""
    return ctypes.CDLL(ctypes.util.find_library("c"))


def raise_dynamic_thresholds():
    """Free one 24 MiB block (never touched) so that glibc raises its dynamic mmap and
    trim thresholds (see above); returns False where there is no glibc."""
    try:
        libc = _libc()
        libc.malloc.restype = ctypes.c_void_p
        libc.free.argtypes = [ctypes.c_void_p]
        block = libc.malloc(_PRIME_BYTES)
        if block:
            libc.free(block)
        return bool(block) and hasattr(libc, "mallopt")
    except (OSError, AttributeError, TypeError):  # no C library to load
        return False


def tune_malloc(during_fit):
    """glibc's mmap and trim thresholds for a fit (``during_fit``), or back to the
    process's own (from MALLOC_TRIM_THRESHOLD_ / MALLOC_MMAP_THRESHOLD_ if set).
    Called through ``begin_fit``/``end_fit``, which count the fits of the process."""
    try:
        libc = _libc()
        if during_fit:
            libc.mallopt(_M_MMAP_THRESHOLD, _FIT_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, _FIT_THRESHOLD)
        else:
            trim = os.environ.get("MALLOC_TRIM_THRESHOLD_", "")
            mmap = os.environ.get("MALLOC_MMAP_THRESHOLD_", "")
            libc.mallopt(_M_TRIM_THRESHOLD,
                         int(trim) if trim.isdigit() else _DEFAULT_TRIM_THRESHOLD)
            libc.mallopt(_M_MMAP_THRESHOLD,
                         int(mmap) if mmap.isdigit() else _DEFAULT_MMAP_THRESHOLD)
            libc.malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to tune
        pass


# fits running in this process between begin_fit and end_fit (a worker runs several)
_fits_lock = threading.Lock()
_active_fits = 0

# glibc's variables that switch its dynamic thresholds off (see above)
_MALLOC_VARIABLES = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                     "MALLOC_MMAP_MAX_")


def malloc_tuned_by_environment():
    """Whether glibc's thresholds are fixed from the environment (a dask worker's are):
    then they stay at 128 KiB however large the blocks freed, unless a fit tunes them."""
    return any(os.environ.get(name) for name in _MALLOC_VARIABLES)


def begin_fit():
    """Count a fit in this process; the first one tunes malloc for fitting."""
    global _active_fits
    with _fits_lock:
        if _active_fits == 0:
            tune_malloc(during_fit=True)
        _active_fits += 1


def end_fit():
    """Count a fit's end; the last one puts the process's own settings back."""
    global _active_fits
    with _fits_lock:
        _active_fits -= 1
        if _active_fits == 0:
            tune_malloc(during_fit=False)


def release_free_memory():
    """Give the memory freed by a pass over the raw data back to the OS (glibc's
    ``malloc_trim``): reading and binning leave many MB of freed buffers in the
    allocator's arenas, which would otherwise count in the process's RSS for the rest
    of the fit (measured: 700 -> 510 MB on a 4M-row out-of-core fit)."""
    try:
        _libc().malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc
        pass
