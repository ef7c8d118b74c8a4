"""Split constraints of one tree being grown: xgboost's ``monotone_constraints`` and
``interaction_constraints``, node by node (the grower asks; the kernels for monotone
splits are in ``splitting``).

Monotone (xgboost's ``TreeEvaluator``): every node has bounds [lower, upper] on its
weight, (-inf, inf) at the root.  A split's children inherit their parent's bounds;
when the split feature is constrained, the midpoint of the two children's (bounded)
weights becomes the upper bound of the left child and the lower bound of the right one
for +1 (the reverse for -1).  So every leaf below the left child weighs at most what
every leaf below the right child weighs, and predictions never decrease (+1) / increase
(-1) along the feature.

Interaction (xgboost's ``FeatureInteractionConstraintHost``): the root may split on any
feature; below it a node may split on the features already used on its path, and on
every feature of each constraint set that holds all of them.  A feature in no set, once
used, lets its subtree split on nothing else.
"""

import numpy as np

from .splitting import bounded_weight


class NodeConstraints:
    """Bounds and allowed features of each node of one tree (node ids as the grower's).

    ``params``: resolved ``TrainingParams`` (``params.resolve_constraints``).
    """

    def __init__(self, params, n_features):
        self.params = params
        self.monotone = (None if params.monotone_constraints is None
                         else np.array(params.monotone_constraints, dtype=np.int8))
        self.sets = (None if params.interaction_constraints is None
                     else [frozenset(s) for s in params.interaction_constraints])
        self.n_features = n_features
        self._bounds = {0: (-np.inf, np.inf)}
        self._used = {0: frozenset()}

    @classmethod
    def of(cls, params, n_features):
        """The constraints of a tree, or None when no constraint is set (the default)."""
        if params.monotone_constraints is None and params.interaction_constraints is None:
            return None
        return cls(params, n_features)

    def _reg(self):
        p = self.params
        return p.reg_lambda, p.reg_alpha, p.max_delta_step

    def bounds(self, nodes):
        """(len(nodes), 2) float64 lower and upper weight bounds of the nodes."""
        return np.array([self._bounds[n] for n in nodes], dtype=np.float64).reshape(-1, 2)

    def weight(self, node, g, h):
        """A node's weight: ``leaf_weight`` clipped into the node's bounds."""
        lower, upper = self._bounds.get(node, (-np.inf, np.inf))
        return bounded_weight(g, h, lower, upper, *self._reg())

    def clip(self, node, value, scale):
        """A leaf output set otherwise (a leaf refit: quantile losses), ``scale`` times a
        weight, clipped into ``scale`` times the node's bounds. (xgboost leaves refit
        leaves unbounded, so its monotone constraints do not hold for them.)"""
        lower, upper = self._bounds[node]
        return min(max(value, scale * lower), scale * upper)

    def allowed(self, nodes):
        """(len(nodes), n_features) bool: the features each node may split on."""
        masks = np.ones((len(nodes), self.n_features), dtype=np.bool_)
        if self.sets is None:
            return masks
        for i, node in enumerate(nodes):
            used = self._used[node]
            if not used:
                continue
            masks[i] = False
            allowed = set(used)
            for group in self.sets:
                if used <= group:
                    allowed |= group
            masks[i, sorted(allowed)] = True
        return masks

    def split(self, node, feature, left, right, left_sum, right_sum):
        """Record the split of ``node`` on ``feature`` into children ``left``, ``right``
        with gradient sums ``left_sum``, ``right_sum``."""
        used = self._used[node] | {feature}
        self._used[left] = self._used[right] = used
        lower, upper = self._bounds[node]
        self._bounds[left] = self._bounds[right] = (lower, upper)
        direction = 0 if self.monotone is None else self.monotone[feature]
        if direction == 0:
            return
        # the children's weights under the parent's bounds, as the split was judged
        wl = bounded_weight(left_sum[0], left_sum[1], lower, upper, *self._reg())
        wr = bounded_weight(right_sum[0], right_sum[1], lower, upper, *self._reg())
        mid = (wl + wr) / 2.0
        if direction > 0:
            self._bounds[left], self._bounds[right] = (lower, mid), (mid, upper)
        else:
            self._bounds[left], self._bounds[right] = (mid, upper), (lower, mid)
