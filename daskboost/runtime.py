"""Running the passes over the partitions in process (threaded or synchronous scheduler),
and ``make_runtime``, which picks this runtime or the cluster's (``cluster.py``).

The passes over the raw data (sketch, binning, approx re-binning) are task graphs
(``graphs.py``) run by the active scheduler.  The binning pass returns the
per-partition states, which stay where they are: here, plain objects in a list (on
``distributed``, see ``cluster.py``: in the workers' memory).

Each tree level is one more pass: every partition's step plus a pairwise reduction of
their small results (``map_reduce``).  In process the pass goes straight to threads
(``thread_passes``: contiguous groups of partitions, one per thread, the calling thread
running one of them), not through ``dask.threaded.get``: a level is a few tasks of a
millisecond or less, and a ``get`` call costs about 1.8 ms in graph handling.

Every reduction follows the one fixed pairwise order of ``reduction`` (pair 0+1, 2+3,
... then again), so sums are added in the same order on every scheduler: same data and
partitioning, same model, byte for byte.
"""

import contextlib
import functools
import itertools
import sys
from concurrent.futures import ThreadPoolExecutor

import dask
import dask.local
import dask.threaded
from dask.base import get_scheduler

from . import memory, native_threads, raw_cache
from .local_threads import local_thread_count
from .blockstore import budget_bytes, close_store, single_block
from .data import is_dask_collection
from .graphs import add_tree_reduction, per_partition_graph, raw_inputs
from .level_loop import drive, run_sync
from .levels_in_place import InPlaceLevels, grow_in_place
from .partition import grows_in_place as partition_grows_in_place
from .thread_passes import kernel_threads, pass_on_native_threads, run_pass


def make_runtime(fit_id, store_config, in_memory=False):
    """The runtime of the active scheduler: in-process, or a ``distributed`` cluster.

    ``in_memory``: the data is numpy/pandas.  Such a fit inside a task on a cluster worker
    (dask-ml's searches fit one estimator per task) runs in process, on the threaded
    scheduler: its data is already here, and sending its passes to the cluster's workers
    would deadlock once every worker thread runs such a fit, waiting for the others.
    """
    get = _active_scheduler() or dask.threaded.get
    client = _distributed_client(get)
    if client is not None and in_memory and _in_worker_task():
        return Runtime(dask.threaded.get, fit_id, store_config)
    if client is not None:
        # imported only now: the cluster runtime imports distributed's internals
        # (``compat``), which an in-process fit never needs
        from .cluster import ClusterRuntime
        return ClusterRuntime(client, fit_id, store_config)
    return Runtime(get, fit_id, store_config)


class Runtime:
    """In-process runtime (threaded or synchronous scheduler): states are plain objects
    in a list, and the per-level passes go to a thread pool."""

    def __init__(self, get, fit_id, store_config):
        self._get = get
        self.fit_id = fit_id
        self.store_config = store_config
        self._counter = itertools.count()
        self._pool, self._threads = None, 1
        self._raw_cap = None  # bytes of raw partitions kept between the passes (keep_raw)
        # malloc fixed by the environment (a fit inside a dask worker's task, as dask-ml's
        # searches run them): glibc's thresholds stay at 128 KiB and every level's
        # arrays are fresh mmaps; tuned while the fit runs, as a worker's cluster fit is
        # (a 100k-row fit in a worker task: 3.3-3.8 s untuned, 1.45-1.64 s tuned)
        self._tunes_malloc = memory.malloc_tuned_by_environment()
        if self._tunes_malloc:
            memory.begin_fit()
        native_threads.available()  # (numba's threading layer before any kernel loads)
        if get is not dask.local.get_sync:
            # the calling thread works too (``thread_passes``): the pool has one less
            self._threads = local_thread_count()
            if self._threads > 1:
                self._pool = ThreadPoolExecutor(self._threads - 1,
                                                thread_name_prefix="daskboost")

    def close(self):
        """Stop the thread pool, remove the fit's spilled blocks and what is left of its
        kept raw partitions, put malloc back."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        close_store(self.fit_id)
        raw_cache.drop(self.fit_id)
        if self._tunes_malloc:
            self._tunes_malloc = False
            memory.end_fit()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def state_processes(self):
        """How many processes the training states are spread over: this one."""
        return 1

    def grows_in_place(self, states):
        """Whether the level loop may grow its trees' levels in one pass
        (``level_loop.grow_levels``' ``in_place``, run by ``levels_in_place.grow_in_place``
        on all ``states`` at once): the partitions are held in this process with the loop
        (the pass then works on the loop's own objects), each in a form the compiled
        loop takes (``partition.grows_in_place``), and one is run after the other with
        each kernel on native threads (``thread_passes.pass_on_native_threads``).  Not
        where the level passes would run them on the pool's runners: the native
        threads, spinning after the compiled loop's parallel regions, then take the
        cores from the runners of the round's first pass (flights in two partitions:
        7% slower, ``benchmarks/RESULTS.md``)."""
        return ((len(states) == 1 or pass_on_native_threads(states, self._threads))
                and all(partition_grows_in_place(state) for state in states)
                # (one compiled loop takes one dtype of codes: 1 or 2 bytes a code)
                and len({single_block(state.codes).dtype for state in states}) == 1)

    def new_name(self, what):
        return f"daskboost-{self.fit_id}-{what}-{next(self._counter)}"

    def compute(self, graph, keys):
        """Run ``graph`` and bring the values of ``keys`` to the client."""
        return self._get(graph, keys)

    def keep_raw(self, data, i):
        """What the scan task of ``data``'s partition ``i`` is given to keep its raw
        blocks for the bin pass (``raw_cache``): ``(fit id, key, cap)``, or None for
        input held in memory already."""
        if data.in_memory:
            return None
        if self._raw_cap is None:
            self._raw_cap = budget_bytes(self.store_config) // 4
        return (self.fit_id, data.x_keys[i], self._raw_cap)

    def create_states(self, collection, data, func, args, last_args):
        """``func(x, y, w, i, *args, *last_args[i])`` -> the state of partition ``i``
        (its raw blocks as the scan pass kept them, if it did: ``keep_raw``)."""
        def make_task(i):
            if raw_cache.holds(self.fit_id, data.x_keys[i]):
                return (raw_cache.call_with_kept, self.fit_id, data.x_keys[i], func, i,
                        *args, *last_args[i])
            return (func, *raw_inputs(data, i), i, *args, *last_args[i])

        graph, keys = per_partition_graph(data, self.new_name(func.__name__), make_task)
        states = self._get(graph, keys)
        memory.release_free_memory()
        return states

    def source_pass(self, data, states, func, args, combine=None):
        """``func(x, w, state_i, *args)`` on each raw partition with its state.

        With ``combine``: returns the reduced results; without: the results are the
        new states.
        """
        name = self.new_name(func.__name__)
        graph, keys = per_partition_graph(
            data, name, lambda i: (func, raw_inputs(data, i)[0], raw_inputs(data, i)[2],
                                   states[i], *args))
        if combine is None:
            return self._get(graph, keys)
        return self._get(graph, [add_tree_reduction(graph, keys, combine, name)])[0]

    def map_reduce(self, func, states, arg, combine, combine_into=None):
        """Run ``func(state_i, arg) -> (new_state_i, result_i)`` on every partition.

        Returns the new states and the tree-reduced sum of the results.
        ``combine_into(a, b)``, if given, is ``combine`` reusing ``a``'s memory.
        """
        return run_pass(func, states, arg, combine_into or combine, self._pool,
                        self._threads)

    def run_loop(self, states, loop, func, combine, combine_into=None):
        """Run the pass loop ``loop()`` (see ``level_loop.drive``), each pass being
        ``map_reduce(func, states, arg, ...)``'s total; returns the new states and the
        loop's result.

        Here the loop runs in the caller; a cluster runs it on every worker at once
        (see ``cluster.py``), so it must be deterministic.
        """
        current = [states]

        async def reduce_pass(arg):
            if isinstance(arg, InPlaceLevels):
                return grow_in_place(current[0], arg)
            current[0], total = self.map_reduce(func, current[0], arg, combine, combine_into)
            return total

        with kernel_threads(self._pool, self._threads, states):
            result = run_sync(drive(loop(), reduce_pass))
        return current[0], result


def leaves_worker_pool(fit):
    """Decorate a fit (``fit(*inputs)``) so that, called from a task on a ``distributed``
    worker with dask collections among its inputs (an eval set's included), the task's
    thread leaves the worker's thread pool while the fit runs (``distributed.secede``,
    then ``rejoin``).  Such a fit runs on the cluster (``make_runtime``): its reading and
    binning tasks need the workers' threads, this one's included; on a worker of one
    thread, the task would otherwise wait forever for tasks only it could run.  Anywhere
    else the fit runs as it is."""
    @functools.wraps(fit)
    def wrapper(*args, **kwargs):
        with _off_worker_pool(args + tuple(kwargs.values())):
            return fit(*args, **kwargs)
    return wrapper


@contextlib.contextmanager
def _off_worker_pool(inputs):
    seceded = (_cluster_collections(inputs) and _distributed_client(_active_scheduler())
               is not None and _in_worker_task())
    if seceded:
        from distributed import secede
        secede()
    try:
        yield
    finally:
        if seceded:
            from distributed import rejoin
            rejoin()


def _cluster_collections(inputs):
    """Whether ``inputs`` (or the pairs and lists among them: eval sets) hold a dask
    collection, when distributed is imported (else no worker can be running this)."""
    return "distributed" in sys.modules and _holds_dask_collection(inputs, depth=3)


def _holds_dask_collection(value, depth):
    """Whether ``value`` is a dask collection, or (``depth`` lists or tuples deep) holds one."""
    if isinstance(value, (list, tuple)) and depth:
        return any(_holds_dask_collection(v, depth - 1) for v in value)
    return is_dask_collection(value)


def _active_scheduler():
    """dask's ``get_scheduler()``, without importing distributed when nothing did.

    ``get_scheduler`` imports distributed to look for a default Client (~0.4 s in a
    fresh process); a Client exists only once distributed is imported, and a scheduler
    chosen in dask's config is looked up either way.
    """
    if "distributed" not in sys.modules and dask.config.get("scheduler", None) is None:
        return None
    return get_scheduler()


def _in_worker_task():
    """True in a task running on a ``distributed`` worker (only asked with a Client's
    scheduler active, so distributed is imported already)."""
    from distributed import get_worker
    try:
        get_worker()
    except ValueError:
        return False
    return True


def _distributed_client(get):
    """The distributed Client whose ``get`` is the active scheduler, if any."""
    owner = getattr(get, "__self__", None)
    if owner is None:
        return None
    from distributed import Client  # only with a scheduler bound to an object: maybe one
    return owner if isinstance(owner, Client) else None
