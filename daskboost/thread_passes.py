"""One pass over in-process partitions on a few threads: contiguous groups of partitions,
one group per thread, each group's partial sums reduced by the thread that made them.

A pass is ``func(state, arg) -> (new_state, result)`` on every partition and the sum of
the results in the fixed order of ``reduction``.  One task per partition and per
reduction step (the obvious way) measured slow for small partitions: each hand-off to a
pool thread costs tens of microseconds, and the data a partition's kernel reads and the
histogram it writes move between the cores' caches.  So here:

- the partitions are cut into ``n_groups`` contiguous runs of near-equal length;
- each run is one task: its partitions one after the other, then ``reduce_nodes`` over
  the run's own results (the reduction-tree nodes that lie wholly inside the run);
- the caller's thread runs the first group itself while the pool runs the others,
  and completes the tree from all groups' nodes.

Whoever runs which group, ``reduce_nodes`` adds the same sums in the same order, so the
total is the same as with any other grouping, byte for byte (a cluster worker reduces
its own contiguous range of partitions the same way, ``worker_states``).

Between passes the same threads serve the level loop's own kernels (split finding over
a level's nodes, ``map_ranges``): whoever runs a loop says which threads it may use with
``kernel_threads``.
"""

import contextlib
import contextvars
from concurrent.futures import wait

from .reduction import reduce_nodes


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
            results.append(func(r) if future.cancel() else future.result())
    finally:
        for future in futures:  # on an error: none left running on the states
            future.cancel()
        wait(futures)
    return results


def run_group(func, states, arg, indices, n_partitions, combine):
    """``func`` on the partitions ``indices`` (their ``states``, in order); returns the
    new states and the reduction-tree nodes these partitions complete."""
    new_states, nodes = [], {}
    for i, state in zip(indices, states):
        new_state, result = func(state, arg)
        new_states.append(new_state)
        nodes[(0, i)] = result
    return new_states, reduce_nodes(nodes, n_partitions, combine)


def run_partitions(func, states, arg, combine, pool=None, n_threads=1, indices=None,
                   n_partitions=None):
    """The pass on ``states`` (partitions ``indices`` of ``n_partitions``; default: all
    of them): returns the new states and the reduction-tree nodes they complete.

    ``pool``: a thread pool with at least ``n_threads - 1`` idle threads (None:
    everything on the caller's thread).  A single group (fewer partitions than threads)
    may use the threads itself: its pass functions see them through ``kernel_threads``
    (the histogram kernels then split the features).  ``combine`` may reuse its first
    argument's memory: every partial sum is used exactly once.
    """
    indices = list(range(len(states))) if indices is None else list(indices)
    n_partitions = len(states) if n_partitions is None else n_partitions
    groups = contiguous_groups(len(states), n_threads if pool is not None else 1)

    def group(g):
        return run_group(func, states[g.start:g.stop], arg, indices[g.start:g.stop],
                         n_partitions, combine)

    if len(groups) == 1:  # fewer partitions than threads: the kernels may split features
        with kernel_threads(pool, n_threads):
            parts = [group(groups[0])]
    else:
        with kernel_threads(None, 1):
            parts = run_spread(pool, group, groups)
    new_states, nodes = [], {}
    for group_states, group_nodes in parts:
        new_states.extend(group_states)
        nodes.update(group_nodes)
    return new_states, nodes


def run_pass(func, states, arg, combine, pool=None, n_threads=1):
    """``run_partitions`` on every partition, reduced: the new states and the total."""
    new_states, nodes = run_partitions(func, states, arg, combine, pool, n_threads)
    (total,) = reduce_nodes(nodes, len(states), combine).values()
    return new_states, total


# (pool, n_threads) the level loop's kernels may use; (None, 1): the caller's thread only
_KERNEL_THREADS = contextvars.ContextVar("daskboost_kernel_threads", default=(None, 1))


@contextlib.contextmanager
def kernel_threads(pool, n_threads):
    """Within the block, ``map_ranges`` runs on the caller's thread and ``pool``
    (``n_threads`` in all).  A context variable: each loop (a thread, or a coroutine on
    a worker's event loop) sees its own."""
    token = _KERNEL_THREADS.set((pool, n_threads))
    try:
        yield
    finally:
        _KERNEL_THREADS.reset(token)


def thread_ranges(n_items, min_items_per_thread=1):
    """Contiguous ranges covering ``range(n_items)``: one per thread of
    ``kernel_threads``, each of at least ``min_items_per_thread`` items (one range
    without threads)."""
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
