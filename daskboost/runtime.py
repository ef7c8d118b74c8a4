"""Running raw task graphs on whichever Dask scheduler is active.

Training submits one small raw graph per pass: one task per partition plus a pairwise
tree reduction of their small results.  The per-partition states the tasks return stay
where they are: on the threaded and synchronous schedulers they are plain in-process
objects (that is what ``persist`` means there); on ``distributed`` they are futures
whose data stays on the workers, and only the reduced result travels to the client.
The next pass's graph refers to them directly, so there is one code path for every
scheduler and no per-level graph-building machinery beyond a dict.

The reduction tree is fixed (pair 0+1, 2+3, ... then again), so sums are added in the
same order on every scheduler: same data and partitioning, same model, byte for byte.
"""

import itertools
import operator
import uuid

import dask
import dask.threaded
from dask.base import get_scheduler


def add_tree_reduction(graph, keys, combine, name, *args):
    """Add a pairwise reduction of ``keys`` to ``graph``; return the key of the result."""
    level = 0
    keys = list(keys)
    while len(keys) > 1:
        next_keys = []
        for j in range(0, len(keys) - 1, 2):
            key = (f"{name}-reduce-{level}", j // 2)
            graph[key] = (combine, keys[j], keys[j + 1], *args)
            next_keys.append(key)
        if len(keys) % 2:
            next_keys.append(keys[-1])
        keys = next_keys
        level += 1
    return keys[0]


class Runtime:
    """The active scheduler, and unique key names for the graphs of one fit."""

    def __init__(self):
        self._get = get_scheduler() or dask.threaded.get
        self.client = _distributed_client(self._get)
        self._prefix = f"daskboost-{uuid.uuid4().hex[:12]}"
        self._counter = itertools.count()

    def new_name(self, what):
        return f"{self._prefix}-{what}-{next(self._counter)}"

    def compute(self, graph, keys):
        """Run ``graph`` and bring the values of ``keys`` to the client."""
        if self.client is not None:
            return self.client.get(graph, keys, sync=True)
        return self._get(graph, keys)

    def persist(self, graph, keys):
        """Run ``graph``; return handles to the values of ``keys`` that stay where they are."""
        if self.client is not None:
            return self.client.get(graph, keys, sync=False)
        return self._get(graph, keys)

    def map_reduce(self, func, handles, arg, combine):
        """Run ``func(handle_i, arg) -> (new_state_i, result_i)`` on every partition.

        Returns the handles of the new states and the tree-reduced sum of the results.
        """
        name = self.new_name(func.__name__)
        graph = {}
        out_keys = []
        for i, handle in enumerate(handles):
            out_keys.append((f"{name}-out", i))
            graph[out_keys[-1]] = (func, handle, arg)
        if self.client is None:
            # In-process: the reduction reads the results straight out of the (state,
            # result) pairs; no per-partition getitem tasks.
            total = add_tree_reduction(graph, out_keys, _combine_results, name, combine)
            values = self._get(graph, out_keys + [total])
            return [pair[0] for pair in values[:-1]], _result_of(values[-1])
        # distributed: split the pairs on the workers so that states never travel
        state_keys = [(f"{name}-state", i) for i in range(len(out_keys))]
        result_keys = [(f"{name}-result", i) for i in range(len(out_keys))]
        for out, state, result in zip(out_keys, state_keys, result_keys):
            graph[state] = (operator.getitem, out, 0)
            graph[result] = (operator.getitem, out, 1)
        total = add_tree_reduction(graph, result_keys, combine, name)
        futures = self.client.get(graph, state_keys + [total], sync=False)
        return list(futures[:-1]), futures[-1].result()


def _result_of(value):
    return value[1] if isinstance(value, tuple) else value


def _combine_results(a, b, combine):
    return combine(_result_of(a), _result_of(b))


def _distributed_client(get):
    """The distributed Client whose ``get`` is the active scheduler, if any."""
    owner = getattr(get, "__self__", None)
    if owner is None:
        return None
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a dependency
        return None
    return owner if isinstance(owner, Client) else None
