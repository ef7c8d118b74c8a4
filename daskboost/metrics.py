"""Evaluation metrics, computed the Dask way: partial results per partition, tree-reduced.

Every metric is split into three steps so that rows never leave their partition (but
for a user's function: ``WholeRowsMetric``):

``partial(y, margin, weight, objective)``
    runs on one partition and returns a small numpy array whose shape does not depend
    on the number of rows (two numbers for the averaged losses, two histograms of
    ``AUC_BINS`` bins for ``auc``/``aucpr``);
``combine(a, b)``
    adds two partial results (elementwise ``a + b``); the caller reduces them pairwise
    in a fixed order (``0+1, 2+3, ...``, then again; see :func:`tree_reduce`), so the
    same data and partitioning give the same bits on every scheduler;
``finalize(total)``
    turns the reduced total into the metric value (a float).

The per-partition inputs are the margins ``(K, n)`` (``K = 1`` except for multiclass
and multi-quantile models), the encoded labels ``(n,)`` (0/1 for binary, ``0..K-1``
for multiclass) and the sample weights ``(n,)`` or ``None``.

Definitions follow xgboost's metrics of the same name (``src/metric`` in xgboost 3.x),
weighted by the sample weights as xgboost is: an averaged metric is
``sum_i w_i l(y_i, p_i) / sum_i w_i`` (RMSE, RMSLE: its square root), and a metric over
no rows (or zero total weight) is ``0.0`` as in xgboost (``wsum == 0 ? esum : ...``).
Predictions ``p`` are in output space: ``objective.transform(margin)`` for
single-output models (an ``objective`` of ``None`` means the margins already are the
predictions), and the softmax of the margins for ``mlogloss``/``merror`` whatever the
multiclass objective's own output is (xgboost evaluates ``multi:softmax`` on
probabilities too).  Everything is float64 here; xgboost computes the per-row losses in
float32, which accounts for differences in the 7th significant digit.

``auc`` and ``aucpr``
    Binary only (a ``K > 1`` margin or a ``multi:`` objective raises ``ValueError``;
    xgboost's one-vs-rest multiclass AUC is not implemented).  The partial result is a
    pair of weighted histograms, of the positive and of the negative class, over
    ``AUC_BINS = 2**16`` equal bins of the predicted probability in ``[0, 1]`` (bin
    ``min(floor(p * 2**16), 2**16 - 1)``).  Rows in one bin count as tied:

    * ``auc`` is the trapezoid area under the ROC curve through the bin boundaries, which
      counts a (positive, negative) pair as 1 when the positive's bin is higher and 1/2
      in the same bin.  On rows whose scores are tied exactly, that is sklearn's and
      xgboost's tie rule, so scores with few distinct values (in distinct bins) give
      their exact AUC.  Pairs in the same bin with different scores are the only error:
      ``|auc - exact| <= sum_b pos_b * neg_b / (2 * P * N)`` (``P``, ``N`` the class
      weight totals), which :meth:`BinaryAUC.error_bound` computes from the histograms.
      For scores with bounded class densities this is ``O(1 / AUC_BINS)`` (about
      ``1e-5`` for 100k logistic scores); it grows only when both classes crowd into the
      same 1/65536-wide interval of probability.  A partial result is ``2 * 2**16``
      float64 = 1 MiB; unweighted counts are integers, so the total, and the value, do
      not depend on the partitioning at all.  Why ``2**16``: the bound falls like
      ``1 / AUC_BINS`` while the partial grows like it; ``2**16`` keeps the bound about
      100 times under the 1e-3 to which AUCs are usually read, at 1 MiB per partition
      and evaluation (a finer grid buys digits that early stopping does not use).
    * ``aucpr`` is xgboost's area under the precision-recall curve: between consecutive
      thresholds (here bins) the curve is interpolated as in Davis & Goadrich (2006),
      true and false positives growing linearly together, and the precision is
      integrated exactly along that segment.  This is not sklearn's
      ``average_precision_score``, which is a step function (each positive counts with
      the precision at its threshold).  On continuous scores the two differ only by the
      interpolation within each positive step (xgboost's value is the lower one, by
      ``O(log(n) / P)``; measured 2e-6 to 5e-4 for 2k to 100k rows, of which the
      binning accounts for less than 1e-5); on tied scores they can differ much more (a
      tie group with both classes is one interpolated segment in xgboost, one step in
      sklearn).
    * Both are the AUC of all rows together.  xgboost's own distributed evaluation
      (``xgboost.dask``) instead divides the sum of the workers' unnormalised areas by
      the sum of their ``P_w * N_w`` (ROC), or averages the workers' PR-AUCs, so its
      value depends on how the rows are spread over the workers.
    * One class only (or no rows): ``nan`` and a ``RuntimeWarning``, as xgboost
      (``nan`` plus "Dataset is empty, or contains only positive or negative samples").
    * Scores: for the objectives whose output is a probability (``binary:logistic``,
      ``reg:logistic``; ``probability_output`` in :mod:`daskboost.objectives`) and for
      ``None`` the predictions themselves, which must lie in ``[0, 1]``; for any other
      single-output objective ``sigmoid(margin)``, which ranks rows as the objective's
      increasing output transform does (identity, exp), with the resolution of the grid
      on the log-odds scale.

:class:`CustomMetric` wraps a user function ``f(y_true, y_pred)`` that is in general
not decomposable; see its docstring for what is reported.
"""

import math
import warnings

import numba
import numpy as np

from .fast_exp import exp_nonpositive
from .fast_log import log1p_unit
from .links import class_index, sigmoid_direct
from . import lambdarank
from .objectives import BINARY, MULTICLASS, REGRESSION, objective_kind, objectives_of_kind
from .reduction import reduce_all
from .verbosity import DaskBoostWarning

AUC_BINS = 2 ** 16

# Single-output objectives whose output (``objective.transform``) is a probability, i.e.
# ``sigmoid(margin)``: already a score in [0, 1].
_SIGMOID_OUTPUTS = frozenset(objectives_of_kind(REGRESSION, BINARY, probability_output=True))

_LOG_EPS = 1e-16          # xgboost's clip in logloss, mlogloss and poisson-nloglik
_GAMMA_MIN_PRED = 1e-6    # xgboost's clip of the prediction in gamma-nloglik


# ---------------------------------------------------------------------------------------
# the protocol
# ---------------------------------------------------------------------------------------
class Metric:
    """One evaluation metric as ``partial`` (per partition), ``combine``, ``finalize``.

    ``name`` is the name as given (``"error@0.7"``); ``higher_is_better`` tells early
    stopping which way is better.
    """

    name = None
    higher_is_better = False
    # the metric ranks the rows of each query group: ``partial`` takes the groups too
    # (``partial_of``)
    ranks_queries = False

    def partial(self, y, margin, weight, objective):
        """The partition's partial result: a small fixed-size float64 array."""
        raise NotImplementedError

    def row_losses(self, y, margin, objective):
        """For a metric whose partial result is ``[sum w * loss, sum w]`` over the rows:
        the rows' losses, (n,); None for any other metric.  (Cross-validation sums them
        per fold in one pass over the rows: ``fold_states``.)"""
        return None

    def combine(self, a, b):
        """Add two partial results (associative; the shape stays fixed)."""
        return a + b

    def finalize(self, total):
        """The metric value from the reduced partial results."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


def tree_reduce(metric, partials):
    """Combine ``partials`` in the fixed pairwise order of ``reduction``."""
    if not partials:
        raise ValueError("tree_reduce needs at least one partial result")
    return reduce_all(partials, metric.combine)


def evaluate(metric, blocks, objective):
    """The metric over in-memory ``blocks``, a list of ``(y, margin, weight)`` tuples
    (or ``(y, margin, weight, group_ptr)``: the block's query groups, for a metric that
    ranks within them).

    Runs exactly what the distributed evaluation runs: ``partial`` per block, the fixed
    pairwise reduction, ``finalize``.  ``metric`` may be a name (see :func:`get_metric`).
    """
    if not isinstance(metric, Metric):
        metric = get_metric(metric, objective)
    blocks = list(blocks)
    if not blocks:
        raise ValueError("evaluate needs at least one block of (y, margin, weight)")
    partials = [partial_of(metric, *block[:3], objective, block[3] if len(block) > 3 else None)
                for block in blocks]
    return float(metric.finalize(tree_reduce(metric, partials)))


# ---------------------------------------------------------------------------------------
# input handling shared by the metrics
# ---------------------------------------------------------------------------------------
def _as_margin(margin, n):
    m = np.asarray(margin, dtype=np.float64)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    if m.ndim != 2 or m.shape[1] != n:
        raise ValueError(f"margin must have shape (K, {n}) for {n} labels; got {np.shape(margin)}")
    return m


def _inputs(y, margin, weight):
    """Labels (``(n,)``; a multi-target y's ``(n_targets, n)``), margins ``(K, n)`` and
    weights as float64 arrays, checked against each other."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 2:
        y = y.reshape(-1)
    n = y.shape[-1]
    m = _as_margin(margin, n)
    if y.ndim == 2 and y.shape[0] != m.shape[0]:
        raise ValueError(f"y has {y.shape[0]} targets for margins of {m.shape[0]} outputs")
    if weight is not None:
        weight = np.asarray(weight, dtype=np.float64).reshape(-1)
        if weight.shape[0] != n:
            raise ValueError(f"weight has {weight.shape[0]} entries for {n} labels")
    return y, m, weight


def _one_label_per_row(metric_name, y):
    """ValueError unless ``y`` holds one label per row (not a multi-target y)."""
    if y.ndim == 2:
        raise ValueError(f"eval_metric={metric_name!r} scores one label per row; y has "
                         f"{y.shape[0]} targets (xgboost has no multi-target {metric_name!r} "
                         "either): use an elementwise metric such as 'rmse' or 'logloss'")


def _objective_name(objective):
    return getattr(objective, "name", None)


def _single_output(metric_name, m, objective):
    """Predictions ``(n,)`` in output space for a single-output margin ``(1, n)``."""
    if m.shape[0] != 1:
        raise ValueError(f"eval_metric={metric_name!r} needs a single-output model; "
                         f"got margins for {m.shape[0]} outputs")
    if objective is None:
        return m[0]
    return np.asarray(objective.transform(m), dtype=np.float64).reshape(-1)


def output_space(m, objective):
    """Predictions as xgboost's sklearn API passes them: ``(n,)`` or ``(n, K)``."""
    k, n = m.shape
    out = m if objective is None else np.asarray(objective.transform(m), dtype=np.float64)
    if k == 1:
        return out.reshape(-1)
    if out.shape != (n, k) and out.shape == (k, n):
        out = out.T
    return out


def _check_binary_labels(metric_name, y):
    if y.size and (y.min() < 0.0 or y.max() > 1.0):
        raise ValueError(f"eval_metric={metric_name!r} needs labels in [0, 1]; "
                         f"got labels in [{y.min()}, {y.max()}]")


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _sigmoid_logloss(y, margin, max_loss):
    """Each row's log loss from its margin: ``y * -log max(p, eps) + (1 - y) *
    -log max(1 - p, eps)``, a term with a zero coefficient 0.  ``-log p = softplus(-m)``
    and ``-log(1 - p) = softplus(m)``, where ``softplus(x) = max(x, 0) + log1p(exp(-|x|))``
    (numpy's ``logaddexp(0, x)``, term for term): the two share one ``exp`` and one
    ``log1p``, and a 0/1 label needs only one of them (numpy's two ``logaddexp`` over the
    whole array took ~70% of an eval set's pass).  The ``exp`` and the ``log1p`` are
    ``fast_exp``'s and ``fast_log``'s (each within 1 ulp of the C library's), so that
    the loop vectorises: 22 -> ~10 ns a row (the C library's two calls took most of a
    binary ``cv``'s evaluation)."""
    loss = np.empty(y.shape[0], dtype=np.float64)
    for i in range(y.shape[0]):
        m = margin[i]
        shared = log1p_unit(exp_nonpositive(-abs(m)))
        pos = min(max(-m, 0.0) + shared, max_loss)   # -log max(p, eps)
        neg = min(max(m, 0.0) + shared, max_loss)    # -log max(1 - p, eps)
        yi = y[i]
        loss[i] = (0.0 if yi == 0.0 else yi * pos) + (0.0 if yi == 1.0 else (1.0 - yi) * neg)
    return loss


@numba.njit(nogil=True, cache=True)
def _softmax_logloss(labels, margin, max_loss):
    """Each row's ``min(-log p_y, max_loss)`` from its (K,) margins, as
    ``links.log_softmax`` computes ``log p_y``: ``(m_y - top) - log sum_k exp(m_k -
    top)``, the sum in class order, ``top`` the row's largest margin; row by row, with
    no (K, n) temporaries."""
    loss = np.empty(labels.shape[0], dtype=np.float64)
    for i in range(labels.shape[0]):
        top = margin[0, i]
        for k in range(1, margin.shape[0]):
            top = max(top, margin[k, i])
        total = 0.0
        for k in range(margin.shape[0]):
            total += math.exp(margin[k, i] - top)
        loss[i] = min(-((margin[labels[i], i] - top) - math.log(total)), max_loss)
    return loss


def _weighted_mean(total):
    """``sum w l / sum w`` from the partial ``[sum w l, sum w]`` (the sum when no
    weight)."""
    loss_sum, weight_sum = float(total[0]), float(total[1])
    return loss_sum if weight_sum == 0 else loss_sum / weight_sum


def _weighted_sums(loss, weight):
    if weight is None:
        return np.array([loss.sum(), float(loss.shape[0])])
    return np.array([(loss * weight).sum(), weight.sum()])


# ---------------------------------------------------------------------------------------
# averaged losses: partial = [sum w * loss, sum w]
# ---------------------------------------------------------------------------------------
class _MeanLoss(Metric):
    """``sum w l(y, p) / sum w`` with ``l`` the row loss (``0`` when ``sum w == 0``)."""

    binary_labels = False

    def __init__(self, name):
        self.name = name

    def row_loss(self, y, pred):
        raise NotImplementedError

    def partial(self, y, margin, weight, objective):
        y, m, weight = _inputs(y, margin, weight)
        return _weighted_sums(self._losses(y, m, objective), weight)

    def row_losses(self, y, margin, objective):
        y, m, _ = _inputs(y, margin, None)
        return self._losses(y, m, objective)

    def _losses(self, y, m, objective):
        if y.ndim == 2:
            return self._target_losses(y, m, objective)
        return self._label_losses(y, m, objective)

    def _label_losses(self, y, m, objective):
        """Each row's loss, one label per row."""
        pred = _single_output(self.name, m, objective)
        if self.binary_labels:
            _check_binary_labels(self.name, y)
        return self.row_loss(y, pred)

    def _target_losses(self, y, m, objective):
        """A multi-target y ``(T, n)``: each row's loss averaged over its targets, so
        that the weighted mean is xgboost's, over every (row, target) with the row's
        weight: ``sum_i w_i sum_t l_it / (T sum_i w_i)``."""
        single = None if objective is None else objective.single_target()
        losses = self._label_losses(y[0], m[0:1], single)
        for t in range(1, y.shape[0]):
            losses = losses + self._label_losses(y[t], m[t:t + 1], single)
        return losses / y.shape[0]

    def finalize(self, total):
        return _weighted_mean(total)


class _RootMeanLoss(_MeanLoss):
    def finalize(self, total):
        return math.sqrt(super().finalize(total))


class RMSE(_RootMeanLoss):
    def row_loss(self, y, pred):
        return (y - pred) ** 2


class RMSLE(_RootMeanLoss):
    def row_loss(self, y, pred):
        return (np.log1p(y) - np.log1p(pred)) ** 2


class MAE(_MeanLoss):
    def row_loss(self, y, pred):
        return np.abs(y - pred)


class MAPE(_MeanLoss):
    """``|y - p| / |y|``; a zero label gives ``inf`` (sklearn divides by ``max(|y|, eps)``)."""

    def row_loss(self, y, pred):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.abs((y - pred) / y)


class MPHE(_MeanLoss):
    """Mean pseudo-Huber error ``s^2 (sqrt(1 + ((y - p) / s)^2) - 1)``, slope ``s``."""

    def __init__(self, name, slope=1.0):
        super().__init__(name)
        self.slope = _positive_float("huber_slope", slope)

    def row_loss(self, y, pred):
        s = self.slope
        return s * s * (np.sqrt(1.0 + ((y - pred) / s) ** 2) - 1.0)


class LogLoss(_MeanLoss):
    """Binary ``-y log p - (1 - y) log(1 - p)``, ``p`` and ``1 - p`` clipped below at 1e-16.

    xgboost's form: a term with a zero coefficient is 0 (so soft labels work), and each
    logarithm's argument is at least 1e-16 (clipping ``p`` to ``[1e-16, 1 - 1e-16]``,
    written so that it also holds in float64, where ``1 - 1e-16`` rounds to 1).  For the
    sigmoid objectives the logarithms are taken from the margin, ``log p = -softplus(-m)``
    and ``log(1 - p) = -softplus(m)``, so that ``1 - p`` does not cancel for large margins
    (xgboost's float32 ``p`` rounds to 1 from a margin of about 17 on, and a negative row
    there costs the clip value 36.8 instead of about the margin).
    """

    binary_labels = True

    def _label_losses(self, y, m, objective):
        if _objective_name(objective) not in _SIGMOID_OUTPUTS:
            return super()._label_losses(y, m, objective)
        if m.shape[0] != 1:
            _single_output(self.name, m, objective)          # raises
        _check_binary_labels(self.name, y)
        return _sigmoid_logloss(y, m[0], -math.log(_LOG_EPS))

    def row_loss(self, y, pred):
        with np.errstate(divide="ignore", invalid="ignore"):
            pos = np.where(y == 0.0, 0.0, y * np.log(np.maximum(pred, _LOG_EPS)))
            neg = np.where(y == 1.0, 0.0, (1.0 - y) * np.log(np.maximum(1.0 - pred, _LOG_EPS)))
        return -(pos + neg)


class Error(_MeanLoss):
    """Binary error: a row counts as positive when ``p > threshold`` (strictly)."""

    binary_labels = True

    def __init__(self, name, threshold=0.5):
        super().__init__(name)
        self.threshold = threshold

    def row_loss(self, y, pred):
        return np.where(pred > self.threshold, 1.0 - y, y)


@numba.njit(nogil=True, cache=True)
def _poisson_nloglik(y, pred, out):
    for i in range(y.shape[0]):
        p = max(pred[i], _LOG_EPS)
        out[i] = math.lgamma(y[i] + 1.0) + p - math.log(p) * y[i]


class PoissonNLogLik(_MeanLoss):
    """``lgamma(y + 1) + p - y log p`` with ``p`` clipped below at 1e-16 (not the deviance)."""

    def row_loss(self, y, pred):
        out = np.empty_like(y)
        _poisson_nloglik(np.ascontiguousarray(y), np.ascontiguousarray(pred), out)
        return out


class GammaNLogLik(_MeanLoss):
    """Gamma negative log-likelihood with dispersion 1: ``y / p + log p``, ``p >= 1e-6``."""

    def row_loss(self, y, pred):
        p = np.maximum(pred, _GAMMA_MIN_PRED)
        return y / p + np.log(p)


class GammaDeviance(_MeanLoss):
    """xgboost's gamma-deviance: ``2 * mean(t - log t - 1)``, ``t = (y + eps) / (p + eps)``
    with ``eps = 1e-6``."""

    def row_loss(self, y, pred):
        t = (y + _DEVIANCE_EPS) / (pred + _DEVIANCE_EPS)
        return t - np.log(t) - 1.0

    def finalize(self, total):
        return 2.0 * super().finalize(total)


_DEVIANCE_EPS = 1e-6


class TweedieNLogLik(_MeanLoss):
    """``-y p^(1-rho) / (1-rho) + p^(2-rho) / (2-rho)``, variance power ``1 < rho < 2``."""

    def __init__(self, name, rho=1.5):
        super().__init__(name)
        self.rho = rho

    def row_loss(self, y, pred):
        rho = self.rho
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p = np.log(pred)
            return (-y * np.exp((1.0 - rho) * log_p) / (1.0 - rho)
                    + np.exp((2.0 - rho) * log_p) / (2.0 - rho))


class Quantile(Metric):
    """Pinball loss at ``quantile_alpha``, averaged over rows (and over the alphas).

    With several alphas the model has one output per alpha (margins ``(Q, n)``) and, as
    in xgboost, the value is ``sum_i sum_q w_i l_q(y_i, p_iq) / (Q sum_i w_i)``.  The
    predictions are the margins (``reg:quantileerror`` has the identity output).
    """

    def __init__(self, name, alpha=0.5):
        self.name = name
        alphas = np.atleast_1d(np.asarray(alpha, dtype=np.float64)).reshape(-1)
        if alphas.size == 0 or not np.all((alphas > 0) & (alphas < 1)):
            raise ValueError(f"quantile_alpha={alpha!r} must be in (0, 1) (or a list of such)")
        self.alphas = alphas

    def partial(self, y, margin, weight, objective):
        y, m, weight = _inputs(y, margin, weight)
        _one_label_per_row(self.name, y)
        q = self.alphas.shape[0]
        if m.shape[0] != q:
            raise ValueError(f"eval_metric={self.name!r} with {q} quantile_alpha value(s) needs "
                             f"margins for {q} output(s); got {m.shape[0]}")
        pred = _single_output(self.name, m, objective) if q == 1 else m
        diff = y - pred.reshape(q, -1)                                  # (Q, n)
        alpha = self.alphas[:, None]
        loss = np.where(diff >= 0.0, alpha * diff, (alpha - 1.0) * diff).sum(axis=0)
        sums = _weighted_sums(loss, weight)
        sums[1] *= q
        return sums

    def finalize(self, total):
        return _weighted_mean(total)


# ---------------------------------------------------------------------------------------
# survival: each row's interval of event times
# ---------------------------------------------------------------------------------------
class _IntervalMetric(Metric):
    """``sum w v(lower, upper, m) / sum w`` over rows whose labels are the bounds of an
    interval (``(2, n)``: ``survival:aft``'s), ``v`` a row's value from its margin."""

    def __init__(self, name):
        self.name = name

    def _intervals(self, y, margin):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 2 or y.shape[0] != 2:
            raise ValueError(f"eval_metric={self.name!r} needs each row's interval of event "
                             "times (label_lower_bound and label_upper_bound); the labels "
                             f"have shape {y.shape}")
        return y, _as_margin(margin, y.shape[1])

    def partial(self, y, margin, weight, objective):
        y, m = self._intervals(y, margin)
        if weight is not None:
            weight = np.asarray(weight, dtype=np.float64).reshape(-1)
        return _weighted_sums(self._values(y, m[0], objective), weight)

    def row_losses(self, y, margin, objective):
        y, m = self._intervals(y, margin)
        return self._values(y, m[0], objective)

    def finalize(self, total):
        return _weighted_mean(total)


class AFTNLogLik(_IntervalMetric):
    """The AFT negative log-likelihood of each row's interval (``survival.aft_loss``)
    with the objective's distribution and scale (xgboost's ``aft-nloglik``)."""

    def _values(self, y, m, objective):
        if not hasattr(objective, "aft_loss_distribution"):
            raise ValueError(f"eval_metric={self.name!r} scores survival:aft's model; "
                             f"objective={_objective_name(objective)!r}")
        return objective.loss(y, m[None, :])


class IntervalRegressionAccuracy(_IntervalMetric):
    """The weighted share of rows whose predicted time ``exp(m)`` lies in their
    interval (xgboost's ``interval-regression-accuracy``)."""

    higher_is_better = True

    def _values(self, y, m, objective):
        with np.errstate(over="ignore"):
            time = np.exp(m)
        return ((time >= y[0]) & (time <= y[1])).astype(np.float64)


# ---------------------------------------------------------------------------------------
# multiclass
# ---------------------------------------------------------------------------------------
class _MultiClassLoss(Metric):
    def __init__(self, name):
        self.name = name

    def partial(self, y, margin, weight, objective):
        y, m, weight = _inputs(y, margin, weight)
        _one_label_per_row(self.name, y)
        k = m.shape[0]
        if k < 2:
            raise ValueError(f"eval_metric={self.name!r} is for multiclass models "
                             f"(num_class >= 2 margins per row); got {k} margin per row")
        if y.size:
            bad = (y < 0) | (y >= k) | (y != np.floor(y))
            if bad.any():
                raise ValueError(f"eval_metric={self.name!r} needs integer labels in "
                                 f"[0, {k}); found {y[bad][0]}")
        labels = y.astype(np.int64)
        return _weighted_sums(self.row_loss(labels, m), weight)

    def finalize(self, total):
        return _weighted_mean(total)


class MultiLogLoss(_MultiClassLoss):
    """``-log p_y`` of the softmax probabilities, ``p_y`` clipped below at 1e-16."""

    def row_loss(self, labels, m):
        return _softmax_logloss(labels, m, -math.log(_LOG_EPS))


class MultiError(_MultiClassLoss):
    """1 when the most probable class (the first one on ties) is not the label."""

    def row_loss(self, labels, m):
        if labels.size == 0:
            return np.zeros(0)
        return (class_index(m) != labels).astype(np.float64)


# ---------------------------------------------------------------------------------------
# AUC and AUC-PR from score histograms
# ---------------------------------------------------------------------------------------
class UndefinedMetricWarning(DaskBoostWarning, RuntimeWarning):
    """A metric that the rows do not define (nan), such as AUC on one class."""


class _BinaryCurve(Metric):
    higher_is_better = True
    n_bins = AUC_BINS

    def __init__(self, name):
        self.name = name

    def scores(self, m, objective):
        """Scores in [0, 1] ordering rows like the objective's predictions."""
        if m.shape[0] != 1:
            raise ValueError(f"eval_metric={self.name!r} is implemented for binary "
                             f"classification only; got margins for {m.shape[0]} outputs "
                             "(multiclass one-vs-rest AUC is not supported)")
        name = _objective_name(objective)
        if objective is not None and name not in _SIGMOID_OUTPUTS:
            p = sigmoid_direct(m[0])
        else:
            p = _single_output(self.name, m, objective)
        if p.size and not (p.min() >= 0.0 and p.max() <= 1.0):   # also catches NaN
            raise ValueError(f"eval_metric={self.name!r} needs predicted probabilities in "
                             f"[0, 1] (and no NaN); got values in [{p.min()}, {p.max()}]")
        return p

    def partial(self, y, margin, weight, objective):
        """Weighted histograms ``(2, AUC_BINS)`` of the positives (row 0), negatives (row 1)."""
        y, m, weight = _inputs(y, margin, weight)
        _one_label_per_row(self.name, y)
        score = self.scores(m, objective)
        _check_binary_labels(self.name, y)
        bins = np.minimum((score * self.n_bins).astype(np.int64), self.n_bins - 1)
        w = np.ones_like(y) if weight is None else weight
        hist = np.empty((2, self.n_bins))
        hist[0] = np.bincount(bins, weights=w * y, minlength=self.n_bins)
        hist[1] = np.bincount(bins, weights=w * (1.0 - y), minlength=self.n_bins)
        return hist

    def _totals(self, total):
        pos, neg = np.asarray(total[0], dtype=np.float64), np.asarray(total[1], dtype=np.float64)
        p_sum, n_sum = pos.sum(), neg.sum()
        if not (p_sum > 0 and n_sum > 0):
            warnings.warn(f"eval_metric={self.name!r} is nan: the data is empty, or contains "
                          "only positive or only negative samples", UndefinedMetricWarning,
                          stacklevel=3)
            return None
        return pos, neg, p_sum, n_sum


class BinaryAUC(_BinaryCurve):
    """Area under the ROC curve; ties within a bin count 1/2 (the trapezoid rule)."""

    def finalize(self, total):
        totals = self._totals(total)
        if totals is None:
            return math.nan
        pos, neg, p_sum, n_sum = totals
        neg_below = np.cumsum(neg) - neg
        # pairs (positive in bin b, negative below b) count 1, in bin b count 1/2
        return float(np.dot(pos, neg_below + 0.5 * neg) / (p_sum * n_sum))

    def error_bound(self, total):
        """Largest possible ``|finalize(total) - exact AUC|`` due to the binning."""
        pos, neg = np.asarray(total[0]), np.asarray(total[1])
        p_sum, n_sum = pos.sum(), neg.sum()
        if not (p_sum > 0 and n_sum > 0):
            return math.nan
        return float(np.dot(pos, neg) / (2.0 * p_sum * n_sum))


class BinaryAUCPR(_BinaryCurve):
    """xgboost's area under the precision-recall curve (interpolated, Davis & Goadrich)."""

    def finalize(self, total):
        totals = self._totals(total)
        if totals is None:
            return math.nan
        pos, neg, p_sum, _ = totals
        pos, neg = pos[::-1], neg[::-1]              # from the highest scores down
        keep = pos > 0                               # bins with only negatives add no area
        tp, fp = np.cumsum(pos), np.cumsum(neg)
        tp_prev, fp_prev = (tp - pos)[keep], (fp - neg)[keep]
        d_tp, d_fp = pos[keep], neg[keep]
        # Along the segment from (tp_prev, fp_prev) to (tp, fp), fp = fp_prev + h (x - tp_prev)
        # at x true positives, so precision = x / (a x + c) with a = 1 + h, c = fp_prev - h
        # tp_prev; the area is the integral of precision over recall x / P.
        h = d_fp / d_tp
        a = 1.0 + h
        c = fp_prev - h * tp_prev
        before = tp_prev + fp_prev
        with np.errstate(divide="ignore", invalid="ignore"):
            log_term = np.where(before > 0, np.log1p((d_tp + d_fp) / before), 0.0)
            area = np.where(before > 0, (d_tp - c / a * log_term) / a, d_tp / a)
        return float(area.sum() / p_sum)


# ---------------------------------------------------------------------------------------
# user-defined metrics
# ---------------------------------------------------------------------------------------
class WholeRowsMetric(Metric):
    """A metric computed once over all the eval set's rows, for a user function that
    cannot be split into per-partition sums (an AUC, an F1, a maximum...).

    The partial result is a list holding the partition's ``(y, predictions, weight)``
    (empty for an empty partition); ``combine`` joins two lists, so the reduction's
    fixed pairwise order (``tree_reduce``) puts the rows in partition order, whatever
    the scheduler; ``finalize`` joins the rows and calls ``value`` on them.  The value
    therefore does not depend on the partitioning.  This is the one exception to "rows
    never leave their partition": every round, the eval set's labels, predictions and
    weights (24 bytes a row for a single output) reach the process that reduces them.
    """

    def partial(self, y, margin, weight, objective):
        y, m, weight = _inputs(y, margin, weight)
        if y.shape[-1] == 0:
            return []
        return [(y.T if y.ndim == 2 else y, self._predictions(m, objective), weight)]

    def combine(self, a, b):
        return a + b

    def _predictions(self, m, objective):
        """What the user function receives as predictions, from the ``(K, n)`` margins."""
        return output_space(m, objective)

    def finalize(self, total):
        if not total:
            return math.nan
        y = np.concatenate([part[0] for part in total])
        pred = np.concatenate([part[1] for part in total])
        weight = (None if total[0][2] is None
                  else np.concatenate([part[2] for part in total]))
        return self._checked(self.value(y, pred, weight), y.shape[0])

    def value(self, y, pred, weight):
        """The metric over all the rows: ``y`` (n,) (several targets: (n, K)), ``pred``
        (n,) or (n, K), ``weight`` (n,) or None."""
        raise NotImplementedError

    def _checked(self, value, n_rows):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"custom eval_metric {self.name!r} must return a number; "
                             f"got {value!r:.80}") from None
        if not math.isfinite(value):
            raise ValueError(f"custom eval_metric {self.name!r} returned {value} on {n_rows} "
                             "rows; it must return a finite number")
        return value


class CustomMetric(WholeRowsMetric):
    """A user function ``f(y_true, y_pred) -> float`` (xgboost's scikit-learn signature),
    called once per eval set and round on all its rows (``WholeRowsMetric``), as
    xgboost and LightGBM call it on one machine: exact for any metric (AUC, F1, RMSE...),
    and the same value for any partitioning.

    ``y_pred`` is in output space, as xgboost passes it: ``(n,)`` for single-output
    models, ``(n, K)`` (``objective.transform``: probabilities for ``multi:softprob``)
    for multiclass.  When the data has sample weights ``f`` is called as
    ``f(y_true, y_pred, sample_weight=w)``, as xgboost does.  A value that is not a
    finite number raises ``ValueError``.  Over no rows the value is ``nan`` (``f`` is
    not called).
    """

    def __init__(self, func, name=None, higher_is_better=False):
        if not callable(func):
            raise TypeError(f"a custom eval_metric must be callable; got {func!r}")
        self.func = func
        self.name = name or getattr(func, "__name__", None) or type(func).__name__
        self.higher_is_better = bool(higher_is_better)

    def value(self, y, pred, weight):
        if weight is None:
            return self.func(y, pred)
        return self.func(y, pred, sample_weight=weight)

# ---------------------------------------------------------------------------------------
# ranking: a value per query group
# ---------------------------------------------------------------------------------------
_RANKING_KINDS = {"ndcg": lambdarank.NDCG, "map": lambdarank.MAP, "pre": lambdarank.PAIRWISE}
_RANK_EPS = 1e-6  # xgboost's kRtEps: a mean above 1 by more is an error


class QueryRankMetric(Metric):
    """xgboost's ``ndcg``, ``map`` and ``pre`` (``@k``: the first k documents by score;
    32 without it; ``-``: a query without a relevant document scores 0 instead of 1),
    the mean over the query groups weighted by the queries' weights
    (``lambdarank.ranking_metric_sums``).  The partial result of a partition is
    ``[sum of weight * value, sum of weights]`` over its queries, whose rows are all in
    it (``query_groups``).  ``exp_gain``: ``ndcg``'s gains ``2^y - 1`` (the objective's
    ``ndcg_exp_gain``), else ``y``."""

    higher_is_better = True
    ranks_queries = True

    def __init__(self, name, kind, top_k, minus, exp_gain=True):
        self.name, self.kind, self.top_k, self.minus = name, kind, top_k, minus
        self.exp_gain = exp_gain

    def partial(self, y, margin, weight, objective, groups=None):
        if groups is None:
            raise ValueError(f"eval_metric={self.name!r} ranks the rows of each query: the "
                             "data needs query ids (qid=...)")
        _one_label_per_row(self.name, np.asarray(y))
        y = np.ascontiguousarray(y, dtype=np.float32)
        m = _as_margin(margin, len(y))
        if m.shape[0] != 1:
            raise ValueError(f"eval_metric={self.name!r} ranks by one score per row; the "
                             f"model has {m.shape[0]} outputs")
        self._check_labels(y)
        query_weights = (np.empty(0, np.float32) if weight is None
                         else np.asarray(weight, dtype=np.float32)[groups[:-1]])
        total, weight_sum = lambdarank.ranking_metric_sums(
            _RANKING_KINDS[self.kind], self.top_k, self.minus, self.exp_gain,
            np.ascontiguousarray(m[0], dtype=np.float64), y, np.asarray(groups, np.int64),
            query_weights)
        return np.array([total, weight_sum])

    def _check_labels(self, y):
        if self.kind == "ndcg" and self.exp_gain:
            ok = (y >= 0) & (y <= 31) & (y == np.floor(y))
            what = "whole numbers in [0, 31] (gains 2^y - 1)"
        elif self.kind in ("map", "pre"):
            ok = (y == 0) | (y == 1)
            what = "0 or 1 (relevant or not)"
        else:
            return
        if not ok.all():
            raise ValueError(f"eval_metric={self.name!r} needs relevance labels that are "
                             f"{what}; found {float(y[~ok][0])}")

    def finalize(self, total):
        score = total[0] / total[1] if total[1] > 0 else total[0]
        if score > 1.0 + _RANK_EPS:
            raise ValueError(f"eval_metric={self.name!r} = {score} > 1: the query weights are "
                             "not valid")
        return min(1.0, float(score))


def _ranking_metric(name, base, param, objective):
    """``ndcg`` / ``map`` / ``pre`` with xgboost's ``@k`` and ``-`` suffixes."""
    kind = base.rstrip("-")
    minus = name.endswith("-") and kind != "pre"
    if param.endswith("-") and kind != "pre":
        param = param[:-1]
    k = lambdarank.DEFAULT_TOP_K
    default_top_k = getattr(objective, "default_metric_top_k", None)
    if default_top_k is not None and default_top_k(name) is not None:
        k = default_top_k(name)
    if param:
        k = int(param) if param.isdigit() else 0
        if k < 1:
            raise ValueError(f"eval_metric={name!r}: the form is {kind}@k (k a whole number "
                             f">= 1, e.g. '{kind}@10')"
                             f"{'' if kind == 'pre' else f' or {kind}@k-'}")
    return QueryRankMetric(name, kind, k, minus, getattr(objective, "exp_gain", True))


def partial_of(metric, y, margin, weight, objective, groups):
    """``metric.partial``, given the rows' query groups (``group_ptr`` or None) where the
    metric ranks within queries."""
    if metric.ranks_queries:
        return metric.partial(y, margin, weight, objective, groups)
    return metric.partial(y, margin, weight, objective)



# ---------------------------------------------------------------------------------------
# lookup by name
# ---------------------------------------------------------------------------------------
_SIMPLE = {
    "rmse": RMSE,
    "rmsle": RMSLE,
    "mae": MAE,
    "mape": MAPE,
    "logloss": LogLoss,
    "auc": BinaryAUC,
    "aucpr": BinaryAUCPR,
    "mlogloss": MultiLogLoss,
    "merror": MultiError,
    "poisson-nloglik": PoissonNLogLik,
    "gamma-nloglik": GammaNLogLik,
    "gamma-deviance": GammaDeviance,
    "aft-nloglik": AFTNLogLik,
    "interval-regression-accuracy": IntervalRegressionAccuracy,
}

METRIC_NAMES = ("rmse", "rmsle", "mae", "mape", "mphe", "logloss", "error", "auc", "aucpr",
                "mlogloss", "merror", "poisson-nloglik", "gamma-nloglik", "gamma-deviance",
                "tweedie-nloglik",
                "quantile", "ndcg", "map", "pre", "aft-nloglik",
                "interval-regression-accuracy")

_MULTICLASS_ONLY = frozenset({"mlogloss", "merror"})
_SURVIVAL = frozenset({"aft-nloglik", "interval-regression-accuracy"})
_SINGLE_OUTPUT = frozenset(METRIC_NAMES) - _MULTICLASS_ONLY - {"quantile"}
_RANKING = frozenset(_RANKING_KINDS)


def _positive_float(what, value):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}={value!r} must be a number") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{what}={value!r} must be a finite number > 0")
    return v


def _parse_parameter(name, base, param):
    try:
        value = float(param)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        form = "error@t (t a number, e.g. 'error@0.7')" if base == "error" else \
            "tweedie-nloglik@rho (1 < rho < 2, e.g. 'tweedie-nloglik@1.5')"
        raise ValueError(f"eval_metric={name!r}: cannot read {param!r} as a number; "
                         f"the form is {form}")
    return value


def _unknown(name):
    valid = ", ".join(repr(n) for n in METRIC_NAMES)
    return ValueError(f"eval_metric={name!r} is not supported; valid metrics: {valid} "
                      "(and 'error@t', 'tweedie-nloglik@rho', 'ndcg@k', 'ndcg-', "
                      "'map@k', 'pre@k'), or a callable f(y_true, y_pred) -> float")


def _check_objective(name, base, objective):
    obj = _objective_name(objective)
    if not isinstance(obj, str):
        return
    multiclass = objective_kind(obj) == MULTICLASS
    survival = obj == "survival:aft"
    if survival != (base in _SURVIVAL):
        raise ValueError(
            f"eval_metric={name!r} scores " + (
                "an interval of event times a row, survival:aft's labels" if not survival
                else "one label per row") + f"; objective={obj!r}" + (
                ": use 'aft-nloglik' or 'interval-regression-accuracy'" if survival else ""))
    if obj == "custom":  # a custom objective: multiclass when it has several outputs
        multiclass = objective.n_outputs() > 1
    if base in _MULTICLASS_ONLY and not multiclass:
        raise ValueError(f"eval_metric={name!r} is for multiclass objectives; "
                         f"objective={obj!r}")
    if base in ("auc", "aucpr") and multiclass:
        raise ValueError(f"eval_metric={name!r} is implemented for binary classification "
                         f"only, not for objective={obj!r} (no one-vs-rest multiclass AUC); "
                         "use 'mlogloss' or 'merror'")
    if base in _SINGLE_OUTPUT and multiclass:
        raise ValueError(f"eval_metric={name!r} is not a multiclass metric "
                         f"(objective={obj!r}); use 'mlogloss' or 'merror'")
    levels = getattr(objective, "leaf_quantiles", None) if obj == "reg:quantileerror" else None
    if levels is not None and len(levels) > 1 and base != "quantile":
        raise ValueError(f"eval_metric={name!r} scores one prediction per row; "
                         f"objective={obj!r} with quantile_alpha={list(levels)} predicts "
                         f"{len(levels)} quantiles per row: use 'quantile' (the pinball loss "
                         "averaged over the levels)")


def get_metric(name, objective=None, quantile_alpha=0.5, huber_slope=1.0):
    """The metric called ``name`` (xgboost's spelling).

    ``name`` may carry a parameter: ``"error@0.7"`` (threshold on the probability,
    default 0.5) and ``"tweedie-nloglik@1.5"`` (variance power; without one, the
    objective's ``tweedie_variance_power`` if it has one, else 1.5).  A ``Metric`` is
    returned as is; a callable is wrapped in :class:`CustomMetric`.  ``objective``, when
    given, is used to reject metrics that do not fit it (``mlogloss`` on a binary model,
    ``auc`` on a multiclass one).  Unknown names raise ``ValueError`` listing the valid
    ones.
    """
    if isinstance(name, Metric):
        return name
    if callable(name):
        return CustomMetric(name)
    if not isinstance(name, str):
        raise _unknown(name)
    base, sep, param = name.partition("@")
    if base.rstrip("-") in _RANKING and (not base.endswith("-") or not sep):
        _check_objective(name, base.rstrip("-"), objective)
        return _ranking_metric(name, base, param, objective)
    if base not in METRIC_NAMES:
        raise _unknown(name)
    _check_objective(name, base, objective)
    if sep and base not in ("error", "tweedie-nloglik"):
        raise ValueError(f"eval_metric={name!r}: {base!r} takes no '@' parameter")
    if base == "error":
        threshold = _parse_parameter(name, base, param) if sep else 0.5
        return Error(name, threshold)
    if base == "tweedie-nloglik":
        if sep:
            rho = _parse_parameter(name, base, param)
        else:
            rho = float(getattr(objective, "tweedie_variance_power", 1.5))
        if not 1.0 < rho < 2.0:
            raise ValueError(f"eval_metric={name!r}: the tweedie variance power must be in "
                             f"(1, 2); got {rho} (for rho = 1 use 'poisson-nloglik')")
        return TweedieNLogLik(name, rho)
    if base == "quantile":
        return Quantile(name, quantile_alpha)
    if base == "mphe":
        return MPHE(name, huber_slope)
    return _SIMPLE[base](name)


__all__ = ["AUC_BINS", "METRIC_NAMES", "CustomMetric", "Metric", "WholeRowsMetric",
           "evaluate", "get_metric", "tree_reduce"]
