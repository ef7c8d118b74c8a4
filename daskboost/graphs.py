"""The passes over the raw data as task graphs, shared by both runtimes.

Sketching, binning and approx re-binning read the raw partitions, so they are graph
tasks on top of the input collection's own graph (dask's optimiser decides how the
parquet lake is read), run by the active scheduler; their small results are reduced in
the fixed order of ``reduction``.
"""

from .reduction import reduction_steps, root


class StatesLost(RuntimeError):
    """Partition states were lost with a worker; the runtime can rebuild them."""


def per_partition_graph(data, name, make_task, indices=None):
    """The input's graph plus one task ``make_task(i)`` per partition ``i``."""
    graph = dict(data.graph)
    keys = []
    for i in range(data.n_partitions) if indices is None else indices:
        keys.append((name, i))
        graph[keys[-1]] = make_task(i)
    return graph, keys


def raw_inputs(data, i):
    """The keys of partition ``i``'s X, y and weight blocks (None when absent)."""
    return (data.x_keys[i], None if data.y_keys is None else data.y_keys[i],
            None if data.w_keys is None else data.w_keys[i])


def add_tree_reduction(graph, keys, combine, name, *args):
    """Add the fixed pairwise reduction of ``keys`` (``reduction``) to ``graph`` as
    tasks ``combine(a, b, *args)``; return the key of the total."""
    key_of = {(0, i): key for i, key in enumerate(keys)}
    for parent, left, right in reduction_steps(len(keys)):
        if right is None:
            key_of[parent] = key_of[left]
        else:
            key_of[parent] = (f"{name}-reduce-{left[0]}", parent[1])
            graph[key_of[parent]] = (combine, key_of[left], key_of[right], *args)
    return key_of[root(len(keys))]
