"""glibc's allocator, tuned for a fit and trimmed after the raw data passes."""

import ctypes
import ctypes.util
import os

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


def tune_malloc(during_fit):
    """glibc's mmap and trim thresholds for a fit (``during_fit``), or back to the
    process's own (the trim threshold from MALLOC_TRIM_THRESHOLD_ if set)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        if during_fit:
            libc.mallopt(_M_MMAP_THRESHOLD, _FIT_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, _FIT_THRESHOLD)
        else:
            trim = os.environ.get("MALLOC_TRIM_THRESHOLD_", "")
            libc.mallopt(_M_TRIM_THRESHOLD,
                         int(trim) if trim.isdigit() else _DEFAULT_TRIM_THRESHOLD)
            libc.mallopt(_M_MMAP_THRESHOLD, _DEFAULT_MMAP_THRESHOLD)
            libc.malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to tune
        pass


def release_free_memory():
    """Give the memory freed by a pass over the raw data back to the OS (glibc's
    ``malloc_trim``): reading and binning leave many MB of freed buffers in the
    allocator's arenas, which would otherwise count in the process's RSS for the rest
    of the fit (measured: 700 -> 510 MB on a 4M-row out-of-core fit)."""
    try:
        ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc
        pass
