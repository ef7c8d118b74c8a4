"""Partition states living in a worker process, for ``distributed`` runs.

On a cluster, each worker keeps the training states of the partitions it binned in a
process-wide registry (keyed by fit, collection and partition index).  Each worker
also holds one ``StateHolder`` actor per fit: the client calls it once per pass
(``run``), directly, without the scheduler in the loop, and it runs the pass over the
worker's partitions with as many threads as the worker has.  A pass returns only
partial sums: the nodes of the fixed pairwise reduction tree (see
``runtime.reduce_nodes``) that the worker's partitions complete, so the client finishes
the same sums, in the same order, as the in-process scheduler: same model, byte for
byte.

If a worker dies, its states die with it; ``partition_index`` says which partitions a
worker still holds, and the client rebuilds the lost ones from the raw data (see
``cluster.py``).
"""

import ctypes
import ctypes.util
import threading
from concurrent.futures import ThreadPoolExecutor

from .runtime import reduce_nodes

_lock = threading.Lock()
_fits = {}   # fit_id -> {(collection, index): state}
_pools = {}  # fit_id -> ThreadPoolExecutor


# glibc's mallopt(M_MMAP_THRESHOLD): dask's nanny starts workers with
# MALLOC_TRIM_THRESHOLD_ set, which pins glibc's mmap threshold at 128 KiB, so every
# histogram and position array of a level is a fresh mmap whose pages fault in on first
# touch: the histogram kernel measured 1.55x slower in a worker than in a plain process
# (5.9 vs 3.8 ms per 125k rows).  While a fit runs, workers serve allocations up to
# 64 MiB from the heap (the trim threshold still returns freed memory at its top);
# ``release`` puts glibc's default back.
_M_MMAP_THRESHOLD = -3
_FIT_MMAP_THRESHOLD = 64 * 2 ** 20
_DEFAULT_MMAP_THRESHOLD = 128 * 2 ** 10


def _set_mmap_threshold(nbytes):
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(_M_MMAP_THRESHOLD, nbytes)
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to tune
        pass


class MissingStateError(RuntimeError):
    """A pass needed a partition state that this worker does not hold (it was lost)."""


def register(fit_id, collection, index, state):
    """Keep ``state`` as partition ``index`` of ``collection`` in this process."""
    with _lock:
        if not _fits:
            _set_mmap_threshold(_FIT_MMAP_THRESHOLD)
        _fits.setdefault(fit_id, {})[(collection, index)] = state


def lookup(fit_id, collection, index):
    try:
        return _fits[fit_id][(collection, index)]
    except KeyError:
        raise MissingStateError(
            f"partition {index} of {collection!r} is not held by this worker "
            f"(it was lost with another worker)") from None


def partition_index(fit_id):
    """{collection: sorted partition indices} held by this process."""
    out = {}
    for collection, index in list(_fits.get(fit_id, {})):
        out.setdefault(collection, []).append(index)
    return {c: sorted(v) for c, v in out.items()}


def release(fit_id):
    """Forget the fit's states and stop its thread pool (and close its block store)."""
    from .blockstore import close_store
    with _lock:
        _fits.pop(fit_id, None)
        pool = _pools.pop(fit_id, None)
        if not _fits:
            _set_mmap_threshold(_DEFAULT_MMAP_THRESHOLD)
    if pool is not None:
        pool.shutdown()
    close_store(fit_id)


def _pool(fit_id):
    with _lock:
        if fit_id not in _pools:
            try:
                from distributed import get_worker
                threads = get_worker().state.nthreads
            except (ImportError, ValueError):
                threads = 1
            _pools[fit_id] = (None if threads == 1 else
                              ThreadPoolExecutor(threads, thread_name_prefix="daskboost"))
        return _pools[fit_id]


def run_pass(fit_id, collection, indices, n_partitions, func, arg, combine):
    """``func(state, arg) -> (new_state, result)`` on the given local partitions.

    The new states replace the old ones; returns the reduction-tree nodes
    {(level, j): partial sum} that these partitions complete.
    """
    states = [lookup(fit_id, collection, i) for i in indices]  # fail before any change
    pool = _pool(fit_id)
    if pool is None:  # one thread: run here, in the actor's thread (no hand-offs)
        outputs = [func(state, arg) for state in states]
    else:
        outputs = [f.result() for f in [pool.submit(func, state, arg) for state in states]]
    nodes = {}
    for i, (new_state, result) in zip(indices, outputs):
        register(fit_id, collection, i, new_state)
        nodes[(0, i)] = result
    return reduce_nodes(nodes, n_partitions, combine)


class StateHolder:
    """Actor giving the client direct access to one worker's states of one fit."""

    def __init__(self, fit_id):
        self.fit_id = fit_id

    def run(self, collection, indices, n_partitions, shared):
        """``run_pass``; ``shared`` = pickled (func, arg, combine), the same bytes for
        every worker (pickled once by the client)."""
        from distributed.protocol.pickle import loads
        func, arg, combine = loads(shared)
        return run_pass(self.fit_id, collection, indices, n_partitions, func, arg, combine)

    def partition_index(self):
        return partition_index(self.fit_id)

    def release(self):
        release(self.fit_id)
