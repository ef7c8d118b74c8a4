"""One pass over in-process partitions on a few threads, and the threads the level loop's
kernels may use between passes.

A pass is ``func(state, arg) -> (new_state, result)`` on every partition and the sum of
the results in the fixed order of ``reduction``.  One pool task per partition and per
reduction step, with the calling thread waiting, measured slow for small partitions
(20,000 rows, one partition: 1.27 s a fit against 1.04 s with the pass on the calling
thread): each hand-off to a pool thread costs tens of microseconds or more.  So here
(``run_partitions``) the calling thread is one of the runners; each runner takes the
next partition, runs it and adds its result into the reduction tree as far as it goes.
Whoever adds which pair, the same sums are added in the same order: the total is the
same, byte for byte.

Where numba has a thread-safe threading layer (``native_threads``), a pass over
partitions that are few or small runs them one after the other on the calling thread
instead, each kernel spread over native threads, which start in microseconds; the
pool's runners keep the passes over many large partitions, where one thread a
partition measured faster.

Between passes the same threads serve the level loop's own kernels (split finding over
a level's nodes: ``map_ranges``, or one kernel call on native threads); whoever runs a
loop says which threads they may use with ``kernel_threads``."""

import contextlib
import contextvars
import functools
import itertools
import threading
import time
from concurrent.futures import wait

from . import native_threads
from .reduction import reduction_steps


def contiguous_groups(n_items, n_groups):
    """``n_groups`` (at most ``n_items``) ranges covering ``range(n_items)`` in order,
    lengths differing by at most one (longer ones first)."""
    n_groups = max(1, min(n_groups, n_items))
    size, extra = divmod(n_items, n_groups)
    groups, start = [], 0
    for g in range(n_groups):
        stop = start + size + (g < extra)
        groups.append(range(start, stop))
        start = stop
    return groups


def run_spread(pool, func, ranges):
    """``[func(r) for r in ranges]``: the first on the caller's thread, the others
    submitted to ``pool``; a submitted one that no pool thread has started yet when the
    caller gets to it is taken back and run by the caller.  So a caller waiting here
    never waits on a queue: with threads of the pool busy elsewhere (several workers of
    one process share a fit's pool) it does the work itself, and it cannot deadlock."""
    futures = [pool.submit(func, r) for r in ranges[1:]]
    results = []
    try:
        results.append(func(ranges[0]))
        for r, future in zip(ranges[1:], futures):
            results.append(func(r) if future.cancel() else _result(future))
    finally:
        for future in futures:  # on an error: none left running on the states
            future.cancel()
        # (a cancelled future counts as done only once a pool thread has dequeued it,
        # which a busy pool may never do: wait on the others alone)
        wait([future for future in futures if not future.cancelled()])
    return results


# how long a caller waiting on a pool thread's part polls before it sleeps (see _result)
SPIN_SECONDS = 0.002


def _result(future):
    """``future.result()``, polling for up to ``SPIN_SECONDS`` first, each poll giving
    up the GIL and the CPU (``sleep(0)``): the part a caller waits on at the end of a
    pass is usually done within a few hundred microseconds, and a thread put to sleep
    on a lock is woken later (flights: a pass's end 15-20 us sooner polling)."""
    deadline = time.perf_counter() + SPIN_SECONDS
    while not future.done() and time.perf_counter() < deadline:
        time.sleep(0)
    return future.result()


def run_partitions(func, states, arg, combine, pool=None, n_threads=1, indices=None,
                   n_partitions=None):
    """The pass on ``states`` (partitions ``indices`` of ``n_partitions``; default: all
    of them): returns the new states and the reduction-tree nodes they complete.

    ``n_threads`` runners (the caller and ``n_threads - 1`` tasks on ``pool``; None:
    the caller alone) take the next partition not yet taken, run it, and add its
    result into the tree as far as it goes: a runner holding a node whose sibling is
    done takes the sibling and computes the parent (outside the lock).  Which runner
    adds which pair does not change what is added to what, in which order.  ``combine``
    may reuse its first argument's memory: every partial sum is used exactly once.
    Small partitions (``pass_on_native_threads``) instead go one after the other on
    the caller, each kernel on ``n_threads`` native threads: the same sums again.
    """
    indices = list(range(len(states))) if indices is None else list(indices)
    n_partitions = len(states) if n_partitions is None else n_partitions
    tree = _ReductionTree(n_partitions, combine)
    new_states = [None] * len(states)
    read_next = _reader_ahead(func, states, arg)
    on_native = pass_on_native_threads(states, n_threads)
    if len(states) == 1 or pool is None or n_threads <= 1 or on_native:
        # one partition after the other on this thread, each kernel on ``n_threads``
        # native threads where they are available (``native_threads``)
        with native_threads.use(n_threads if on_native else 1):
            for j, state in enumerate(states):
                read_next(j + 1)
                new_states[j], result = func(state, arg)
                tree.add((0, indices[j]), result)
        return new_states, tree.nodes
    taken = itertools.count()
    lock = threading.Lock()
    failed = []

    def runner(_=None):
        while not failed:
            with lock:  # (no runner takes a partition while its reads are being started)
                j = next(taken)
                read_next(j + n_threads - 1)
            if j >= len(states):
                return
            try:
                new_states[j], result = func(states[j], arg)
            except BaseException:
                failed.append(j)  # the other runners stop after their partition
                raise
            tree.add((0, indices[j]), result)

    with kernel_threads(None, 1):
        run_spread(pool, runner, [None] * n_threads)
    return new_states, tree.nodes


def _reader_ahead(func, states, arg):
    """``read_next(j)``: start the reads of partitions up to ``j`` not started yet
    (``func.read_ahead(state, arg)``, if ``func`` has one: the first blocks a pass reads
    from disk), so that a runner taking a partition finds them read.  Called as
    partition ``j - n_threads + 1`` is taken: partitions are taken in order, so each
    runner's next one is being read while it works on its current one.  (Measured:
    a 20M-row fit under a 256MB budget waited 10 s in all on the first block of each
    partition it took, ``benchmarks/RESULTS.md``.)"""
    read_ahead = getattr(func, "read_ahead", None)
    started = [0]

    def read_next(j):
        if read_ahead is None:
            return
        while started[0] <= min(j, len(states) - 1):
            read_ahead(states[started[0]], arg)
            started[0] += 1
    return read_next


# rows a partition holds on average above which a pass runs partitions on the pool's
# threads (one thread each) rather than one after the other with native threads in
# each kernel (alternating fits in one process; see benchmarks/RESULTS.md): the pool
# measured faster at 1M rows in 8 partitions (~9%) and on flights' four 65k-row
# partitions (~15%: its 4,000-category feature makes one thread's features the
# costly ones); native threads faster on diamonds' four 11k-row partitions (~15%)
NATIVE_PASS_MAX_ROWS = 32768


def pass_on_native_threads(states, n_threads):
    """Whether a pass runs its partitions one after the other on the calling thread,
    each kernel on ``n_threads`` native threads (``native_threads``): where they are
    available, and the partitions are no more than the threads or small on average
    (states that do not say their ``n_rows`` go to the pool).  (As many partitions as
    threads: on 2 threads, flights' lake in two 131k-row partitions and 1M numeric rows
    in two fitted 10-20% faster this way, their trees grown in place with the rows in
    shares, than on the pool's runners; benchmarks/RESULTS.md.)"""
    if n_threads <= 1 or not native_threads.available():
        return False
    if len(states) <= n_threads:
        return True
    rows = [getattr(state, "n_rows", None) for state in states]
    return None not in rows and sum(rows) <= NATIVE_PASS_MAX_ROWS * len(rows)


class _ReductionTree:
    """The partial sums of one pass, combined as soon as both operands are there (the
    pairs and order of ``reduction``); safe to ``add`` to from several threads."""

    def __init__(self, n_partitions, combine):
        self._combine = combine
        self._parent = _parents(n_partitions)
        self._lock = threading.Lock()
        self.nodes = {}  # the nodes done and not yet combined into their parents

    def add(self, node, value):
        while node in self._parent:
            parent, left, right = self._parent[node]
            if right is not None:
                sibling = right if node == left else left
                with self._lock:
                    if sibling not in self.nodes:
                        self.nodes[node] = value
                        return
                    other = self.nodes.pop(sibling)
                value = (self._combine(value, other) if node == left
                         else self._combine(other, value))
            node = parent
        with self._lock:
            self.nodes[node] = value


@functools.lru_cache(maxsize=64)
def _parents(n_partitions):
    """{node: (parent, left, right or None)} of the reduction over ``n_partitions``
    (the same every pass of a fit: made once, read only)."""
    parents = {}
    for parent, left, right in reduction_steps(n_partitions):
        parents[left] = (parent, left, right)
        if right is not None:
            parents[right] = (parent, left, right)
    return parents


def run_pass(func, states, arg, combine, pool=None, n_threads=1):
    """``run_partitions`` on every partition: the new states and the total."""
    new_states, nodes = run_partitions(func, states, arg, combine, pool, n_threads)
    (total,) = nodes.values()
    return new_states, total


# (pool, n_threads) the level loop's kernels may use; (None, 1): the caller's thread only
_KERNEL_THREADS = contextvars.ContextVar("daskboost_kernel_threads", default=(None, 1))


@contextlib.contextmanager
def kernel_threads(pool, n_threads, states=None):
    """Within the block, ``map_ranges`` runs on the caller's thread and ``pool``
    (``n_threads`` in all), or, for a loop over ``states`` whose passes run on native
    threads (``pass_on_native_threads``), its kernels spread their items over as many
    native threads.  (Split searches on native threads between passes on the pool's
    runners measured slower: 3.5 s against 2.4 s for the flights fit.)  A context
    variable: each loop (a thread, or a coroutine on a worker's event loop) sees its
    own."""
    token = _KERNEL_THREADS.set((pool, n_threads))
    native = states is not None and pass_on_native_threads(states, n_threads)
    try:
        with native_threads.use(n_threads if native else 1):
            yield
    finally:
        _KERNEL_THREADS.reset(token)


def thread_ranges(n_items, min_items_per_thread=1):
    """Contiguous ranges covering ``range(n_items)``: one per thread of
    ``kernel_threads``, each of at least ``min_items_per_thread`` items (one range
    without threads)."""
    if native_threads.threads() > 1:  # the kernel spreads the items over native threads
        return [range(n_items)]
    pool, n_threads = _KERNEL_THREADS.get()
    n_groups = min(n_threads, n_items // max(1, min_items_per_thread)) if pool else 1
    return contiguous_groups(n_items, n_groups)


def map_ranges(func, ranges):
    """``[func(r) for r in ranges]`` on the threads of ``kernel_threads`` (the first
    range on the caller's thread).  For nogil kernels on independent items."""
    if len(ranges) == 1:
        return [func(ranges[0])]
    pool, _ = _KERNEL_THREADS.get()
    return run_spread(pool, func, ranges)

