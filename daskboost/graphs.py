"""The passes over the raw data as task graphs, shared by both runtimes.

Sketching, binning and approx re-binning read the raw partitions, so they are graph
tasks on top of the input collection's own graph (dask's optimiser decides how the
parquet lake is read), run by the active scheduler; their small results are reduced in
the fixed order of ``reduction``.

Tasks are dask's ``Task`` objects whose inputs are explicit ``TaskRef``s: a partition's
key is a reference whether or not the graph defines it (a persisted collection's keys
are held by the cluster), and no argument is ever taken for a key, or a key for a value.
"""

try:  # public since dask 2025
    from dask.task_spec import DataNode, Task, TaskRef
except ImportError:  # dask 2024.12 (the oldest we support) has them under this name
    from dask._task_spec import DataNode, Task, TaskRef

from .reduction import reduction_steps, root


class StatesLost(RuntimeError):
    """Partition states were lost with a worker; the runtime can rebuild them."""


def ref(key):
    """A task argument standing for the value of ``key`` (None stays None)."""
    return None if key is None else TaskRef(key)


def task(key, func, *args):
    """The task ``key``: ``func(*args)``, a ``ref`` among ``args`` replaced by its value."""
    return Task(key, func, *args)


def value(key, obj):
    """The graph entry ``key`` holding ``obj`` as it is (in-memory input blocks)."""
    return DataNode(key, obj)


def per_partition_graph(data, name, make_task, indices=None):
    """The input's graph plus one task per partition ``i``: ``make_task(i)`` is
    ``(func, *args)``, its partition inputs as ``ref``s (``raw_inputs``)."""
    graph = dict(data.graph)
    keys = []
    for i in range(data.n_partitions) if indices is None else indices:
        keys.append((name, i))
        graph[keys[-1]] = task(keys[-1], *make_task(i))
    return graph, keys


def raw_inputs(data, i):
    """References to partition ``i``'s X, y and weight blocks (None when absent)."""
    return (ref(data.x_keys[i]), None if data.y_keys is None else ref(data.y_keys[i]),
            None if data.w_keys is None else ref(data.w_keys[i]))


def margin_input(data, i):
    """A reference to partition ``i``'s base-margin block, None without base margins."""
    return None if data.m_keys is None else ref(data.m_keys[i])


def qid_input(data, i):
    """A reference to partition ``i``'s query ids block, None without query ids."""
    return None if data.q_keys is None else ref(data.q_keys[i])


def add_tree_reduction(graph, keys, combine, name, *args):
    """Add the fixed pairwise reduction of ``keys`` (``reduction``) to ``graph`` as
    tasks ``combine(a, b, *args)``; return the key of the total."""
    key_of = {(0, i): key for i, key in enumerate(keys)}
    for parent, left, right in reduction_steps(len(keys)):
        if right is None:
            key_of[parent] = key_of[left]
        else:
            key_of[parent] = (f"{name}-reduce-{left[0]}", parent[1])
            graph[key_of[parent]] = task(key_of[parent], combine, ref(key_of[left]),
                                         ref(key_of[right]), *args)
    return key_of[root(len(keys))]
