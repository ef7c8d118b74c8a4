"""The fixed pairwise reduction order: the one definition every sum of partitions uses.

Floating-point addition is not associative, so "byte-identical models on every
scheduler" rests on adding the partitions' partial sums (histograms, sketches, metric
sums) in one order, whoever computes them. That order is a binary tree over the
``n`` partitions, level by level: leaf ``i`` is node ``(0, i)``; node ``(level + 1, j)``
is ``combine(node (level, 2j), node (level, 2j + 1))``, or node ``(level, 2j)`` carried
up unchanged when it has no right sibling (0+1, 2+3, ..., then again).

- :func:`reduce_nodes` completes what it can of the tree from any subset of nodes: in
  process from all leaves; on a cluster each worker from its own contiguous range of
  partitions, and then from its peers' partial sums (``worker_states``);
- :func:`reduce_all` reduces a list of partial sums in that order (metrics);
- :func:`reduction_steps` is the tree itself, for callers that build it out of tasks
  or futures (a dask graph in ``runtime.add_tree_reduction``, a thread pool in
  ``runtime.Runtime.map_reduce``).

This module imports nothing else of the package.
"""


def reduction_steps(n_leaves):
    """The tree over ``n_leaves`` leaves as ``(parent, left, right)`` node ids in the
    order they can be computed (level by level); ``right`` is None when ``left`` is
    carried up. The last parent is the root; with one leaf there are no steps."""
    steps = []
    level, width = 0, n_leaves
    while width > 1:
        for j in range((width + 1) // 2):
            right = (level, 2 * j + 1) if 2 * j + 1 < width else None
            steps.append(((level + 1, j), (level, 2 * j), right))
        level, width = level + 1, (width + 1) // 2
    return steps


def root(n_leaves):
    """The id of the node holding the total of ``n_leaves`` leaves."""
    steps = reduction_steps(n_leaves)
    return steps[-1][0] if steps else (0, 0)


def reduce_nodes(nodes, n_leaves, combine):
    """Complete what can be completed of the tree over ``n_leaves`` leaves.

    ``nodes`` maps node ids to partial sums (leaf ``i`` is ``(0, i)``). Every node whose
    children are both present is computed (the children are dropped); returns the nodes
    left: just ``{root: total}`` once all leaves are in. Whoever holds which nodes, the
    same sums are added in the same order.
    """
    nodes = dict(nodes)
    for parent, left, right in reduction_steps(n_leaves):
        if left not in nodes or (right is not None and right not in nodes):
            continue
        nodes[parent] = (nodes.pop(left) if right is None
                         else combine(nodes.pop(left), nodes.pop(right)))
    return nodes


def reduce_all(values, combine):
    """The total of ``values`` (one per leaf, at least one) in the fixed order."""
    values = list(values)
    if not values:
        raise ValueError("a reduction needs at least one value")
    (total,) = reduce_nodes({(0, i): v for i, v in enumerate(values)}, len(values),
                            combine).values()
    return total
