"""Loss functions: per-row gradients and hessians, the constant start, the output link.

Every objective provides, in XGBoost's second-order formulation (Chen & Guestrin 2016,
eq. 3): ``g_i = dl(y_i, m)/dm`` and ``h_i = d^2 l(y_i, m)/dm^2`` at the current margin
``m``, multiplied by the row's sample weight.  The gradient kernels are numba functions
that write into preallocated float32 arrays, one partition at a time.

The start of boosting is Friedman's step 1, ``F0 = argmin_c sum_i w_i l(y_i, c)``: the
weighted mean for squared error and the log-odds of the weighted mean for the logistic
loss.  It is computed from per-partition sums ``(sum w*y, sum w)`` that are reduced on
the client, so no rows are gathered.
"""

import math

import numba
import numpy as np

# XGBoost clamps the logistic hessian away from zero so leaf weights stay finite.
_MIN_HESSIAN = 1e-16


@numba.njit(nogil=True, cache=True)
def _squared_error_gradients(margin, y, weight, grad, hess):
    # l = (y - m)^2 / 2 -> g = m - y, h = 1
    for i in range(margin.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else weight[i]
        grad[i] = (margin[i] - y[i]) * w
        hess[i] = w


@numba.njit(nogil=True, cache=True)
def _logistic_gradients(margin, y, weight, grad, hess):
    # l = -y log p - (1-y) log(1-p), p = sigmoid(m) -> g = p - y, h = p (1 - p)
    for i in range(margin.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else weight[i]
        p = 1.0 / (1.0 + math.exp(-margin[i]))
        grad[i] = (p - y[i]) * w
        hess[i] = max(p * (1.0 - p), _MIN_HESSIAN) * w


def _sigmoid(margin):
    return 1.0 / (1.0 + np.exp(-np.asarray(margin, dtype=np.float64)))


class Objective:
    """A loss with its gradient kernel, its constant start and its output transform."""

    name = None

    def gradients(self, margin, y, weight):
        """Return float32 ``(grad, hess)`` for one partition.

        ``weight`` is a float array of the partition's sample weights, or ``None``.
        """
        n = margin.shape[0]
        grad = np.empty(n, dtype=np.float32)
        hess = np.empty(n, dtype=np.float32)
        w = _EMPTY_WEIGHT if weight is None else weight
        self._kernel(margin, y, w, grad, hess)
        return grad, hess

    def check_labels(self, y_min, y_max):
        """Raise ValueError when labels lie outside the loss's domain."""

    def base_margin(self, weighted_label_sum, weight_sum):
        """Friedman's F0 as a margin, from the reduced ``(sum w*y, sum w)``."""
        raise NotImplementedError

    def margin_from_base_score(self, base_score):
        """Turn a user-given ``base_score`` (in output space, as in xgboost) into a margin."""
        raise NotImplementedError

    def transform(self, margin):
        """Map margins to predictions (identity, or the sigmoid)."""
        raise NotImplementedError


class SquaredError(Objective):
    name = "reg:squarederror"
    _kernel = staticmethod(_squared_error_gradients)

    def base_margin(self, weighted_label_sum, weight_sum):
        return weighted_label_sum / weight_sum

    def margin_from_base_score(self, base_score):
        return float(base_score)

    def transform(self, margin):
        return np.asarray(margin, dtype=np.float64)


class Logistic(Objective):
    name = "binary:logistic"
    _kernel = staticmethod(_logistic_gradients)
    # keep the start finite when every label is 0 or every label is 1
    _PROBABILITY_CLIP = 1e-7

    def check_labels(self, y_min, y_max):
        if y_min < 0 or y_max > 1:
            raise ValueError(
                f"objective='{self.name}' needs labels in [0, 1]; "
                f"got labels in [{y_min}, {y_max}]"
            )

    def base_margin(self, weighted_label_sum, weight_sum):
        p = weighted_label_sum / weight_sum
        p = min(max(p, self._PROBABILITY_CLIP), 1.0 - self._PROBABILITY_CLIP)
        return math.log(p / (1.0 - p))

    def margin_from_base_score(self, base_score):
        if not 0.0 < base_score < 1.0:
            raise ValueError(
                f"base_score={base_score} must be in (0, 1) for objective='{self.name}'"
            )
        return math.log(base_score / (1.0 - base_score))

    def transform(self, margin):
        return _sigmoid(margin)


_EMPTY_WEIGHT = np.empty(0, dtype=np.float32)

OBJECTIVES = {cls.name: cls for cls in (SquaredError, Logistic)}


def get_objective(name):
    """Return the objective called ``name`` (xgboost's spelling)."""
    try:
        return OBJECTIVES[name]()
    except (KeyError, TypeError):
        valid = ", ".join(repr(n) for n in OBJECTIVES)
        raise ValueError(f"objective={name!r} is not supported; valid objectives: {valid}") from None
