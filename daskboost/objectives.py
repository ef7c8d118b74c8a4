"""Loss functions: per-row gradients and hessians, the constant start, the output link.

Every objective provides, in XGBoost's second-order formulation (Chen & Guestrin 2016,
eq. 3, ``L~ = sum_i [g_i f(x_i) + h_i f(x_i)^2 / 2] + Omega(f)``):
``g_i = dl(y_i, m)/dm`` and ``h_i = d^2 l(y_i, m)/dm^2`` at the current margin ``m``,
multiplied by the row's sample weight.

Shapes
------
Margins are ``(K, n_rows)`` float64 arrays, ``K = n_outputs()`` (the number of classes
for ``multi:*``, 1 otherwise); gradients and hessians are ``(K, n_rows)`` float32.  The
gradient kernels are numba functions that write into preallocated arrays, one partition
at a time, and release the GIL.

The constant start
------------------
Boosting starts from Friedman's step 1 (Friedman 2001, Algorithm 1, line 1),
``F0 = argmin_c sum_i w_i l(y_i, c)``, computed from :class:`LabelStats`, facts about the
labels that the caller reduces over the partitions, so no rows are gathered: the weighted
mean (squared error; through the link for the logistic and log-link losses), a weighted
quantile of the label sketch (absolute and quantile error), the centred log class priors
(softmax).  ``base_score`` is, as in xgboost, given in output space (a probability, a
mean) and mapped to a margin through the inverse link.

Metadata
--------
Each objective says what it models, ``kind`` (``REGRESSION``, ``BINARY``,
``MULTICLASS``), and whether its output is a probability, ``probability_output``; the
estimators, the command line and the metrics read them (:func:`objectives_of_kind`,
:func:`is_classification`, :func:`regressor_objectives`) instead of keeping lists of
names.  The link functions themselves live in :mod:`daskboost.links`.

References
----------
T. Chen, C. Guestrin, "XGBoost: A Scalable Tree Boosting System", KDD 2016.
J. H. Friedman, "Greedy function approximation: a gradient boosting machine",
Ann. Statist. 29(5), 2001.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import operator
import sys
from dataclasses import dataclass

import numba
import numpy as np

from . import lambdarank, links, sketch, survival

__all__ = ["BINARY", "KINDS", "LabelStats", "MULTICLASS", "OBJECTIVES", "Objective",
           "RANKING", "REGRESSION", "classifier_objectives", "get_objective", "is_classification",
           "objective_kind", "objectives_of_kind", "regressor_objectives"]

# What an objective models (its ``kind``).  The kind also fixes how a classifier turns
# margins into a class index (links.class_index): BINARY has one margin per row, class 1
# when it is > 0; MULTICLASS one per class, the class with the largest margin.
REGRESSION = "regression"      # a real-valued label (its mean, median, a quantile, ...)
BINARY = "binary"              # classes 0 and 1
MULTICLASS = "multiclass"      # classes 0 .. num_class - 1
RANKING = "ranking"            # relevance labels, ranked within query groups
KINDS = (REGRESSION, BINARY, MULTICLASS, RANKING)

# XGBoost clamps the logistic and softmax hessians away from zero so that leaf weights
# (Chen & Guestrin eq. 5, w* = -G / (H + lambda)) stay finite with lambda = 0.
_MIN_HESSIAN = 1e-16
# XGBoost clamps a probability to [1e-6, 1 - 1e-6] before taking its logit or its log
# (intercept of binary:logistic, class priors of multi:*); we do the same.
_PROBABILITY_CLIP = 1e-6
# Floor of the mean for the log-link start, so that all-zero counts give a finite F0
# (the exact argmin is -inf there; xgboost 3.2 starts from -inf and predicts NaN).
_MEAN_FLOOR = 1e-6
# reg:squaredlogerror: predictions kept above -1 by this much, hessians at least this
# (xgboost's kRtEps and its floor)
_SLE_FLOOR = -1.0 + 1e-6
_SLE_MIN_HESS = 1e-6
# binary:hinge's hessian outside the margin: float32's smallest normal number (xgboost's)
_FLT_MIN = float(np.finfo(np.float32).tiny)
# xgboost's lambdarank parameters and their defaults (``lambdarank_num_pair_per_sample``:
# None stands for xgboost's default, 32 for "topk" and 1 for "mean")
# xgboost's accelerated-failure-time parameters (``survival:aft``) and their defaults
AFT_DEFAULTS = {"aft_loss_distribution": "normal", "aft_loss_distribution_scale": 1.0}
RANKING_DEFAULTS = {"lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": None,
                    "ndcg_exp_gain": True, "lambdarank_normalization": True,
                    "lambdarank_score_normalization": True, "lambdarank_unbiased": False}


# ---------------------------------------------------------------------------
# label statistics
# ---------------------------------------------------------------------------


@dataclass
class LabelStats:
    """Facts about the training labels, reduced over the partitions by the caller.

    Attributes
    ----------
    n_rows : int
        Number of rows.
    weight_sum : float
        Sum of the sample weights (``n_rows`` when unweighted).
    weighted_label_sum : float
        ``sum_i w_i y_i`` (0 for classifiers with non-numeric labels).
    label_min, label_max : float
        Smallest and largest label (of the encoded labels for classifiers).
    all_integer : bool
        Every label is an integer value.
    label_summary : sketch.FeatureSummary or None
        Weighted quantile sketch of the labels; needed by the objectives whose
        ``needs_label_summary`` is True.
    class_weights : dict or None
        ``{class index 0..K-1: weight sum}`` for classifiers (labels already encoded),
        else None; needed by the objectives whose ``needs_class_weights`` is True.
    positive_weight : float
        Sum of the weights of the rows labelled exactly 1 (the rows ``scale_pos_weight``
        weighs).
    weighted_log1p_label_sum : float
        ``sum_i w_i log(1 + y_i)`` (-inf or nan when a label is <= -1): the start of
        ``reg:squaredlogerror``.
    query_counts : tuple of int or None
        Ranking (``qid`` given): the number of query groups of each partition, in
        partition order; None without query ids.
    query_weight_sum : float
        The sum of the queries' weights (their number when unweighted).
    targets : tuple of LabelStats or None
        A multi-target y: each target's statistics, in target order (the fields above
        then describe the first target); None for one label per row.
    crossed_bounds : int
        A y of two columns: the rows whose first is above their second (an interval's
        bounds crossed, for ``survival:aft``).
    """

    n_rows: int
    weight_sum: float
    weighted_label_sum: float
    label_min: float
    label_max: float
    all_integer: bool
    label_summary: "sketch.FeatureSummary | None" = None
    class_weights: "dict | None" = None
    positive_weight: float = 0.0
    weighted_log1p_label_sum: float = 0.0
    query_counts: "tuple | None" = None
    query_weight_sum: float = 0.0
    targets: "tuple | None" = None
    crossed_bounds: int = 0

    @classmethod
    def from_labels(cls, y, weight=None, summary_size=None, classifier=False):
        """Statistics of one block of labels (a partition, or all of them).

        Parameters
        ----------
        y : array_like
            1-D numeric labels (encoded class indices for a classifier), or
            ``(n_targets, n_rows)``: each target's statistics in ``targets``.
        weight : array_like or None
            Sample weights, or None for unit weights.
        summary_size : int or None
            If given, also build ``label_summary`` with at most this many entries
            (:func:`sketch.summarize_column`).
        classifier : bool
            If True, fill ``class_weights`` (the labels must be integer valued).

        Returns
        -------
        LabelStats
        """
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2:  # (n_targets, n_rows): each target's statistics too
            targets = tuple(cls.from_labels(column, weight, summary_size) for column in y)
            return dataclasses.replace(targets[0], targets=targets)
        y = y.ravel()
        w = None if weight is None else np.asarray(weight, dtype=np.float64).ravel()
        n = y.shape[0]
        if w is not None and w.shape[0] != n:
            raise ValueError(f"weight has {w.shape[0]} entries, labels have {n}")
        ww = np.ones(n) if w is None else w
        class_weights = None
        if classifier:
            if n and not (np.all(y == np.floor(y)) and y.min() >= 0):
                raise ValueError("classifier labels must be encoded as class indices 0, 1, ...")
            sums = np.bincount(y.astype(np.int64), weights=ww) if n else np.zeros(0)
            class_weights = {k: float(s) for k, s in enumerate(sums)}
        summary = None
        if summary_size is not None:
            summary = sketch.summarize_column(y, w, summary_size)
        with np.errstate(divide="ignore", invalid="ignore"):  # (labels <= -1)
            log_sum = float(ww @ np.log1p(y))
        return cls(
            n_rows=int(n),
            weight_sum=float(ww.sum()),
            weighted_label_sum=float(ww @ y),
            label_min=float(y.min()) if n else math.inf,
            label_max=float(y.max()) if n else -math.inf,
            all_integer=bool(np.all(y == np.floor(y))),
            label_summary=summary,
            class_weights=class_weights,
            positive_weight=float(ww[y == 1.0].sum()),
            weighted_log1p_label_sum=log_sum,
        )

    def merge(self, other, summary_size=256):
        """Statistics of the union of two disjoint blocks (for the tree reduction).

        ``summary_size`` bounds the merged ``label_summary`` (see :func:`sketch.merge`).
        """
        if (self.label_summary is None) != (other.label_summary is None):
            raise ValueError("cannot merge label statistics with and without label_summary")
        if (self.class_weights is None) != (other.class_weights is None):
            raise ValueError("cannot merge label statistics with and without class_weights")
        summary = None
        if self.label_summary is not None:
            summary = sketch.merge(self.label_summary, other.label_summary, summary_size)
        class_weights = None
        if self.class_weights is not None:
            class_weights = dict(self.class_weights)
            for k, s in other.class_weights.items():
                class_weights[k] = class_weights.get(k, 0.0) + s
        return LabelStats(
            n_rows=self.n_rows + other.n_rows,
            weight_sum=self.weight_sum + other.weight_sum,
            weighted_label_sum=self.weighted_label_sum + other.weighted_label_sum,
            label_min=min(self.label_min, other.label_min),
            label_max=max(self.label_max, other.label_max),
            all_integer=self.all_integer and other.all_integer,
            label_summary=summary,
            class_weights=class_weights,
            positive_weight=self.positive_weight + other.positive_weight,
            weighted_log1p_label_sum=(self.weighted_log1p_label_sum
                                      + other.weighted_log1p_label_sum),
            targets=_merged_targets(self.targets, other.targets, summary_size),
            crossed_bounds=self.crossed_bounds + other.crossed_bounds,
        )


def _merged_targets(a, b, summary_size):
    """Two blocks' per-target ``LabelStats`` merged target by target (None: one label)."""
    if (a is None) != (b is None) or (a is not None and len(a) != len(b)):
        raise ValueError("cannot merge label statistics of different numbers of targets")
    return None if a is None else tuple(x.merge(y, summary_size) for x, y in zip(a, b))


# ---------------------------------------------------------------------------
# numba gradient kernels: margin (K, n) float64, y (n,), weight (n,) or (0,) for unit
# weights, grad/hess (K, n) written in place: float32 when unweighted, float64 when
# weighted (see gradient_dtype).
# ---------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, inline="always")
def _weighted(value, w):
    # w * value with value rounded to float32 first, as an unweighted fit stores it, and
    # the product taken in float64: a row of integer weight w then adds to a histogram
    # exactly what w copies of the row add (float32(w * value) would not, for w = 3)
    return np.float64(np.float32(value)) * w


@numba.njit(nogil=True, cache=True)
def _squared_error_kernel(margin, y, weight, grad, hess):
    # l = (y - m)^2 / 2 -> g = m - y, h = 1
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        grad[0, i] = _weighted(margin[0, i] - y[i], w)
        hess[0, i] = w


@numba.njit(nogil=True, cache=True)
def _squared_log_error_kernel(margin, y, weight, grad, hess):
    # l = (log(1 + p) - log(1 + y))^2 / 2, p = max(m, -1 + 1e-6) (xgboost's clamp) ->
    # g = r / (1 + p), h = max((1 - r) / (1 + p)^2, 1e-6) with r = log(1 + p) - log(1 + y)
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        p = max(margin[0, i], _SLE_FLOOR)
        r = np.log1p(p) - np.log1p(y[i])
        grad[0, i] = _weighted(r / (1.0 + p), w)
        hess[0, i] = _weighted(max((1.0 - r) / ((1.0 + p) * (1.0 + p)), _SLE_MIN_HESS), w)


@numba.njit(nogil=True, cache=True)
def _absolute_error_kernel(margin, y, weight, grad, hess):
    # l = |y - m| -> g = sign(m - y) (0 at the kink); h = 1 as in xgboost (the true
    # second derivative is 0 a.e.; the leaf values are re-estimated as medians anyway)
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        d = margin[0, i] - y[i]
        s = 1.0 if d > 0.0 else (-1.0 if d < 0.0 else 0.0)
        grad[0, i] = _weighted(s, w)
        hess[0, i] = w


@numba.njit(nogil=True, cache=True)
def _pseudo_huber_kernel(margin, y, weight, grad, hess, slope):
    # l = d^2 (sqrt(1 + (z/d)^2) - 1), z = m - y
    # -> g = z / sqrt(1 + (z/d)^2), h = (1 + (z/d)^2)^(-3/2)
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        z = margin[0, i] - y[i]
        r = 1.0 + (z / slope) ** 2
        s = math.sqrt(r)
        grad[0, i] = _weighted(z / s, w)
        hess[0, i] = _weighted(1.0 / (r * s), w)


@numba.njit(nogil=True, cache=True)
def _quantile_kernel(margin, y, weight, grad, hess, alphas):
    # pinball loss at level alpha_k for output k: l = alpha (y - m) for y >= m,
    # (1 - alpha)(m - y) for y < m -> g = 1 - alpha if m >= y else -alpha (a subgradient
    # at m = y); h = 1 as in xgboost
    for k in range(alphas.shape[0]):
        alpha = alphas[k]
        for i in range(y.shape[0]):
            w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
            if margin[k, i] >= y[i]:
                grad[k, i] = _weighted(1.0 - alpha, w)
            else:
                grad[k, i] = _weighted(-alpha, w)
            hess[k, i] = w


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _logistic_kernel(margin, y, weight, grad, hess):
    # l = -y log p - (1-y) log(1-p), p = sigmoid(m) -> g = p - y, h = max(p (1 - p), 1e-16)
    # (a loop without calls: the compiler vectorises it)
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        p = links.sigmoid_scalar(margin[0, i])
        grad[0, i] = _weighted(p - y[i], w)
        hess[0, i] = _weighted(max(p * (1.0 - p), _MIN_HESSIAN), w)


@numba.njit(nogil=True, cache=True)
def _hinge_kernel(margin, y, weight, grad, hess):
    # l = max(0, 1 - t m), t = 2y - 1 -> where t m < 1: g = -t, h = 1; elsewhere g = 0 and
    # h = FLT_MIN, unweighted (xgboost's: a leaf of such rows alone stays defined)
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        t = 2.0 * y[i] - 1.0
        if margin[0, i] * t < 1.0:
            grad[0, i] = _weighted(-t, w)
            hess[0, i] = _weighted(1.0, w)
        else:
            grad[0, i] = 0.0
            hess[0, i] = _FLT_MIN


@numba.njit(nogil=True, cache=True)
def _poisson_kernel(margin, y, weight, grad, hess, max_delta_step):
    # l = exp(m) - y m (negative log-likelihood up to log y!) -> g = exp(m) - y,
    # h = exp(m) * exp(max_delta_step): xgboost inflates the hessian by exp(max_delta_step)
    # (0.7 by default for count:poisson); exact hessian when max_delta_step = 0
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        mu = math.exp(margin[0, i])
        grad[0, i] = _weighted(mu - y[i], w)
        hess[0, i] = _weighted(math.exp(margin[0, i] + max_delta_step), w)


@numba.njit(nogil=True, cache=True)
def _gamma_kernel(margin, y, weight, grad, hess):
    # l = y exp(-m) + m (gamma deviance with log link, up to terms free of m)
    # -> g = 1 - y exp(-m), h = y exp(-m)
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        t = y[i] * math.exp(-margin[0, i])
        grad[0, i] = _weighted(1.0 - t, w)
        hess[0, i] = _weighted(t, w)


@numba.njit(nogil=True, cache=True)
def _tweedie_kernel(margin, y, weight, grad, hess, rho):
    # l = -y exp((1-rho) m) / (1-rho) + exp((2-rho) m) / (2-rho)
    # -> g = -y exp((1-rho) m) + exp((2-rho) m)
    #    h = -(1-rho) y exp((1-rho) m) + (2-rho) exp((2-rho) m)   (> 0 for 1 <= rho < 2)
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        a = math.exp((1.0 - rho) * margin[0, i])
        b = math.exp((2.0 - rho) * margin[0, i])
        grad[0, i] = _weighted(b - y[i] * a, w)
        hess[0, i] = _weighted(((2.0 - rho) * b - (1.0 - rho) * y[i] * a), w)


@numba.njit(nogil=True, cache=True)
def _aft_kernel(margin, y, weight, grad, hess, distribution, sigma):
    # the AFT negative log-likelihood of the interval [y[0, i], y[1, i]] of row i's event
    # time at margin m = E log T (Barnwal, Cho & Hocking 2022, eq. 6-9: survival.py)
    for i in range(margin.shape[1]):
        w = 1.0 if weight.shape[0] == 0 else np.float64(weight[i])
        g, h = survival.aft_gradient(np.float64(y[0, i]), np.float64(y[1, i]), margin[0, i],
                                     sigma, distribution)
        grad[0, i] = _weighted(g, w)
        hess[0, i] = _weighted(h, w)


SOFTMAX_ROWS = 256  # rows whose probabilities ``_softmax_kernel`` computes at a time


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _softmax_kernel(margin, y, weight, grad, hess):
    # l = -log p_y, p = softmax(m) -> g_k = p_k - [y == k];
    # h_k = max(2 p_k (1 - p_k), 1e-16): xgboost's diagonal hessian bound, twice the exact
    # diagonal p_k (1 - p_k) (the factor 2 is xgboost's and halves the Newton step)
    K, n_rows = margin.shape
    prob = np.empty((K, SOFTMAX_ROWS))
    top = np.empty(SOFTMAX_ROWS)
    total = np.empty(SOFTMAX_ROWS)
    for start in range(0, n_rows, SOFTMAX_ROWS):
        n = min(SOFTMAX_ROWS, n_rows - start)
        links.softmax_rows(margin, start, n, prob, top, total)
        labels = y[start:start + n]
        for k in range(K):
            probs = prob[k]
            grads = grad[k, start:start + n]
            hesses = hess[k, start:start + n]
            for j in range(n):
                w = 1.0 if weight.shape[0] == 0 else np.float64(weight[start + j])
                p = probs[j]
                g = p - 1.0 if k == int(labels[j]) else p
                grads[j] = _weighted(g, w)
                hesses[j] = _weighted(max(2.0 * p * (1.0 - p), _MIN_HESSIAN), w)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

_EMPTY_WEIGHT = np.empty(0, dtype=np.float32)


def gradient_dtype(weight):
    """The dtype of the gradients and hessians of rows with these sample weights.

    float32 (as xgboost) without weights.  With weights, float64 holding
    ``w * float32(dl/dm)`` exactly for small integer ``w``: a weighted row then adds what
    its repeated copies add, bit for bit, which scikit-learn's sample-weight checks
    require and float32 storage of the product cannot give.
    """
    return np.float32 if weight is None else np.float64


def _as_index(value):
    """``value`` as an int when it is an integer (numpy's too, not a float), else None."""
    try:
        return operator.index(value)
    except TypeError:
        return None


def _as_float_array(a):
    a = np.asarray(a)
    if a.dtype != np.float32 and a.dtype != np.float64:
        a = a.astype(np.float64)
    return np.ascontiguousarray(a)


def _weighted_points(summary):
    """A discrete weighted distribution read off a quantile summary.

    Returns the summary's stored values ``x_i`` and masses ``M_i >= 0`` summing to
    ``W``.  The cumulative mass ``R_i = M_0 + ... + M_i`` is the midpoint of the
    summary's bounds on the weight of the data at or below ``x_i`` and strictly below
    ``x_{i+1}``: ``[rmin_i + wmin_i, rmax_{i+1} - wmin_{i+1}]``, an interval of width at
    most ``eps * W`` (condition (2) of the sketch module) that holds the true
    cumulative weight ``G(y)`` for every ``x_i <= y < x_{i+1}``.  Hence the step
    function of the ``R_i`` is within ``eps * W / 2`` of the true weighted CDF
    everywhere (a running maximum keeps it non-decreasing without losing that), and it
    is exact for an exact summary.
    """
    values = summary.values
    W = summary.total_weight
    lower = summary.rmin[:-1] + summary.wmin[:-1]
    upper = summary.rmax[1:] - summary.wmin[1:]
    cum = np.empty(len(values))
    cum[:-1] = 0.5 * (lower + upper)
    cum[-1] = W
    cum = np.maximum.accumulate(np.clip(cum, 0.0, W))
    return values, np.diff(cum, prepend=0.0)


def _require_summary(objective, stats):
    summary = stats.label_summary
    if summary is None:
        raise ValueError(f"objective='{objective.name}' needs stats.label_summary "
                         "(a weighted quantile sketch of the labels) for its start")
    if len(summary) == 0:
        raise ValueError(f"objective='{objective.name}': the label summary is empty "
                         "(no positively weighted labels)")
    return summary


# ---------------------------------------------------------------------------
# objectives
# ---------------------------------------------------------------------------


class Objective:
    """A loss with its gradient kernel, its constant start and its output transform.

    Parameters
    ----------
    num_class : int or None
        Number of classes (``multi:*`` only, an integer >= 2).
    huber_slope : float
        ``delta`` of the pseudo-Huber loss (``reg:pseudohubererror`` only), > 0.
    quantile_alpha : float or sequence of float
        Target quantile of ``reg:quantileerror``, in (0, 1); several (xgboost's list)
        give a model with one output per level.
    tweedie_variance_power : float
        ``rho`` of ``reg:tweedie``, in [1, 2).
    max_delta_step : float
        ``count:poisson`` only: xgboost multiplies the Poisson hessian by
        ``exp(max_delta_step)`` (and separately clips leaf values to it); pass the
        booster's ``max_delta_step`` (0.7 by default for Poisson in xgboost) to get the
        same gradients.  >= 0; 0 gives the exact hessian.
    scale_pos_weight : float
        The logistic losses only (``LOGISTIC_OBJECTIVES``): the weight of the rows
        labelled 1 is multiplied by it in the gradients, as in xgboost (``> 0``; 1:
        none).  The start is the minimiser of the loss so weighted.
    class_weight : sequence of float or None
        The classification objectives only (labels are class indices): the weight of
        a row of class ``c`` is multiplied by ``class_weight[c]`` in the gradients and
        the start (scikit-learn's ``class_weight``, resolved to one factor per class).

    Each objective keeps and validates only the parameters it uses; the others are
    ignored.

    Attributes
    ----------
    name : str
        xgboost's spelling.
    kind : str
        What the objective models: ``REGRESSION``, ``BINARY`` or ``MULTICLASS`` (set by
        every objective in ``OBJECTIVES``; see :func:`objectives_of_kind`).
    probability_output : bool
        :meth:`transform` gives probabilities: ``sigmoid(margin)`` for one output,
        softmax rows for ``multi:softprob``.
    default_metric : str
        xgboost's default ``eval_metric`` for the objective.
    max_margin : float
        The largest margin whose prediction is finite (``exp`` overflows beyond
        ``log(float max)``); a model file whose trees could add up to more is refused.
    leaf_quantiles : tuple of float or None
        If not None, one quantile per output: each leaf of output ``k``'s tree is to be
        re-estimated after growing as the weighted ``leaf_quantiles[k]`` quantile of the
        residuals ``y - margin_k`` of its rows (xgboost's adaptive leaves, Friedman 2001
        Algorithm 3); the caller does the refit.
    needs_label_summary : bool
        :meth:`base_margin` reads ``stats.label_summary``.
    needs_class_weights : bool
        :meth:`base_margin` reads ``stats.class_weights``.
    outputs_classes : bool
        :meth:`transform` gives the class itself, 0 or 1 (``binary:hinge``): a
        classifier's ``predict_proba`` is then 0 or 1 too, as xgboost's.
    bounded_hessian : bool
        The hessian is bounded by a constant, whatever the labels and margins, so that
        ``quantized_grad="auto"`` may round the gradients to a few steps of the round's
        largest (``params.settle_quantized_grad``).  Where a few outlying labels or
        margins make a few rows' hessians far larger than any bound (gamma and Tweedie:
        ``y exp(-m)``-like; Poisson: ``exp(m)``), the others' round to 0 or 1 step:
        ``benchmarks/bench_quantized_objectives.py``, 200,000 rows, test deviance
        gamma +11.5%, Tweedie +1.3% against float gradients.
    ranks_queries : bool
        The gradients are a query group's (learning to rank): ``query_gradients`` gives
        them from a partition's whole queries; ``gradients`` refuses.
    label_columns : int or None
        The labels of a row, when the loss takes several (``survival:aft``: the bounds
        of its interval, ``(label_columns, n)`` labels for one output); None: one label
        a row, or one per target.
    multi_target : bool
        The loss is elementwise, so a y of several columns (``num_target`` > 1) trains
        one output per target, each with its own trees from its own column's gradients
        and its own start (xgboost's ``multi_strategy="one_output_per_tree"``).
    """

    name = None
    kind = None
    probability_output = False
    default_metric = None
    max_margin = math.inf
    leaf_quantiles = None
    needs_label_summary = False
    needs_class_weights = False
    bounded_hessian = False
    outputs_classes = False
    ranks_queries = False
    multi_target = True
    label_columns = None

    def __init__(self, num_class=None, huber_slope=1.0, quantile_alpha=0.5,
                 tweedie_variance_power=1.5, max_delta_step=0.0, scale_pos_weight=1.0,
                 class_weight=None, num_target=1, aft_loss_distribution="normal",
                 aft_loss_distribution_scale=1.0, **ranking_params):
        unknown = sorted(set(ranking_params) - set(RANKING_DEFAULTS))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                            f"{unknown[0]!r}")
        self._configure(num_class=num_class, huber_slope=huber_slope,
                        quantile_alpha=quantile_alpha,
                        tweedie_variance_power=tweedie_variance_power,
                        max_delta_step=max_delta_step, scale_pos_weight=scale_pos_weight,
                        aft_loss_distribution=aft_loss_distribution,
                        aft_loss_distribution_scale=aft_loss_distribution_scale,
                        **ranking_params)
        self.num_target = self._check_num_target(num_target)
        if self.leaf_quantiles is not None and self.num_target > 1:  # (one per output)
            self.leaf_quantiles = self.leaf_quantiles * self.num_target
        self.class_weight = self._check_class_weight(class_weight)

    def _check_num_target(self, num_target):
        """``num_target`` (the columns of y) checked against the objective."""
        targets = _as_index(num_target)
        if targets is None or targets < 1:
            raise ValueError(f"num_target={num_target!r} must be an integer >= 1 (the "
                             "number of columns of y)")
        if targets > 1 and not self.multi_target:
            raise ValueError(f"objective='{self.name}' takes one label per row; y has "
                             f"{targets} columns (a multi-target y needs an elementwise "
                             "objective, such as 'reg:squarederror' or 'binary:logistic')")
        return targets

    def _check_class_weight(self, class_weight):
        """``class_weight`` as a float64 array of one factor per class (or None)."""
        if class_weight is None:
            return None
        if self.kind not in (BINARY, MULTICLASS) or self.num_target > 1:
            raise ValueError(f"class_weight weighs the classes of a classification objective; "
                             f"objective='{self.name}'"
                             + (f" with {self.num_target} targets" if self.num_target > 1
                                else "") + " has none")
        if not isinstance(class_weight, (list, tuple, np.ndarray)):
            raise ValueError(f"class_weight={class_weight!r:.80} must be a list of one factor "
                             "per class")
        factors = np.array([_check_real(f, "class_weight") for f in class_weight],
                           dtype=np.float64)
        if factors.shape != (self.n_outputs() if self.kind == MULTICLASS else 2,) \
                or not (np.isfinite(factors) & (factors >= 0)).all():
            raise ValueError(f"class_weight={list(class_weight)!r:.200} must hold a finite "
                             f"factor >= 0 for each class of objective='{self.name}'")
        return factors

    def _configure(self, **params):
        """Validate and keep the parameters the objective uses (none by default)."""

    def __repr__(self):
        return f"{type(self).__name__}()"

    # -- shapes ---------------------------------------------------------------

    def n_outputs(self):
        """Number of margins per row, ``K`` (one per target)."""
        return self.num_target

    def single_target(self):
        """This objective for one target of a multi-target y (itself for one label)."""
        if self.num_target == 1:
            return self
        single = copy.copy(self)
        single.num_target = 1
        if single.leaf_quantiles is not None:
            single.leaf_quantiles = single.leaf_quantiles[:1]
        return single

    def _margin(self, margin):
        """``margin`` as a C-contiguous float64 ``(K, n)`` array (1-D accepted for K = 1)."""
        m = np.asarray(margin, dtype=np.float64)
        K = self.n_outputs()
        if m.ndim == 1 and K == 1:
            m = m[None, :]
        if m.ndim != 2 or m.shape[0] != K:
            raise ValueError(f"objective='{self.name}' needs margins of shape ({K}, n_rows), "
                             f"got {np.shape(margin)}")
        return np.ascontiguousarray(m)

    # -- gradients --------------------------------------------------------------

    def _kernel_args(self):
        return ()

    def gradients(self, margin, y, weight):
        """Weighted gradients and hessians of the loss at ``margin``.

        Parameters
        ----------
        margin : numpy.ndarray
            ``(K, n)`` float64 current margins.
        y : numpy.ndarray
            ``(n,)`` float32 or float64 labels (encoded class indices for ``multi:*``);
            ``(T, n)`` for T targets, ``(label_columns, n)`` for a loss of several.
        weight : numpy.ndarray or None
            ``(n,)`` sample weights, or None for unit weights.

        Returns
        -------
        grad, hess : numpy.ndarray
            ``(K, n)`` float32, ``w_i * dl/dm`` and ``w_i * d2l/dm2`` (Chen & Guestrin
            eq. 3), with xgboost's conventions where they differ from the exact
            derivatives (see each class).
        """
        m = self._margin(margin)
        y = _as_float_array(y)
        n = m.shape[1]
        columns = self.label_columns or self.num_target
        shape = (n,) if columns == 1 else (columns, n)
        if y.shape != shape:
            raise ValueError(f"y must have shape {shape}, got {y.shape}")
        if weight is not None:
            weight = _as_float_array(weight)
            if weight.ndim != 1 or weight.shape[0] != n:
                raise ValueError(f"weight must have shape ({n},), got {weight.shape}")
        # (``gradient_dtype``'s rule; rows weighted by their labels, ``_row_factors``,
        # are a weighted fit too)
        dtype = np.float64 if weight is not None or self.weighs_rows() else np.float32
        grad = np.empty(m.shape, dtype=dtype)
        hess = np.empty(m.shape, dtype=dtype)
        if self.num_target == 1:
            self._kernel_on(m, y, weight, grad, hess)
        else:  # output k's gradients from target k's labels
            for k in range(self.num_target):
                self._kernel_on(m[k:k + 1], np.ascontiguousarray(y[k]), weight,
                                grad[k:k + 1], hess[k:k + 1])
        return grad, hess

    def _kernel_on(self, m, y, weight, grad, hess):
        """The gradient kernel on margins ``m`` of labels ``y`` (one target's; a loss's
        ``label_columns``), into ``grad``, ``hess``, each row weighted by its weight
        times its ``_row_factors``."""
        factors = self._row_factors(y)
        if factors is not None:
            weight = factors if weight is None else factors * weight
        self._kernel(m, y, _EMPTY_WEIGHT if weight is None else weight, grad, hess,
                     *self._kernel_args())

    def _row_factors(self, y):
        """Each row's weight factor from its label (``class_weight``), or None."""
        if self.class_weight is None:
            return None
        return self.class_weight[y.astype(np.int64)]

    def weighs_rows(self):
        """Whether the objective weighs rows by their labels (a weighted fit then)."""
        return self.class_weight is not None

    def _weighted_stats(self, stats):
        """``stats`` as if each row's weight were multiplied by its ``_row_factors``."""
        if self.class_weight is None:
            return stats
        if stats.class_weights is None:
            raise ValueError(f"objective='{self.name}' with class_weight needs the weight "
                             "sum per class (stats.class_weights)")
        sums = {k: w * self.class_weight[k] for k, w in stats.class_weights.items()}
        return dataclasses.replace(
            stats, class_weights=sums, weight_sum=float(sum(sums.values())),
            weighted_label_sum=float(sum(k * w for k, w in sums.items())),
            positive_weight=sums.get(1, 0.0))

    # -- labels and start ---------------------------------------------------------

    def check_labels(self, stats):
        """Raise ValueError when the labels lie outside the loss's domain.

        Parameters
        ----------
        stats : LabelStats
            Reduced statistics of the training labels.
        """
        if stats.n_rows == 0 or not stats.weight_sum > 0:
            raise ValueError(f"objective='{self.name}' needs at least one row with positive "
                             f"weight; got n_rows={stats.n_rows}, weight_sum={stats.weight_sum}")
        for k, target in enumerate(self._targets(stats)):
            try:
                if not (math.isfinite(target.label_min) and math.isfinite(target.label_max)):
                    raise ValueError(f"objective='{self.name}' needs finite labels; got "
                                     f"labels in [{target.label_min}, {target.label_max}]")
                self._check_domain(target)
            except ValueError as error:
                if self.num_target == 1:
                    raise
                raise ValueError(f"y's column {k}: {error}") from None

    def _targets(self, stats):
        """Each target's ``LabelStats`` (the one of a single label per row)."""
        if self.num_target == 1:
            return (stats,)
        if stats.targets is None or len(stats.targets) != self.num_target:
            raise ValueError(f"objective='{self.name}' with num_target={self.num_target} "
                             f"needs y with {self.num_target} columns; got "
                             f"{1 if stats.targets is None else len(stats.targets)}")
        return stats.targets

    def _check_domain(self, stats):
        pass

    def base_margin(self, stats):
        """Friedman's ``F0 = argmin_c sum_i w_i l(y_i, c)`` as a margin.

        Parameters
        ----------
        stats : LabelStats
            Reduced statistics of the training labels (:meth:`check_labels` passed).

        Returns
        -------
        numpy.ndarray
            ``(K,)`` float64.
        """
        starts = []
        for target in self._targets(stats):  # (a start per target)
            target = self._weighted_stats(target)
            if not target.weight_sum > 0:
                raise ValueError(f"objective='{self.name}': weight_sum={target.weight_sum} "
                                 "must be > 0")
            starts.append(self._base_margin(target))
        return np.array(starts, dtype=np.float64).reshape(self.n_outputs())

    def _weighted_mean(self, stats):
        return stats.weighted_label_sum / stats.weight_sum

    def margin_from_base_score(self, base_score):
        """Map a user ``base_score`` (output space, as in xgboost) to a ``(K,)`` margin."""
        b = self._check_base_score(base_score)
        return np.full(self.n_outputs(), self._link(b), dtype=np.float64)

    def _check_base_score(self, base_score):
        try:
            b = float(base_score)
        except (TypeError, ValueError):
            raise ValueError(f"base_score={base_score!r} must be a number") from None
        if not math.isfinite(b):
            raise ValueError(f"base_score={base_score!r} must be finite")
        return b

    def _link(self, b):
        return b

    # -- output ---------------------------------------------------------------------

    def transform(self, margin):
        """Predictions from margins ``(K, n)``: ``(n,)`` for ``K == 1``, ``(n, K)`` for
        several targets."""
        m = self._margin(margin)
        if self.num_target == 1:
            return self._inverse_link(m[0])
        return np.stack([self._inverse_link(row) for row in m], axis=1)

    def _inverse_link(self, m):
        return m.copy()

    def class_index(self, margin):
        """The predicted class of each row, ``(n,)`` float64 (classification kinds only):
        ``margin > 0`` for ``BINARY``, the largest margin for ``MULTICLASS``
        (:func:`links.class_index`)."""
        if self.kind not in (BINARY, MULTICLASS):
            raise ValueError(f"objective='{self.name}' is not a classification objective "
                             f"(kind {self.kind!r}); it has no predicted class")
        return links.class_index(self._margin(margin))

    def loss(self, y, margin):
        """Elementwise unweighted loss ``l(y_i, m_i)``, ``(n,)`` float64 (numpy); with
        several targets (``y`` ``(K, n)``), ``(K, n)``."""
        y = np.asarray(y, dtype=np.float64)
        m = self._margin(margin)
        return self._loss(y, m[0] if self.num_target == 1 else m)


# -- identity link --------------------------------------------------------------------


class SquaredError(Objective):
    """``reg:squarederror``: ``l = (y - m)^2 / 2``; ``F0`` = weighted mean."""

    name = "reg:squarederror"
    kind = REGRESSION
    default_metric = "rmse"
    bounded_hessian = True  # 1
    _kernel = staticmethod(_squared_error_kernel)

    def _base_margin(self, stats):
        return self._weighted_mean(stats)

    def _loss(self, y, m):
        return 0.5 * (y - m) ** 2


class SquaredLogError(Objective):
    """``reg:squaredlogerror``: ``l = (log(1 + p) - log(1 + y))^2 / 2`` with ``p = m``
    (identity link) kept above -1, as xgboost (its gradients: the kernel); labels > -1.

    ``F0`` is xgboost's: one Newton step from 0, ``sum w log(1+y) / sum w (1 +
    log(1+y))`` (its hessian floor of 1e-6 applies to the whole sum here, to each row
    in xgboost: the same start unless labels lie below ``1/e - 1``).  Not the loss's
    minimiser ``exp(mean log(1+y)) - 1``: from that larger start the Newton steps,
    ``(1 + p)`` times the log-space residual, overshoot below -1 on skewed labels
    (a 3,000-row probe fell to predictions of -8 where xgboost's start stays above -1).
    The hessian grows without bound as ``p`` nears -1, so gradients are not quantized
    by default."""

    name = "reg:squaredlogerror"
    kind = REGRESSION
    default_metric = "rmsle"
    _kernel = staticmethod(_squared_log_error_kernel)

    def _check_domain(self, stats):
        if not stats.label_min > -1.0:
            raise ValueError(f"objective='{self.name}' needs labels > -1; got label "
                             f"{stats.label_min}")

    def _base_margin(self, stats):
        log_sum = stats.weighted_log1p_label_sum
        return log_sum / max(stats.weight_sum + log_sum, _SLE_MIN_HESS * stats.weight_sum)

    def _link(self, b):
        if not b > -1.0:
            raise ValueError(f"base_score={b!r} must be > -1 for objective='{self.name}'")
        return b

    def _loss(self, y, m):
        return 0.5 * (np.log1p(np.maximum(m, _SLE_FLOOR)) - np.log1p(y)) ** 2


class AbsoluteError(Objective):
    """``reg:absoluteerror``: ``l = |y - m|``; ``F0`` = weighted median.

    ``g = sign(m - y)``, ``h = 1`` (xgboost's convention; the true second derivative is 0
    almost everywhere).  Leaves are re-estimated as weighted medians of the residuals
    (``leaf_quantiles = (0.5,)``; Friedman 2001, Algorithm 3, LAD_TreeBoost).  ``F0`` is read
    from ``stats.label_summary`` with :func:`sketch.weighted_quantile`, so its weighted
    rank is within ``eps * W / 2`` of ``W / 2`` (exact for an exact summary).
    """

    name = "reg:absoluteerror"
    kind = REGRESSION
    default_metric = "mae"
    leaf_quantiles = (0.5,)
    bounded_hessian = True  # 1 (and the leaves refit from the residuals)
    needs_label_summary = True
    _kernel = staticmethod(_absolute_error_kernel)

    def _base_margin(self, stats):
        return sketch.weighted_quantile(_require_summary(self, stats), 0.5)

    def _loss(self, y, m):
        return np.abs(y - m)


class QuantileError(Objective):
    """``reg:quantileerror``: pinball loss (Koenker & Bassett 1978).

    ``l = alpha (y - m)`` for ``y >= m``, ``(1 - alpha)(m - y)`` for ``y < m``;
    ``g = 1 - alpha`` if ``m >= y`` else ``-alpha``, ``h = 1`` (xgboost's convention).
    ``F0`` = weighted ``alpha``-quantile of the label sketch (rank within ``eps * W / 2``
    of ``alpha * W``); leaves are re-estimated at the same quantile of the residuals
    (``leaf_quantiles``).  Several levels (xgboost's ``quantile_alpha`` list) give one
    output per level, each with its own trees, start and leaves, as xgboost's
    multi-quantile regression; predictions are then ``(n, Q)``.
    """

    name = "reg:quantileerror"
    kind = REGRESSION
    default_metric = "quantile"
    multi_target = False  # (nor in xgboost: several levels give the outputs)
    bounded_hessian = True  # 1 (and the leaves refit from the residuals)
    needs_label_summary = True
    _kernel = staticmethod(_quantile_kernel)

    def _configure(self, *, quantile_alpha, **_):
        alphas = quantile_levels(quantile_alpha)
        self.quantile_alpha = alphas[0] if len(alphas) == 1 else alphas
        self.leaf_quantiles = tuple(alphas)
        self._alphas = np.array(alphas, dtype=np.float64)

    def __repr__(self):
        return f"QuantileError(quantile_alpha={self.quantile_alpha!r})"

    def n_outputs(self):
        return len(self.leaf_quantiles)

    def _kernel_args(self):
        return (self._alphas,)

    def _base_margin(self, stats):
        summary = _require_summary(self, stats)
        return [sketch.weighted_quantile(summary, a) for a in self.leaf_quantiles]

    def transform(self, margin):
        """The margins themselves: ``(n,)`` for one level, ``(n, Q)`` for several."""
        m = self._margin(margin)
        return m[0].copy() if m.shape[0] == 1 else m.T.copy()

    def loss(self, y, margin):
        """Elementwise unweighted loss, ``(n,)`` float64, summed over the levels."""
        y = np.asarray(y, dtype=np.float64)
        d = y - self._margin(margin)                                   # (Q, n)
        alpha = self._alphas[:, None]
        return np.maximum(alpha * d, (alpha - 1.0) * d).sum(axis=0)


class PseudoHuberError(Objective):
    """``reg:pseudohubererror``: ``l = delta^2 (sqrt(1 + ((m - y)/delta)^2) - 1)``.

    ``g = z / sqrt(1 + (z/delta)^2)``, ``h = (1 + (z/delta)^2)^(-3/2)``, ``z = m - y``
    (exact derivatives, as xgboost; Charbonnier et al. 1997, Hartley & Zisserman 2003,
    A6.8).

    ``F0`` is the argmin of the pseudo-Huber loss over a constant for the discrete
    distribution read off ``stats.label_summary`` (:func:`_weighted_points`), found by
    safeguarded Newton steps from the weighted median.  For an exact summary this is
    the exact argmin.  For an ``eps``-approximate summary the sketch's CDF is within
    ``eps * W / 2`` of the true one and ``psi(z) = dl/dm`` has total variation
    ``2 delta``, so the true derivative ``sum_i w_i psi(F0 - y_i)`` at ``F0`` is at most
    ``eps * W * delta`` in magnitude.

    xgboost 3.2 instead takes a single Newton step from margin 0,
    ``-sum g(0) / sum h(0)``, which overshoots badly when the labels are far from 0
    compared with ``delta`` (labels near 10 give an intercept near 938).
    """

    name = "reg:pseudohubererror"
    kind = REGRESSION
    default_metric = "mphe"
    needs_label_summary = True
    bounded_hessian = True  # at most 1
    _kernel = staticmethod(_pseudo_huber_kernel)

    def _configure(self, *, huber_slope, **_):
        s = _check_real(huber_slope, "huber_slope")
        if not (s > 0.0 and math.isfinite(s)):
            raise ValueError(f"huber_slope={huber_slope!r} must be a finite number > 0")
        self.huber_slope = s

    def __repr__(self):
        return f"PseudoHuberError(huber_slope={self.huber_slope!r})"

    def _kernel_args(self):
        return (self.huber_slope,)

    def _base_margin(self, stats):
        summary = _require_summary(self, stats)
        x, mass = _weighted_points(summary)
        d = self.huber_slope
        lo, hi = float(x[0]), float(x[-1])
        c = sketch.weighted_quantile(summary, 0.5)
        tol = 1e-12 * max(1.0, abs(lo), abs(hi))
        for _ in range(200):
            z = (c - x) / d
            r = 1.0 + z * z
            g = float(mass @ (d * z / np.sqrt(r)))
            h = float(mass @ (1.0 / (r * np.sqrt(r))))
            if g == 0.0:
                break
            if g > 0.0:
                hi = c
            else:
                lo = c
            step = c - g / h if h > 0.0 else math.nan
            nxt = step if lo < step < hi else 0.5 * (lo + hi)
            if abs(nxt - c) <= tol or hi - lo <= tol:
                c = nxt
                break
            c = nxt
        return c

    def _loss(self, y, m):
        d = self.huber_slope
        return d * d * (np.sqrt(1.0 + ((m - y) / d) ** 2) - 1.0)


# -- logistic ---------------------------------------------------------------------------


class _LogisticBase(Objective):
    """Cross-entropy with the sigmoid link: ``p = 1 / (1 + exp(-m))``,
    ``l = -y log p - (1 - y) log(1 - p)`` -> ``g = p - y``,
    ``h = max(p (1 - p), 1e-16)`` (xgboost's clamp).  Labels in [0, 1].

    ``F0 = logit(ybar)``, ``ybar`` the weighted label mean (``class_weights[1] / W`` when
    ``class_weights`` is given; the rows labelled 1 weighted ``scale_pos_weight`` times
    more), clipped to ``[1e-6, 1 - 1e-6]`` like xgboost so that a single-class data set
    gives a finite start.  (xgboost 3.2 starts from one Newton step instead when
    ``scale_pos_weight`` is not 1.)
    """

    bounded_hessian = True  # at most 1/4 (times scale_pos_weight)
    _kernel = staticmethod(_logistic_kernel)

    def _configure(self, *, scale_pos_weight, **_):
        self.scale_pos_weight = _check_scale_pos_weight(scale_pos_weight)

    def __repr__(self):
        if self.scale_pos_weight == 1.0:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(scale_pos_weight={self.scale_pos_weight!r})"

    def _row_factors(self, y):
        # xgboost's scale_pos_weight: a row labelled 1 weighs scale_pos_weight times more
        factors = super()._row_factors(y)
        if self.scale_pos_weight == 1.0:
            return factors
        positive = np.where(y == 1.0, self.scale_pos_weight, 1.0)
        return positive if factors is None else factors * positive

    def weighs_rows(self):
        return super().weighs_rows() or self.scale_pos_weight != 1.0

    def _weighted_stats(self, stats):
        stats = super()._weighted_stats(stats)
        if self.scale_pos_weight == 1.0:
            return stats
        # the rows labelled 1: their weight (and their labels' sum) grows by
        # (scale_pos_weight - 1) * their weight
        extra = (self.scale_pos_weight - 1.0) * stats.positive_weight
        class_weights = stats.class_weights
        if class_weights is not None:
            class_weights = {**class_weights, 1: class_weights.get(1, 0.0) + extra}
        return dataclasses.replace(
            stats, class_weights=class_weights, weight_sum=stats.weight_sum + extra,
            weighted_label_sum=stats.weighted_label_sum + extra,
            positive_weight=stats.positive_weight + extra)

    def _check_domain(self, stats):
        if stats.label_min < 0.0 or stats.label_max > 1.0:
            bad = stats.label_min if stats.label_min < 0.0 else stats.label_max
            raise ValueError(f"objective='{self.name}' needs labels in [0, 1]; got label {bad} "
                             f"(labels in [{stats.label_min}, {stats.label_max}])")
        if stats.class_weights is not None:
            bad = [k for k in stats.class_weights if k not in (0, 1)]
            if bad:
                raise ValueError(f"objective='{self.name}' needs class indices 0 and 1; "
                                 f"got class {bad[0]}")

    def _base_margin(self, stats):
        if stats.class_weights is not None:
            p = stats.class_weights.get(1, 0.0) / stats.weight_sum
        else:
            p = self._weighted_mean(stats)
        return links.logit(min(max(p, _PROBABILITY_CLIP), 1.0 - _PROBABILITY_CLIP))

    def _link(self, b):
        if not 0.0 < b < 1.0:
            raise ValueError(f"base_score={b!r} must be in (0, 1) for objective='{self.name}' "
                             "(it is a probability)")
        return links.logit(b)

    def _inverse_link(self, m):
        return links.sigmoid(m)

    def _loss(self, y, m):
        return np.logaddexp(0.0, m) - y * m


class RegLogistic(_LogisticBase):
    __doc__ = "``reg:logistic``. " + _LogisticBase.__doc__
    name = "reg:logistic"
    kind = REGRESSION
    probability_output = True
    default_metric = "rmse"


class BinaryLogistic(_LogisticBase):
    __doc__ = "``binary:logistic``. " + _LogisticBase.__doc__
    name = "binary:logistic"
    kind = BINARY
    probability_output = True
    default_metric = "logloss"


class BinaryLogitRaw(_LogisticBase):
    """``binary:logitraw``: the gradients of ``binary:logistic``, output = raw margin.

    ``F0 = logit(ybar)`` (the argmin).  xgboost 3.2 differs: it starts from the margin
    ``ybar`` itself (the label mean used as a margin).  ``base_score`` is in output
    space, i.e. it is the margin (identity, any finite value), as in xgboost.
    """

    name = "binary:logitraw"
    kind = BINARY
    default_metric = "logloss"

    def _link(self, b):
        return b

    def _inverse_link(self, m):
        return m.copy()


class BinaryHinge(Objective):
    """``binary:hinge``: the SVM's hinge loss ``l = max(0, 1 - t m)``, ``t = 2y - 1``:
    ``g = -t``, ``h = 1`` for rows inside the margin (``t m < 1``), ``g = 0`` and the
    hessian float32's smallest normal number elsewhere (xgboost's).  Labels 0 and 1.

    The output is the class itself: 1 where ``m > 0``, else 0 (``predict_proba`` is 0 or
    1, as xgboost's).  The start is xgboost's: one Newton step from 0, ``sum w t /
    sum w``, put through that output, so 1 when the weighted labels lean to 1 and 0
    otherwise; ``base_score`` is the margin itself.
    """

    name = "binary:hinge"
    kind = BINARY
    default_metric = "error"
    bounded_hessian = True  # at most the row's weight
    outputs_classes = True
    _kernel = staticmethod(_hinge_kernel)

    def _check_domain(self, stats):
        if stats.label_min < 0.0 or stats.label_max > 1.0 or not stats.all_integer:
            raise ValueError(f"objective='{self.name}' needs labels 0 and 1; got labels in "
                             f"[{stats.label_min}, {stats.label_max}]"
                             + ("" if stats.all_integer else " that are not all integers"))

    def _base_margin(self, stats):
        lean = 2.0 * stats.weighted_label_sum - stats.weight_sum  # sum w t
        return 1.0 if lean > 0.0 else 0.0

    def _inverse_link(self, m):
        return (m > 0.0).astype(np.float64)

    def _loss(self, y, m):
        return np.maximum(0.0, 1.0 - (2.0 * y - 1.0) * m)


# -- log link ---------------------------------------------------------------------------


class _LogLink(Objective):
    """Log link: prediction ``exp(m)``; ``F0 = log(ybar)`` (floored at 1e-6);
    ``base_score`` must be > 0 and maps to ``log(base_score)``."""

    max_margin = math.log(sys.float_info.max)

    def _base_margin(self, stats):
        return math.log(max(self._weighted_mean(stats), _MEAN_FLOOR))

    def _link(self, b):
        if not b > 0.0:
            raise ValueError(f"base_score={b!r} must be > 0 for objective='{self.name}' "
                             "(log link)")
        return math.log(b)

    def _inverse_link(self, m):
        return np.exp(m)

    def _check_domain(self, stats):
        if stats.label_min < 0.0:
            raise ValueError(f"objective='{self.name}' needs non-negative labels; "
                             f"got label {stats.label_min}")


class Poisson(_LogLink):
    """``count:poisson``: ``l = exp(m) - y m``, ``g = exp(m) - y``,
    ``h = exp(m + max_delta_step)``.  Labels >= 0.  ``F0 = log(ybar)``.

    xgboost sets ``max_delta_step = 0.7`` by default for this objective and uses it
    twice: leaf values are clipped to ``[-0.7, 0.7]`` (the tree grower's job) and the
    hessian is multiplied by ``exp(0.7)`` (here, through the ``max_delta_step``
    parameter, 0 by default = the exact hessian).  The caller must default
    ``max_delta_step`` to 0.7 for Poisson and pass it both to the grower and to
    :func:`get_objective` to reproduce xgboost.
    """

    name = "count:poisson"
    kind = REGRESSION
    default_metric = "poisson-nloglik"
    _kernel = staticmethod(_poisson_kernel)

    def _configure(self, *, max_delta_step, **_):
        s = _check_real(max_delta_step, "max_delta_step")
        if not (s >= 0.0 and math.isfinite(s)):
            raise ValueError(f"max_delta_step={max_delta_step!r} must be a finite number >= 0")
        self.max_delta_step = s

    def __repr__(self):
        return f"Poisson(max_delta_step={self.max_delta_step!r})"

    def _kernel_args(self):
        return (self.max_delta_step,)

    def _loss(self, y, m):
        return np.exp(m) - y * m


class Gamma(_LogLink):
    """``reg:gamma``: gamma deviance with log link, ``l = y exp(-m) + m``;
    ``g = 1 - y exp(-m)``, ``h = y exp(-m)``.  Labels > 0.  ``F0 = log(ybar)``.
    (McCullagh & Nelder 1989, ch. 8.)"""

    name = "reg:gamma"
    kind = REGRESSION
    default_metric = "gamma-deviance"
    _kernel = staticmethod(_gamma_kernel)

    def _check_domain(self, stats):
        if not stats.label_min > 0.0:
            raise ValueError(f"objective='{self.name}' needs positive labels; "
                             f"got label {stats.label_min}")

    def _loss(self, y, m):
        return y * np.exp(-m) + m


class Tweedie(_LogLink):
    """``reg:tweedie``: Tweedie negative log-likelihood with log link, power ``rho``.

    ``l = -y (exp((1-rho) m) - 1) / (1-rho) + exp((2-rho) m) / (2-rho)`` (continuous at
    ``rho = 1``, where it is the Poisson loss); ``g = exp((2-rho) m) - y exp((1-rho) m)``,
    ``h = (2-rho) exp((2-rho) m) - (1-rho) y exp((1-rho) m)`` (Yang, Qian & Zou 2018,
    eq. 9).  Labels >= 0, ``rho`` in [1, 2).  ``F0 = log(ybar)``.
    """

    name = "reg:tweedie"
    kind = REGRESSION
    _kernel = staticmethod(_tweedie_kernel)

    def _configure(self, *, tweedie_variance_power, **_):
        rho = _check_real(tweedie_variance_power, "tweedie_variance_power")
        if not 1.0 <= rho < 2.0:
            raise ValueError(f"tweedie_variance_power={tweedie_variance_power!r} "
                             "must be in [1, 2)")
        self.tweedie_variance_power = rho

    def __repr__(self):
        return f"Tweedie(tweedie_variance_power={self.tweedie_variance_power!r})"

    @property
    def default_metric(self):
        return f"tweedie-nloglik@{self.tweedie_variance_power:g}"

    def _kernel_args(self):
        return (self.tweedie_variance_power,)

    def _loss(self, y, m):
        a = 1.0 - self.tweedie_variance_power
        b = 2.0 - self.tweedie_variance_power
        first = y * m if a == 0.0 else y * np.expm1(a * m) / a
        return -first + np.exp(b * m) / b


# -- survival ---------------------------------------------------------------------------


class SurvivalAFT(_LogLink):  # (the log link: predictions are times)
    """``survival:aft``: the accelerated failure time model, ``log T = m + sigma Z``
    (:mod:`daskboost.survival`; Barnwal, Cho & Hocking 2022).

    Each row's labels are the bounds ``[lower, upper]`` of its event time (equal:
    observed; ``upper = inf``: right-censored; ``lower = 0``: left-censored): labels
    ``(2, n)``, ``DMatrix(label_lower_bound=, label_upper_bound=)`` or a y of two
    columns.  ``aft_loss_distribution`` ("normal", "logistic", "extreme") and
    ``aft_loss_distribution_scale`` (``sigma`` > 0) are xgboost's.  The prediction is
    ``exp(m)``, a time.  The start is xgboost's: ``base_score`` 0.5, the margin
    ``log 0.5`` (the argmin of the censored likelihood over a constant needs the rows
    themselves, not label statistics); give ``base_score`` (a time) to start elsewhere.
    """

    name = "survival:aft"
    kind = REGRESSION
    default_metric = "aft-nloglik"
    multi_target = False
    label_columns = 2
    _kernel = staticmethod(_aft_kernel)
    _DEFAULT_START = 0.5  # xgboost's base_score

    def _configure(self, *, aft_loss_distribution, aft_loss_distribution_scale, **_):
        if aft_loss_distribution not in survival.DISTRIBUTIONS:
            raise ValueError(f"aft_loss_distribution={aft_loss_distribution!r} must be one of "
                             f"{', '.join(repr(d) for d in survival.DISTRIBUTIONS)}")
        sigma = _check_real(aft_loss_distribution_scale, "aft_loss_distribution_scale")
        if not (sigma > 0.0 and math.isfinite(sigma)):
            raise ValueError(f"aft_loss_distribution_scale={aft_loss_distribution_scale!r} "
                             "must be a finite number > 0")
        self.aft_loss_distribution = aft_loss_distribution
        self.aft_loss_distribution_scale = sigma

    def __repr__(self):
        return (f"SurvivalAFT(aft_loss_distribution={self.aft_loss_distribution!r}, "
                f"aft_loss_distribution_scale={self.aft_loss_distribution_scale!r})")

    def _kernel_args(self):
        return (survival.DISTRIBUTIONS.index(self.aft_loss_distribution),
                self.aft_loss_distribution_scale)

    def check_labels(self, stats):
        if stats.n_rows == 0 or not stats.weight_sum > 0:
            raise ValueError(f"objective='{self.name}' needs at least one row with positive "
                             f"weight; got n_rows={stats.n_rows}, weight_sum={stats.weight_sum}")
        if stats.targets is None or len(stats.targets) != 2:
            raise ValueError(f"objective='{self.name}' needs each row's interval of event "
                             "times: label_lower_bound and label_upper_bound (DMatrix), or a y "
                             "of two columns, lower and upper bound")
        lower, upper = stats.targets
        if not (lower.label_min >= 0.0 and math.isfinite(lower.label_max)):
            raise ValueError(f"objective='{self.name}': label_lower_bound must be finite and "
                             f">= 0 (0: left-censored); got values in [{lower.label_min}, "
                             f"{lower.label_max}]")
        if not upper.label_min > 0.0:
            raise ValueError(f"objective='{self.name}': label_upper_bound must be > 0 (inf: "
                             f"right-censored); got {upper.label_min}")
        if stats.crossed_bounds:
            raise ValueError(f"objective='{self.name}': label_lower_bound is above "
                             f"label_upper_bound in {stats.crossed_bounds} row(s)")

    def base_margin(self, stats):
        return np.array([math.log(self._DEFAULT_START)])

    def loss(self, y, margin):
        """Each row's negative log-likelihood of its interval ``y`` ``(2, n)``."""
        y = np.asarray(y, dtype=np.float64)
        return survival.interval_losses(y[0], y[1], self._margin(margin)[0],
                                        self.aft_loss_distribution_scale,
                                        survival.DISTRIBUTIONS.index(self.aft_loss_distribution))


# -- softmax ----------------------------------------------------------------------------


class _Softmax(Objective):
    """Softmax cross-entropy over ``K = num_class`` margins (Friedman 2001, sec. 4.6).

    ``p = softmax(m)``, ``l = -log p_y``; ``g_k = p_k - [y == k]``,
    ``h_k = max(2 p_k (1 - p_k), 1e-16)``: xgboost's diagonal hessian, twice the exact
    diagonal ``p_k (1 - p_k)``.  Labels are integers in ``[0, num_class)``.

    ``F0_k = log(pi_k) - mean_j log(pi_j)``, ``pi_k`` the weighted class priors from
    ``stats.class_weights``, clipped below at 1e-6 like xgboost 3.2 (which estimates the
    same vector intercept).  A user ``base_score`` is used as the margin of every class,
    untransformed, as xgboost does.
    """

    needs_class_weights = True
    default_metric = "mlogloss"
    bounded_hessian = True  # at most 1/2
    multi_target = False
    _kernel = staticmethod(_softmax_kernel)

    def _configure(self, *, num_class, **_):
        k = _as_index(num_class)
        if k is None or k < 2:
            raise ValueError(f"num_class={num_class!r} must be an integer >= 2 for "
                             f"objective='{self.name}'")
        self.num_class = k

    def __repr__(self):
        return f"{type(self).__name__}(num_class={self.num_class})"

    def n_outputs(self):
        return self.num_class

    def _check_domain(self, stats):
        K = self.num_class
        if not stats.all_integer:
            raise ValueError(f"objective='{self.name}' needs integer class labels in "
                             f"[0, {K}); got non-integer labels "
                             f"(labels in [{stats.label_min}, {stats.label_max}])")
        if stats.label_min < 0 or stats.label_max >= K:
            bad = stats.label_min if stats.label_min < 0 else stats.label_max
            raise ValueError(f"objective='{self.name}' needs class labels in [0, {K}) "
                             f"(num_class={K}); got label {bad}")
        if stats.class_weights is not None:
            bad = [k for k in stats.class_weights if not 0 <= k < K]
            if bad:
                raise ValueError(f"objective='{self.name}' needs class indices in [0, {K}) "
                                 f"(num_class={K}); got class {bad[0]}")

    def base_margin(self, stats):
        stats = self._weighted_stats(stats)
        if not stats.weight_sum > 0:
            raise ValueError(f"objective='{self.name}': weight_sum={stats.weight_sum} must be > 0")
        if stats.class_weights is None:
            raise ValueError(f"objective='{self.name}' needs stats.class_weights "
                             "(weight sum per class) for its start")
        total = sum(stats.class_weights.values())
        if not total > 0:
            raise ValueError(f"objective='{self.name}': class weights sum to {total}")
        prior = np.array([stats.class_weights.get(k, 0.0) for k in range(self.num_class)],
                         dtype=np.float64) / total
        log_prior = np.log(np.maximum(prior, _PROBABILITY_CLIP))
        return log_prior - log_prior.mean()

    def loss(self, y, margin):
        m = self._margin(margin)
        y = np.asarray(y).astype(np.int64)
        top = m.max(axis=0)
        lse = top + np.log(np.exp(m - top).sum(axis=0))
        return lse - m[y, np.arange(m.shape[1])]


class SoftProb(_Softmax):
    __doc__ = ("``multi:softprob``: predictions are ``(n, K)`` probabilities. "
               + _Softmax.__doc__)
    name = "multi:softprob"
    kind = MULTICLASS
    probability_output = True

    def transform(self, margin):
        return links.softmax(self._margin(margin))


class SoftMax(_Softmax):
    __doc__ = ("``multi:softmax``: predictions are the ``(n,)`` argmax class index "
               "(float64). " + _Softmax.__doc__)
    name = "multi:softmax"
    kind = MULTICLASS

    def transform(self, margin):
        return self.class_index(margin)


# -- learning to rank ---------------------------------------------------------------------

_PAIR_METHODS = {"topk": lambdarank.TOPK, "mean": lambdarank.MEAN}
# ndcg's relevance labels with exponential gains 2^y - 1: at most this (xgboost's)
MAX_EXP_GAIN_LABEL = 31


def ranking_settings(**given):
    """xgboost's lambdarank parameters checked, with their defaults where not given
    (``RANKING_DEFAULTS``; ``lambdarank_num_pair_per_sample`` settled: 32 for "topk", 1
    for "mean"); ValueError naming the parameter otherwise.  The one check of them, for
    the estimators' parameters and the ranking objectives."""
    settings = {**RANKING_DEFAULTS, **given}
    method = settings["lambdarank_pair_method"]
    if method not in _PAIR_METHODS:
        raise ValueError(f"lambdarank_pair_method={method!r:.40} must be 'topk' or 'mean'")
    k = settings["lambdarank_num_pair_per_sample"]
    if k is None:
        k = lambdarank.DEFAULT_TOP_K if method == "topk" else lambdarank.DEFAULT_MEAN_PAIRS
    elif isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"lambdarank_num_pair_per_sample={k!r:.40} must be an integer >= 1")
    settings["lambdarank_num_pair_per_sample"] = int(k)
    for name in ("ndcg_exp_gain", "lambdarank_normalization",
                 "lambdarank_score_normalization", "lambdarank_unbiased"):
        if not isinstance(settings[name], (bool, np.bool_)):
            raise ValueError(f"{name}={settings[name]!r:.40} must be True or False")
        settings[name] = bool(settings[name])
    if settings["lambdarank_unbiased"]:
        raise ValueError("lambdarank_unbiased=True (xgboost's position-bias estimation) is "
                         "not implemented; leave it False")
    return settings


class _LambdaRank(Objective):
    """LambdaMART (Burges 2010) within query groups: see :mod:`daskboost.lambdarank`.

    The rows of a query are consecutive, all in one partition (``query_groups``); the
    gradients of a partition come from its queries alone (``query_gradients``), so the
    objective needs the rows' query groups, which the plain ``gradients`` does not have.
    Parameters (xgboost's): ``lambdarank_pair_method`` ("topk" or "mean"),
    ``lambdarank_num_pair_per_sample`` (k), ``ndcg_exp_gain``,
    ``lambdarank_normalization``, ``lambdarank_score_normalization``;
    ``lambdarank_unbiased`` (position-bias estimation) is not implemented.

    The start is 0: the loss of a query depends on the differences of its scores only,
    so every constant is a minimiser (xgboost fits an intercept of the order of 1e-9
    from float rounding).  The data's queries (``set_queries``) fix each query's place
    among all of them (the random draws of "mean") and ``n_queries / sum of the query
    weights``, which multiplies every gradient as in xgboost.
    """

    kind = RANKING
    ranks_queries = True
    multi_target = False
    _metric = None  # lambdarank.PAIRWISE / NDCG / MAP
    _metric_name = "ndcg"

    def _configure(self, **params):
        settings = ranking_settings(**{k: v for k, v in params.items()
                                       if k in RANKING_DEFAULTS})
        self.pair_method = settings["lambdarank_pair_method"]
        self.num_pair_per_sample = settings["lambdarank_num_pair_per_sample"]
        self.exp_gain = settings["ndcg_exp_gain"]
        self.normalization = settings["lambdarank_normalization"]
        self.score_normalization = settings["lambdarank_score_normalization"]
        self.first_queries = {}   # a partition's first row -> index of its first query
        self.n_queries = 0
        self.weight_norm = 1.0

    def __repr__(self):
        return (f"{type(self).__name__}(pair_method={self.pair_method!r}, "
                f"num_pair_per_sample={self.num_pair_per_sample})")

    @property
    def default_metric(self):
        """xgboost's: ``ndcg@k`` (``map@k`` for ``rank:map``) with "topk", plain
        ``ndcg`` / ``map`` with "mean" (``default_metric_top_k``)."""
        if self.pair_method == "topk":
            return f"{self._metric_name}@{self.num_pair_per_sample}"
        return self._metric_name

    def default_metric_top_k(self, name):
        """The documents per query the metric ``name`` ranks when it is the default
        metric of a "mean" fit: xgboost's ``ndcg`` then ranks them all (its ``map`` the
        first 32, as any plain ``map``); None for any other metric."""
        if self.pair_method == "mean" and name == "ndcg" and self._metric_name == "ndcg":
            return sys.maxsize
        return None

    def _base_margin(self, stats):
        return 0.0

    def set_queries(self, stats, row_counts):
        """Take the data's queries: ``stats.query_counts`` (per partition) and
        ``stats.query_weight_sum``; ``row_counts``: the rows of each partition (a
        partition's states know their first row)."""
        if stats.query_counts is None:
            raise ValueError(f"objective='{self.name}' ranks the rows of each query: give "
                             "each row's query id (qid=...) or the query groups' sizes "
                             "(group=...)")
        first_rows = np.cumsum([0, *row_counts[:-1]])
        first_queries = np.cumsum([0, *stats.query_counts[:-1]])
        self.first_queries = {int(r): int(q) for r, q, n in
                              zip(first_rows, first_queries, row_counts) if n}
        self.n_queries = int(sum(stats.query_counts))
        self.weight_norm = (self.n_queries / stats.query_weight_sum
                            if stats.query_weight_sum > 0 else 1.0)

    def gradients(self, margin, y, weight):
        raise ValueError(f"objective='{self.name}' ranks the rows of each query: its "
                         "gradients need the query groups (query_gradients)")

    def query_gradients(self, margin, y, weight, group_ptr, first_row, iteration):
        """The gradients of a partition's queries (``group_ptr``), ``(1, n)`` float32:
        ``first_row``, the partition's first row among all the data's (which places its
        queries among the data's: ``set_queries``); ``iteration``: the boosting round
        (the draws of "mean")."""
        m = self._margin(margin)[0]
        labels = np.ascontiguousarray(y, dtype=np.float32)
        query_weights = (np.empty(0, np.float32) if weight is None
                         else np.asarray(weight, dtype=np.float32)[group_ptr[:-1]])
        grad = np.empty((1, len(m)), dtype=np.float32)
        hess = np.empty((1, len(m)), dtype=np.float32)
        if not len(m):  # (an empty partition: no query of its own)
            return grad, hess
        lambdarank.lambda_gradients(
            self._metric, _PAIR_METHODS[self.pair_method], self.num_pair_per_sample,
            self.exp_gain, self.score_normalization, self.normalization, m, labels,
            np.asarray(group_ptr, dtype=np.int64), self.first_queries[int(first_row)],
            self.n_queries, int(iteration), query_weights,
            float(self.weight_norm), grad[0], hess[0])
        return grad, hess

    def _loss(self, y, m):
        raise ValueError(f"objective='{self.name}' has no loss per row (it ranks the rows "
                         "of each query)")


class RankPairwise(_LambdaRank):
    """``rank:pairwise``: RankNet's pairwise logistic loss (every pair's change 1). """
    __doc__ += _LambdaRank.__doc__
    name = "rank:pairwise"
    _metric = lambdarank.PAIRWISE


class RankNDCG(_LambdaRank):
    """``rank:ndcg``: LambdaMART with the change of NDCG of each pair swapped; labels
    are whole numbers in [0, 31] with ``ndcg_exp_gain`` (gains ``2^y - 1``). """
    __doc__ += _LambdaRank.__doc__
    name = "rank:ndcg"
    _metric = lambdarank.NDCG

    def _check_domain(self, stats):
        if self.exp_gain and not (stats.all_integer and stats.label_min >= 0
                                  and stats.label_max <= MAX_EXP_GAIN_LABEL):
            raise ValueError(f"objective='rank:ndcg' with ndcg_exp_gain=True needs relevance "
                             f"labels that are whole numbers in [0, {MAX_EXP_GAIN_LABEL}]; got "
                             f"labels in [{stats.label_min}, {stats.label_max}]"
                             f"{'' if stats.all_integer else ', not all whole'} (or set "
                             "ndcg_exp_gain=False for gains equal to the labels)")


class RankMAP(_LambdaRank):
    """``rank:map``: LambdaMART with the change of mean average precision; labels are
    0 or 1 (relevant). """
    __doc__ += _LambdaRank.__doc__
    name = "rank:map"
    _metric = lambdarank.MAP
    _metric_name = "map"

    def _check_domain(self, stats):
        if not (stats.all_integer and stats.label_min >= 0 and stats.label_max <= 1):
            raise ValueError(f"objective='rank:map' needs labels 0 or 1 (relevant or not); "
                             f"got labels in [{stats.label_min}, {stats.label_max}]")


def quantile_levels(value):
    """``quantile_alpha`` checked: a tuple of its levels, each in (0, 1) (one number, or
    xgboost's non-empty list); ValueError naming the parameter (and the position)."""
    several = isinstance(value, (list, tuple, np.ndarray))
    levels = np.asarray(value, dtype=object) if several else np.array([value], dtype=object)
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError(f"quantile_alpha={value!r:.80} must be a number in (0, 1) or a "
                         "non-empty list of such")
    alphas = []
    for i, level in enumerate(levels):
        name = f"quantile_alpha[{i}]" if several else "quantile_alpha"
        a = _check_real(level, name)
        if not 0.0 < a < 1.0:
            raise ValueError(f"{name}={level!r} must be in (0, 1)")
        alphas.append(a)
    return tuple(alphas)


def _check_real(value, name):
    if isinstance(value, bool):
        raise ValueError(f"{name}={value!r} must be a number")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}={value!r:.40} must be a number") from None
    if math.isnan(v):
        raise ValueError(f"{name}={value!r} must be a number")
    return v


OBJECTIVES = {cls.name: cls for cls in (
    SquaredError, AbsoluteError, PseudoHuberError, QuantileError,
    RegLogistic, BinaryLogistic, BinaryLogitRaw, BinaryHinge,
    Poisson, Gamma, Tweedie, SquaredLogError, SurvivalAFT,
    SoftProb, SoftMax,
    RankPairwise, RankNDCG, RankMAP,
)}
# the objectives that weigh the rows labelled 1 by ``scale_pos_weight`` (xgboost also
# applies it to ``reg:squarederror`` rows whose label is exactly 1; here that is refused)
LOGISTIC_OBJECTIVES = tuple(name for name, cls in OBJECTIVES.items()
                            if issubclass(cls, _LogisticBase))


def _check_scale_pos_weight(value):
    v = _check_real(value, "scale_pos_weight")
    if not (v > 0.0 and math.isfinite(v)):
        raise ValueError(f"scale_pos_weight={value!r} must be a finite number > 0")
    return v


def takes_label_columns(name):
    """Whether the objective called ``name`` reads several labels a row for one output
    (``label_columns``: survival:aft's bounds), rather than one label per target."""
    cls = OBJECTIVES.get(name) if isinstance(name, str) else None
    return cls is not None and cls.label_columns is not None


def check_scale_pos_weight(objective, scale_pos_weight):
    """Raise ValueError when ``scale_pos_weight`` is not 1 and ``objective`` (a name or
    a callable) does not use it."""
    if scale_pos_weight != 1.0 and not (isinstance(objective, str)
                                        and objective in LOGISTIC_OBJECTIVES):
        name = objective if isinstance(objective, str) else "a custom objective"
        raise ValueError(f"scale_pos_weight={scale_pos_weight!r} weighs the positive rows of "
                         f"the logistic objectives ({', '.join(LOGISTIC_OBJECTIVES)}); "
                         f"objective={name!r} does not use it")


def objective_kind(name):
    """The ``kind`` of the objective called ``name``; None for a name not in ``OBJECTIVES``
    (``"custom"``, a typo, a callable)."""
    cls = OBJECTIVES.get(name) if isinstance(name, str) else None
    return None if cls is None else cls.kind


def is_classification(name):
    """The objective called ``name`` is a ``BINARY`` or ``MULTICLASS`` one (False for a
    name not in ``OBJECTIVES``)."""
    return objective_kind(name) in (BINARY, MULTICLASS)


def objectives_of_kind(*kinds, probability_output=None):
    """The names of the objectives of the given kinds, in the order of ``OBJECTIVES``;
    only those whose ``probability_output`` is the one given, unless it is None."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"kind={unknown[0]!r} is not one of {KINDS}")
    return tuple(name for name, cls in OBJECTIVES.items() if cls.kind in kinds and (
        probability_output is None or cls.probability_output == probability_output))


def regressor_objectives():
    """The objectives whose output estimates the label itself, for a regressor: every
    ``REGRESSION`` one, and the ``BINARY`` ones whose output is a probability
    (``binary:logistic``: the mean of labels in [0, 1]), in the order of ``OBJECTIVES``."""
    return tuple(name for name, cls in OBJECTIVES.items()
                 if cls.kind == REGRESSION or (cls.kind == BINARY and cls.probability_output))


def classifier_objectives():
    """The objectives a classifier trains: the ``BINARY`` and ``MULTICLASS`` ones."""
    return objectives_of_kind(BINARY, MULTICLASS)


def get_objective(name, **params):
    """Return the objective called ``name`` (xgboost's spelling), configured by ``params``.

    Parameters
    ----------
    name : str
        One of ``OBJECTIVES``.
    **params
        ``num_class``, ``huber_slope``, ``quantile_alpha``, ``tweedie_variance_power``,
        ``max_delta_step`` (see :class:`Objective`); an objective ignores those it does
        not use.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the valid ones) or an invalid parameter.
    """
    try:
        cls = OBJECTIVES[name]
    except (KeyError, TypeError):
        valid = ", ".join(repr(n) for n in OBJECTIVES)
        raise ValueError(
            f"objective={name!r} is not supported; valid objectives: {valid}") from None
    return cls(**params)


class CustomObjective:
    """A user's ``objective(y_true, y_pred) -> (grad, hess)``, applied partition by partition.

    As in xgboost's scikit-learn API, ``y_pred`` holds raw margins: ``(n,)``, or
    ``(n, K)`` with K outputs (multiclass; several targets, ``y_true`` then ``(n, K)``
    too); the function returns gradients and hessians
    of the same shape (or flat, length n*K), which are multiplied by the sample weights.
    Hessians may be negative, as in xgboost: a node whose hessian sum is not positive
    gets weight 0 and no split (``splitting.leaf_weight``).
    The start is ``base_score`` if given, else xgboost's: its default ``base_score``
    0.5 in the output space of the objective it puts in place of the function, so a
    margin of 0.5 for every output (``reg:squarederror``, ``multi:softprob``), 0 for a
    binary classifier (``binary:logistic``'s logit of 0.5); predictions are the raw
    margins (classifiers still turn them into probabilities with the sigmoid/softmax).
    Wrong shapes and non-finite values raise ValueError at the first round, before a
    tree is built from them.
    """

    name = "custom"
    leaf_quantiles = None

    def __init__(self, func=None, num_class=None, classifier=False, num_target=1, **_ignored):
        self.func = func
        self.num_target = int(num_target)
        self._n_outputs = (int(num_class) if num_class and num_class > 2
                           else self.num_target)
        self._binary_classifier = classifier and self._n_outputs == 1
        if self._n_outputs > 1:
            self.default_metric = "mlogloss"
        else:
            self.default_metric = "logloss" if classifier else "rmse"

    def n_outputs(self):
        return self._n_outputs

    def check_labels(self, stats):
        pass

    def base_margin(self, stats):
        return np.full(self._n_outputs, 0.0 if self._binary_classifier else 0.5)

    def margin_from_base_score(self, base_score):
        return np.full(self._n_outputs, float(base_score))

    def gradients(self, margin, y, weight):
        if self.func is None:
            raise ValueError("this model was trained with a custom objective that was not "
                             "saved with it; pass the function again to continue training")
        K, n = margin.shape
        y_pred = margin[0].copy() if K == 1 else margin.T.copy()
        y = np.asarray(y, dtype=np.float64)  # (several targets: (n, K) as y_pred)
        result = self.func(y.T.copy() if y.ndim == 2 else y, y_pred)
        if not isinstance(result, tuple) or len(result) != 2:
            raise ValueError(f"custom objective {_callable_name(self.func)} must return "
                             f"(grad, hess); got {type(result).__name__}")
        out = []
        for what, values in zip(("grad", "hess"), result):
            values = np.asarray(values, dtype=np.float64)
            if values.size != K * n:
                raise ValueError(
                    f"custom objective {_callable_name(self.func)} returned {what} with shape "
                    f"{values.shape}; expected {y_pred.shape} (one value per row and output)")
            values = values.reshape(y_pred.shape)
            values = values[None, :] if K == 1 else values.T
            if not np.isfinite(values).all():
                raise ValueError(f"custom objective {_callable_name(self.func)} returned "
                                 f"non-finite {what} values")
            values = values.astype(np.float32)
            if weight is not None:
                values = values * np.asarray(weight, dtype=np.float64)[None, :]
            out.append(np.ascontiguousarray(values, dtype=gradient_dtype(weight)))
        return out[0], out[1]

    def transform(self, margin):
        return margin[0] if margin.shape[0] == 1 else margin.T

    def single_target(self):
        """One target's objective (metrics score the targets one by one)."""
        single = copy.copy(self)
        single.num_target = single._n_outputs = 1
        return single


def _callable_name(func):
    return getattr(func, "__name__", repr(func))
