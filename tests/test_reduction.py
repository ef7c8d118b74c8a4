"""The fixed pairwise reduction order (``daskboost.reduction``), without Dask.

Byte-identical models on every scheduler rest on one thing: whoever adds the partitions'
partial sums, the same sums are added in the same order. The values here are chosen so
that the order shows in the last bit (sums of numbers of wildly different magnitudes).
"""

import itertools
import operator

import numpy as np
import pytest

from daskboost.reduction import reduce_all, reduce_nodes, reduction_steps, root
from daskboost.graphs import Task, add_tree_reduction


def sensitive_values(n, seed=0):
    """``n`` float64 values whose sum depends on the order of the additions."""
    rng = np.random.default_rng(seed)
    return list(rng.normal(size=n) * 10.0 ** rng.integers(-8, 17, size=n))


def by_hand(values):
    """The documented order: 0+1, 2+3, ..., an odd last one carried up; then again."""
    level = list(values)
    while len(level) > 1:
        paired = [level[j] + level[j + 1] for j in range(0, len(level) - 1, 2)]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def contiguous_placements(n, n_workers):
    """Every way to give ``n`` partitions to ``n_workers`` workers in contiguous ranges."""
    for cuts in itertools.combinations(range(1, n), n_workers - 1):
        bounds = (0, *cuts, n)
        yield [list(range(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]


def test_values_are_order_sensitive():
    # otherwise the tests below could not fail
    values = sensitive_values(13)
    assert sum(values) != by_hand(values) or sum(values[::-1]) != by_hand(values)


@pytest.mark.parametrize("n", range(1, 23))
def test_reduce_all_is_the_documented_order(n):
    values = sensitive_values(n, seed=n)
    assert reduce_all(values, operator.add) == by_hand(values)


@pytest.mark.parametrize("n", range(1, 17))
def test_worker_side_completion_equals_the_in_process_sum_bit_for_bit(n):
    values = sensitive_values(n, seed=100 + n)
    expected = reduce_all(values, operator.add)
    for n_workers in range(1, min(n, 4) + 1):
        for placement in contiguous_placements(n, n_workers):
            # each worker completes what its own partitions allow ...
            partials = [reduce_nodes({(0, i): values[i] for i in indices}, n, operator.add)
                        for indices in placement]
            # ... then every worker adds its peers' partial sums into the same tree
            for mine in range(n_workers):
                nodes = dict(partials[mine])
                for peer, theirs in enumerate(partials):
                    if peer != mine:
                        nodes.update(theirs)
                completed = reduce_nodes(nodes, n, operator.add)
                assert list(completed) == [root(n)]
                assert completed[root(n)] == expected, (placement, mine)


def test_partial_nodes_are_the_subtrees_a_range_completes():
    # partitions 0..3 of 6: a whole subtree (the sum of 0-3) at level 2
    nodes = reduce_nodes({(0, i): float(i) for i in range(4)}, 6, operator.add)
    assert nodes == {(2, 0): 6.0}
    # partitions 4..5 of 6: their pair, carried up to the node beside it
    nodes = reduce_nodes({(0, 4): 4.0, (0, 5): 5.0}, 6, operator.add)
    assert nodes == {(2, 1): 9.0}


def test_steps_shape():
    assert reduction_steps(1) == [] and root(1) == (0, 0)
    assert reduction_steps(3) == [((1, 0), (0, 0), (0, 1)), ((1, 1), (0, 2), None),
                                  ((2, 0), (1, 0), (1, 1))]
    assert root(3) == (2, 0)


def _run_graph(graph, key):
    """A minimal evaluator of a task graph: dask ``Task``s (``graphs.task``), given the
    values of the keys they reference, and plain values."""
    node = graph[key]
    if isinstance(node, Task):
        return node({dependency: _run_graph(graph, dependency)
                     for dependency in node.dependencies})
    return node


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
def test_graph_reduction_follows_the_same_order(n):
    values = sensitive_values(n, seed=200 + n)
    graph = {("leaf", i): v for i, v in enumerate(values)}
    total_key = add_tree_reduction(graph, [("leaf", i) for i in range(n)], operator.add, "t")
    assert _run_graph(graph, total_key) == reduce_all(values, operator.add)


@pytest.mark.parametrize("n", [1, 3, 6, 9])
def test_thread_pool_reduction_follows_the_same_order(n):
    from daskboost.runtime import Runtime
    import dask.threaded
    values = sensitive_values(n, seed=300 + n)
    runtime = Runtime(dask.threaded.get, "test", None)
    try:
        states, total = runtime.map_reduce(lambda state, arg: (state, values[state]),
                                           list(range(n)), None, operator.add)
    finally:
        runtime.close()
    assert states == list(range(n))
    assert total == reduce_all(values, operator.add)
