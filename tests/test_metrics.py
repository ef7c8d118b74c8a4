"""Evaluation metrics: per-partition partials, fixed-order reduction, final value.

Checked against direct numpy computations and scikit-learn (with and without sample
weights), for invariance to the partitioning (1, 3 and 8 blocks, one of them empty),
and against the values xgboost itself reports for its own margins.  The objectives are
small stand-ins defined here (name + output transform), not ``daskboost.objectives``.
"""

import math
import warnings
import zlib

import numpy as np
import pytest
from scipy import integrate
from sklearn import metrics as skm

from daskboost.metrics import (
    AUC_BINS, METRIC_NAMES, CustomMetric, Metric, evaluate, get_metric, tree_reduce,
)


# ---------------------------------------------------------------------------------------
# stand-in objectives: a name and the output transform of (K, n) margins
# ---------------------------------------------------------------------------------------
class StandIn:
    def __init__(self, name, single=None, multi=None):
        self.name = name
        self._single, self._multi = single, multi

    def transform(self, margin):
        m = np.asarray(margin, dtype=np.float64)
        if m.shape[0] == 1:
            return self._single(m[0])
        return self._multi(m)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softprob(m):                       # (K, n) margins -> (n, K) probabilities
    e = np.exp(m - m.max(axis=0))
    return (e / e.sum(axis=0)).T


IDENTITY = StandIn("reg:squarederror", single=lambda m: m, multi=lambda m: m.T)
SIGMOID = StandIn("binary:logistic", single=_sigmoid)
EXP = StandIn("count:poisson", single=np.exp)
SOFTPROB = StandIn("multi:softprob", multi=_softprob)
QUANTILE = StandIn("reg:quantileerror", single=lambda m: m, multi=lambda m: m.T)


# ---------------------------------------------------------------------------------------
# data and direct reference computations
# ---------------------------------------------------------------------------------------
N = 1500


def _data(kind, rng, n=N):
    """(y, margin (K, n)) for one kind of task."""
    if kind == "regression":
        y = rng.normal(5.0, 1.0, n)
        return y, (y + rng.normal(0, 0.7, n))[None]
    if kind == "binary":
        y = (rng.random(n) < 0.4).astype(np.float64)
        return y, (rng.normal(0, 1.5, n) + 1.2 * y)[None]
    if kind == "count":
        mu = np.exp(rng.normal(0.5, 0.5, n))
        return rng.poisson(mu).astype(np.float64), (np.log(mu) + rng.normal(0, 0.3, n))[None]
    if kind == "positive":
        mu = np.exp(rng.normal(0.5, 0.5, n))
        return rng.gamma(2.0, mu / 2.0), (np.log(mu) + rng.normal(0, 0.3, n))[None]
    if kind == "tweedie":
        mu = np.exp(rng.normal(0.5, 0.5, n))
        y = rng.poisson(mu) * rng.gamma(2.0, 1.0, n)
        return y, (np.log(mu) + rng.normal(0, 0.3, n))[None]
    if kind == "multiclass":
        y = rng.integers(0, 3, n).astype(np.float64)
        m = rng.normal(0, 1.0, (3, n))
        m[y.astype(int), np.arange(n)] += 1.0
        return y, m
    raise AssertionError(kind)


def _wmean(values, w):
    return float(np.sum(values * w) / np.sum(w))


def _ref_logloss(y, p, w):
    return _wmean(-(y * np.log(np.clip(p, 1e-16, None))
                    + (1 - y) * np.log(np.clip(1 - p, 1e-16, None))), w)


def _ref_poisson(y, p, w):
    lg = np.array([math.lgamma(v + 1.0) for v in y])
    return _wmean(lg + p - y * np.log(p), w)


def _ref_tweedie(y, p, w, rho=1.5):
    return _wmean(-y * p ** (1 - rho) / (1 - rho) + p ** (2 - rho) / (2 - rho), w)


def _ref_mlogloss(y, probs, w):
    return _wmean(-np.log(probs[np.arange(len(y)), y.astype(int)]), w)


def _ref_auc(y, p, w):
    """AUC by brute force over all (positive, negative) pairs, ties 1/2."""
    pos, neg = p[y == 1], p[y == 0]
    wp, wn = w[y == 1], w[y == 0]
    cmp = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return float(wp @ cmp @ wn / (wp.sum() * wn.sum()))


def _ref_aucpr(y, p, w):
    """xgboost's PR-AUC by numerical integration of the precision along each segment.

    Thresholds at the distinct scores, highest first; between two consecutive points
    true and false positives grow linearly together, and the area is the integral of
    tp / (tp + fp) over recall tp / P along that line.
    """
    total_pos = float(np.sum(w * y))
    area, tp, fp = 0.0, 0.0, 0.0
    for s in np.unique(p)[::-1]:
        at = p == s
        d_tp, d_fp = float(np.sum((w * y)[at])), float(np.sum((w * (1 - y))[at]))
        if d_tp > 0:
            def precision(t, tp=tp, fp=fp, d_tp=d_tp, d_fp=d_fp):
                x, f = tp + t * d_tp, fp + t * d_fp
                return x / (x + f) if x + f > 0 else d_tp / (d_tp + d_fp)
            area += d_tp / total_pos * integrate.quad(precision, 0.0, 1.0, epsabs=1e-14,
                                                      epsrel=1e-12)[0]
        tp, fp = tp + d_tp, fp + d_fp
    return area


def _bin(p):
    return np.minimum(np.floor(p * AUC_BINS), AUC_BINS - 1)


def _pinball(y, p, w, alpha):
    d = y - p
    return _wmean(np.where(d >= 0, alpha * d, (alpha - 1) * d), w)


# metric name -> (data kind, stand-in objective, reference(y, margin, w), get_metric kwargs)
SPECS = {
    "rmse": ("regression", IDENTITY, lambda y, m, w: math.sqrt(_wmean((y - m[0]) ** 2, w)), {}),
    "rmsle": ("regression", IDENTITY,
              lambda y, m, w: math.sqrt(_wmean((np.log1p(y) - np.log1p(m[0])) ** 2, w)), {}),
    "mae": ("regression", IDENTITY, lambda y, m, w: _wmean(np.abs(y - m[0]), w), {}),
    "mape": ("regression", IDENTITY, lambda y, m, w: _wmean(np.abs((y - m[0]) / y), w), {}),
    "mphe": ("regression", IDENTITY,
             lambda y, m, w: _wmean(np.sqrt(1 + (y - m[0]) ** 2) - 1, w), {}),
    "logloss": ("binary", SIGMOID, lambda y, m, w: _ref_logloss(y, _sigmoid(m[0]), w), {}),
    "error": ("binary", SIGMOID, lambda y, m, w: _wmean((_sigmoid(m[0]) > 0.5) != y, w), {}),
    "error@0.7": ("binary", SIGMOID,
                  lambda y, m, w: _wmean((_sigmoid(m[0]) > 0.7) != y, w), {}),
    "auc": ("binary", SIGMOID, lambda y, m, w: _ref_auc(y, _bin(_sigmoid(m[0])), w), {}),
    "aucpr": ("binary", SIGMOID, lambda y, m, w: _ref_aucpr(y, _bin(_sigmoid(m[0])), w), {}),
    "mlogloss": ("multiclass", SOFTPROB, lambda y, m, w: _ref_mlogloss(y, _softprob(m), w), {}),
    "merror": ("multiclass", SOFTPROB,
               lambda y, m, w: _wmean(np.argmax(_softprob(m), axis=1) != y, w), {}),
    "poisson-nloglik": ("count", EXP, lambda y, m, w: _ref_poisson(y, np.exp(m[0]), w), {}),
    "gamma-nloglik": ("positive", EXP,
                      lambda y, m, w: _wmean(y / np.exp(m[0]) + m[0], w), {}),
    "tweedie-nloglik@1.5": ("tweedie", EXP,
                            lambda y, m, w: _ref_tweedie(y, np.exp(m[0]), w), {}),
    "tweedie-nloglik@1.2": ("tweedie", EXP,
                            lambda y, m, w: _ref_tweedie(y, np.exp(m[0]), w, 1.2), {}),
    "quantile": ("regression", QUANTILE, lambda y, m, w: _pinball(y, m[0], w, 0.3),
                 {"quantile_alpha": 0.3}),
}


def _blocks(y, m, w, n_blocks, rng):
    """Cut the rows into ``n_blocks`` contiguous blocks; from 3 blocks on, one is empty."""
    n = len(y)
    if n_blocks == 1:
        bounds = [0, n]
    else:
        cuts = np.sort(rng.choice(np.arange(1, n), n_blocks - 2, replace=False))
        bounds = [0, cuts[0], *cuts, n]          # cuts[0] twice: an empty block
    return [(y[a:b], m[:, a:b], None if w is None else w[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])]


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


# ---------------------------------------------------------------------------------------
# every metric: reference value, invariance to the partitioning
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("name", list(SPECS))
def test_metric_matches_reference_on_any_partitioning(name, weighted):
    kind, objective, reference, kwargs = SPECS[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}-{weighted}".encode()))
    y, m = _data(kind, rng)
    w = rng.uniform(0.1, 3.0, len(y)) if weighted else None
    metric = get_metric(name, objective, **kwargs)
    assert metric.name == name

    values = [evaluate(metric, _blocks(y, m, w, k, rng), objective) for k in (1, 3, 8)]
    if name in ("auc", "aucpr") and not weighted:
        # the histograms count rows: integers, identical for any partitioning
        assert values[0] == values[1] == values[2]
    else:
        assert _rel(values[1], values[0]) <= 1e-12 and _rel(values[2], values[0]) <= 1e-12
    expected = reference(y, m, np.ones(len(y)) if w is None else w)
    assert _rel(values[0], expected) <= 1e-10, (values[0], expected)


@pytest.mark.parametrize("name", list(SPECS))
def test_partials_have_a_fixed_size(name):
    kind, objective, _, kwargs = SPECS[name]
    y, m = _data(kind, np.random.default_rng(0), n=50)
    metric = get_metric(name, objective, **kwargs)
    full = metric.partial(y, m, None, objective)
    empty = metric.partial(y[:0], m[:, :0], None, objective)
    one = metric.partial(y[:1], m[:, :1], np.array([2.0]), objective)
    assert full.shape == empty.shape == one.shape
    assert full.dtype == np.float64 and not np.any(empty)


@pytest.mark.parametrize("name", list(SPECS))
def test_row_losses_sum_to_the_partial_or_are_none(name):
    # what cross-validation sums per fold (``Metric.row_losses``) is the partial's
    kind, objective, _, kwargs = SPECS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    y, m = _data(kind, rng)
    w = rng.uniform(0.1, 3.0, len(y))
    metric = get_metric(name, objective, **kwargs)
    losses = metric.row_losses(y, m, objective)
    if name in ("auc", "aucpr", "mlogloss", "merror", "quantile"):
        assert losses is None  # (ranked, multiclass, several alphas: partials as they are)
        return
    assert losses.shape == y.shape
    expected = metric.partial(y, m, w, objective)
    got = np.array([np.sum(losses * w), np.sum(w)])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_tree_reduce_pairs_in_fixed_order():
    class Record(Metric):
        def combine(self, a, b):
            return f"({a}+{b})"
    assert tree_reduce(Record(), list("abcde")) == "(((a+b)+(c+d))+e)"
    assert tree_reduce(Record(), ["a"]) == "a"


def test_quantile_with_several_alphas_averages_over_alphas():
    rng = np.random.default_rng(5)
    y = rng.normal(size=400)
    m = np.vstack([y - 0.5 + rng.normal(size=400), y + 0.8 + rng.normal(size=400)])
    w = rng.uniform(0.5, 2.0, 400)
    metric = get_metric("quantile", QUANTILE, quantile_alpha=[0.2, 0.9])
    expected = (_pinball(y, m[0], w, 0.2) + _pinball(y, m[1], w, 0.9)) / 2
    got = evaluate(metric, _blocks(y, m, w, 3, rng), QUANTILE)
    assert _rel(got, expected) <= 1e-12
    with pytest.raises(ValueError, match="margins for 2 output"):
        metric.partial(y, m[:1], None, QUANTILE)


def test_empty_data_gives_zero_like_xgboost_and_nan_for_curves():
    y, m = np.zeros(0), np.zeros((1, 0))
    assert evaluate("rmse", [(y, m, None)], IDENTITY) == 0.0
    assert evaluate("logloss", [(y, m, None)], SIGMOID) == 0.0
    with pytest.warns(RuntimeWarning, match="only positive or only negative"):
        assert math.isnan(evaluate("auc", [(y, m, None)], SIGMOID))


def test_logloss_is_exact_where_float32_saturates():
    # xgboost computes p in float32: sigmoid(30) rounds to 1 and a negative row costs
    # -log(1e-16) = 36.8; the loss is log(1 + e^30) = 30 (computed from the margin, since
    # even in float64 1 - p = 9.4e-14 keeps only 3 digits).
    y = np.array([0.0, 1.0, 0.0, 1.0])
    m = np.array([[30.0, -60.0, 60.0, 0.0]])
    value = evaluate("logloss", [(y, m, None)], SIGMOID)
    expected = (np.logaddexp(0, 30.0) - 2 * math.log(1e-16) + math.log(2)) / 4
    assert value == pytest.approx(expected, rel=1e-14)
    # from probabilities (no objective) the clip at 1e-16 applies the same way
    p = _sigmoid(m)
    assert evaluate("logloss", [(y, p, None)], None) == pytest.approx(expected, rel=1e-3)


# ---------------------------------------------------------------------------------------
# weighted metrics against scikit-learn's sample_weight
# ---------------------------------------------------------------------------------------
SKLEARN = {
    "rmse": ("regression", IDENTITY,
             lambda y, m, w: math.sqrt(skm.mean_squared_error(y, m[0], sample_weight=w))),
    "rmsle": ("regression", IDENTITY,
              lambda y, m, w: math.sqrt(skm.mean_squared_log_error(y, m[0], sample_weight=w))),
    "mae": ("regression", IDENTITY,
            lambda y, m, w: skm.mean_absolute_error(y, m[0], sample_weight=w)),
    "mape": ("regression", IDENTITY,
             lambda y, m, w: skm.mean_absolute_percentage_error(y, m[0], sample_weight=w)),
    "quantile": ("regression", QUANTILE,
                 lambda y, m, w: skm.mean_pinball_loss(y, m[0], alpha=0.5, sample_weight=w)),
    "logloss": ("binary", SIGMOID,
                lambda y, m, w: skm.log_loss(y, _sigmoid(m[0]), sample_weight=w)),
    "error": ("binary", SIGMOID,
              lambda y, m, w: 1 - skm.accuracy_score(y, _sigmoid(m[0]) > 0.5, sample_weight=w)),
    "mlogloss": ("multiclass", SOFTPROB,
                 lambda y, m, w: skm.log_loss(y, _softprob(m), sample_weight=w)),
    "merror": ("multiclass", SOFTPROB,
               lambda y, m, w: 1 - skm.accuracy_score(y, np.argmax(m, axis=0), sample_weight=w)),
}


@pytest.mark.parametrize("name", list(SKLEARN))
def test_weighted_metric_matches_sklearn(name):
    kind, objective, sk = SKLEARN[name]
    rng = np.random.default_rng(len(name))
    y, m = _data(kind, rng)
    w = rng.exponential(1.0, len(y))
    got = evaluate(get_metric(name, objective), _blocks(y, m, w, 8, rng), objective)
    assert _rel(got, sk(y, m, w)) <= 1e-10


# ---------------------------------------------------------------------------------------
# AUC and AUC-PR
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_auc_on_100k_continuous_scores_matches_sklearn(weighted):
    rng = np.random.default_rng(11)
    n = 100_000
    y = (rng.random(n) < 0.3).astype(np.float64)
    m = (rng.normal(0, 1.5, n) + 1.3 * y)[None]
    w = rng.exponential(1.0, n) if weighted else None
    p = _sigmoid(m[0])
    blocks = _blocks(y, m, w, 8, rng)

    auc = get_metric("auc", SIGMOID)
    total = tree_reduce(auc, [auc.partial(*b, SIGMOID) for b in blocks])
    exact = skm.roc_auc_score(y, p, sample_weight=w)
    bound = auc.error_bound(total)
    assert bound < 1e-4
    assert abs(auc.finalize(total) - exact) <= bound + 1e-12       # the bound is rigorous
    assert abs(auc.finalize(total) - exact) <= 1e-3

    aucpr = evaluate(get_metric("aucpr", SIGMOID), blocks, SIGMOID)
    assert abs(aucpr - skm.average_precision_score(y, p, sample_weight=w)) <= 1e-3


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_auc_with_ties_is_exact(weighted):
    rng = np.random.default_rng(12)
    n = 3000
    y = (rng.random(n) < 0.45).astype(np.float64)
    levels = np.array([0.05, 0.2, 0.35, 0.5, 0.51, 0.8, 0.97])    # each in its own bin
    p = levels[np.clip(rng.integers(0, 5, n) + y.astype(int) * 2, 0, 6)]
    w = rng.uniform(0.2, 2.0, n) if weighted else None
    margin = np.log(p / (1 - p))[None]
    blocks = _blocks(y, margin, w, 3, rng)
    auc = evaluate(get_metric("auc"), blocks, SIGMOID)
    assert abs(auc - skm.roc_auc_score(y, p, sample_weight=w)) <= 1e-12
    # with the probabilities themselves as the "margins" and no objective
    assert evaluate("auc", [(y, p[None], w)], None) == pytest.approx(auc, abs=1e-15)
    aucpr = evaluate(get_metric("aucpr"), blocks, SIGMOID)
    assert abs(aucpr - _ref_aucpr(y, p, np.ones(n) if w is None else w)) <= 1e-10


def test_auc_resolves_the_end_bins():
    # scores 1/65536 apart at both ends of [0, 1] fall in different bins
    y = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    p = np.array([0.0, 1.6e-5, 0.99997, 1.0, 1.0, 1.0])
    assert evaluate("auc", [(y, p[None], None)], None) == pytest.approx(
        skm.roc_auc_score(y, p), abs=1e-15)


def test_aucpr_differs_from_average_precision_on_ties():
    # a tie group holding both classes: sklearn takes the precision at its end (a step),
    # xgboost integrates it along the interpolated segment.  Same value when the precision
    # is constant along the segment (a group starting at zero)...
    y = np.array([1.0, 0.0, 1.0, 0.0])
    p = np.array([0.9, 0.9, 0.9, 0.2])
    margin = np.log(p / (1 - p))[None]
    ours = evaluate("aucpr", [(y, margin, None)], SIGMOID)
    assert skm.average_precision_score(y, p) == pytest.approx(2 / 3)
    # precision 2t / 3t = 2/3 all along the only segment that adds recall
    assert ours == pytest.approx(2 / 3, abs=1e-12)
    # ... but not after a first positive: 1/3 + (2/9)(4/3 + (2/9) log 4) = 0.8805 vs 0.8333
    y2 = np.array([1.0, 1.0, 0.0, 1.0, 0.0])
    p2 = np.array([0.95, 0.9, 0.9, 0.9, 0.1])
    ours2 = evaluate("aucpr", [(y2, np.log(p2 / (1 - p2))[None], None)], SIGMOID)
    assert ours2 == pytest.approx(_ref_aucpr(y2, p2, np.ones(5)), abs=1e-12)
    assert abs(ours2 - skm.average_precision_score(y2, p2)) > 1e-3


def test_auc_of_one_class_is_nan_with_a_warning():
    y = np.ones(20)
    m = np.linspace(-2, 2, 20)[None]
    for name in ("auc", "aucpr"):
        with pytest.warns(RuntimeWarning, match="only positive or only negative"):
            assert math.isnan(evaluate(name, [(y, m, None), (y[:0], m[:, :0], None)], SIGMOID))


def test_auc_ranks_by_margin_for_non_probability_objectives():
    rng = np.random.default_rng(13)
    y = (rng.random(2000) < 0.5).astype(np.float64)
    m = (rng.normal(0, 2.0, 2000) + y)[None]
    logitraw = StandIn("binary:logitraw", single=lambda x: x)
    got = evaluate("auc", [(y, m, None)], logitraw)
    assert abs(got - skm.roc_auc_score(y, m[0])) <= 1e-4
    got_exp = evaluate("auc", [(y, m, None)], EXP)
    assert got_exp == got


def test_auc_scores_and_logloss_follow_the_objective_metadata():
    """The objectives whose output is sigmoid(margin) come from daskboost.objectives; the
    others are scored by the direct sigmoid, bit for bit as before links.py."""
    from daskboost import metrics
    from daskboost.objectives import OBJECTIVES, get_objective
    assert metrics._SIGMOID_OUTPUTS == {"binary:logistic", "reg:logistic"}
    m = np.concatenate([np.linspace(-800.0, 800.0, 20001), [-745.2, -709.8, 709.8]])[None]
    with np.errstate(over="ignore"):
        direct = 1.0 / (1.0 + np.exp(-m[0]))        # the old metrics._sigmoid
    auc = get_metric("auc")
    for name in OBJECTIVES:
        obj = get_objective(name, num_class=3)
        if obj.n_outputs() != 1:
            with pytest.raises(ValueError, match="binary classification only"):
                get_metric("auc", obj)
            continue
        expected = obj.transform(m) if name in metrics._SIGMOID_OUTPUTS else direct
        np.testing.assert_array_equal(auc.scores(m, obj).view(np.uint64),
                                      expected.view(np.uint64))


def test_multiclass_metrics_follow_the_objective_kind():
    from daskboost.objectives import MULTICLASS, OBJECTIVES, get_objective
    for name, cls in OBJECTIVES.items():
        obj = get_objective(name, num_class=3)
        if cls.kind == MULTICLASS:
            get_metric("mlogloss", obj), get_metric("merror", obj)
            with pytest.raises(ValueError, match="not a multiclass metric"):
                get_metric("logloss", obj)
        elif name == "survival:aft":  # (intervals: its own metrics only)
            get_metric("aft-nloglik", obj), get_metric("interval-regression-accuracy", obj)
            with pytest.raises(ValueError, match="scores one label per row"):
                get_metric("rmse", obj)
        else:
            get_metric("rmse", obj)
            with pytest.raises(ValueError, match="multiclass objectives"):
                get_metric("merror", obj)


def test_auc_is_binary_only():
    with pytest.raises(ValueError, match="binary classification only"):
        get_metric("auc", SOFTPROB)
    y, m = _data("multiclass", np.random.default_rng(1), n=30)
    with pytest.raises(ValueError, match="binary classification only"):
        get_metric("aucpr").partial(y, m, None, SOFTPROB)
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        get_metric("auc").partial(np.array([0.0, 1.0]), np.array([[-1.0, 2.0]]), None, None)
    with pytest.raises(ValueError, match=r"labels in \[0, 1\]"):
        get_metric("auc").partial(np.array([0.0, 2.0]), np.zeros((1, 2)), None, SIGMOID)


# ---------------------------------------------------------------------------------------
# against xgboost's own evaluation of its own margins
# ---------------------------------------------------------------------------------------
XGB_CASES = {
    "squarederror": ("reg:squarederror", {}, IDENTITY, ["rmse", "mae", "mape", "rmsle", "mphe"]),
    "logistic": ("binary:logistic", {}, SIGMOID,
                 ["logloss", "error", "error@0.7", "auc", "aucpr"]),
    "logitraw": ("binary:logitraw", {}, StandIn("binary:logitraw", single=lambda x: x),
                 ["auc", "aucpr"]),
    "softprob": ("multi:softprob", {"num_class": 3}, SOFTPROB, ["mlogloss", "merror"]),
    "softmax": ("multi:softmax", {"num_class": 3},
                StandIn("multi:softmax", multi=lambda m: np.argmax(m, axis=0)),
                ["mlogloss", "merror"]),
    "poisson": ("count:poisson", {}, EXP, ["poisson-nloglik"]),
    "gamma": ("reg:gamma", {}, StandIn("reg:gamma", single=np.exp), ["gamma-nloglik"]),
    "tweedie": ("reg:tweedie", {"tweedie_variance_power": 1.5},
                StandIn("reg:tweedie", single=np.exp), ["tweedie-nloglik@1.5"]),
    "quantile": ("reg:quantileerror", {"quantile_alpha": 0.3}, QUANTILE, ["quantile"]),
    "quantiles": ("reg:quantileerror", {"quantile_alpha": [0.2, 0.7]}, QUANTILE, ["quantile"]),
}


def _xgb_labels(case, lin, rng):
    n = len(lin)
    if case == "squarederror":
        return lin + rng.normal(size=n) + 5.0
    if case in ("logistic", "logitraw"):
        return (lin + rng.normal(size=n) > 0).astype(np.float64)
    if case in ("softprob", "softmax"):
        return np.digitize(lin + rng.normal(size=n), [-0.5, 0.5]).astype(np.float64)
    if case == "poisson":
        return rng.poisson(np.exp(0.5 * lin)).astype(np.float64)
    if case == "gamma":
        return rng.gamma(2.0, np.exp(0.3 * lin) / 2.0)
    if case == "tweedie":
        return rng.poisson(np.exp(0.5 * lin)) * rng.gamma(2.0, 1.0, n)
    return lin + rng.normal(size=n)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("case", list(XGB_CASES))
def test_matches_xgboost_on_its_margins(case, weighted):
    xgb = pytest.importorskip("xgboost")
    objective_name, extra, objective, names = XGB_CASES[case]
    rng = np.random.default_rng(21)
    n_train, n_eval = 1500, 1000
    X = rng.normal(size=(n_train + n_eval, 4))
    lin = X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3]
    y = _xgb_labels(case, lin, rng)
    w = rng.uniform(0.2, 3.0, n_eval) if weighted else None
    train = xgb.DMatrix(X[:n_train], y[:n_train])
    evals = xgb.DMatrix(X[n_train:], y[n_train:], weight=w)
    params = {"objective": objective_name, "eval_metric": names, "max_depth": 3, "eta": 0.3,
              "nthread": 1, **extra}
    result = {}
    booster = xgb.train(params, train, 4, evals=[(evals, "eval")], evals_result=result,
                        verbose_eval=False)
    margin = booster.predict(evals, output_margin=True).astype(np.float64)
    margin = margin.T if margin.ndim == 2 else margin[None]
    blocks = _blocks(y[n_train:], margin, w, 3, rng)
    for name in names:
        metric = get_metric(name, objective, quantile_alpha=extra.get("quantile_alpha", 0.5))
        ours = evaluate(metric, blocks, objective)
        theirs = result["eval"][name][-1]
        tol = 1e-3 if name in ("auc", "aucpr") else 1e-5
        assert _rel(ours, theirs) <= tol, (name, ours, theirs)


# ---------------------------------------------------------------------------------------
# names, parameters and errors
# ---------------------------------------------------------------------------------------
def test_unknown_metric_lists_the_valid_names():
    with pytest.raises(ValueError) as info:
        get_metric("brier")
    message = str(info.value)
    assert "'brier'" in message
    for name in METRIC_NAMES:
        assert repr(name) in message


@pytest.mark.parametrize("name", ["error@x", "error@", "error@nan", "error@inf"])
def test_bad_error_threshold(name):
    with pytest.raises(ValueError, match="error@t"):
        get_metric(name)


def test_parameters_are_parsed():
    assert get_metric("error@0.7").threshold == 0.7
    assert get_metric("error").threshold == 0.5
    assert get_metric("tweedie-nloglik@1.2").rho == 1.2
    assert get_metric("tweedie-nloglik").rho == 1.5
    tweedie = StandIn("reg:tweedie", single=np.exp)
    tweedie.tweedie_variance_power = 1.3
    assert get_metric("tweedie-nloglik", tweedie).rho == 1.3
    assert get_metric("mphe", huber_slope=2.0).slope == 2.0
    for bad in ("tweedie-nloglik@1", "tweedie-nloglik@2", "tweedie-nloglik@abc"):
        with pytest.raises(ValueError, match="tweedie"):
            get_metric(bad)
    with pytest.raises(ValueError, match="takes no '@' parameter"):
        get_metric("rmse@3")
    with pytest.raises(ValueError, match="quantile_alpha"):
        get_metric("quantile", quantile_alpha=1.5)
    for name, higher in (("auc", True), ("aucpr", True), ("logloss", False), ("error", False)):
        assert get_metric(name).higher_is_better is higher


def test_error_threshold_is_strict():
    # a row counts as predicted positive only when p > threshold (xgboost's rule)
    y = np.ones(4)
    p = np.array([[0.5, 0.5, 0.7, 0.9]])
    assert evaluate("error", [(y, p, None)], None) == 0.5
    assert evaluate("error@0.7", [(y, p, None)], None) == 0.75
    assert evaluate("error@0.4", [(y, p, None)], None) == 0.0
    assert evaluate("error", [(1 - y, p, None)], None) == 0.5


def test_mphe_slope():
    rng = np.random.default_rng(6)
    y, m = _data("regression", rng, n=300)
    d = (y - m[0]) / 2.0
    expected = float(np.mean(4.0 * (np.sqrt(1 + d ** 2) - 1)))
    got = evaluate(get_metric("mphe", huber_slope=2.0), [(y, m, None)], IDENTITY)
    assert _rel(got, expected) <= 1e-12


def test_metric_must_fit_the_objective():
    with pytest.raises(ValueError, match="multiclass objectives"):
        get_metric("mlogloss", SIGMOID)
    with pytest.raises(ValueError, match="not a multiclass metric"):
        get_metric("logloss", SOFTPROB)
    with pytest.raises(ValueError, match="single-output"):
        get_metric("rmse").partial(np.zeros(3), np.zeros((2, 3)), None, IDENTITY)
    with pytest.raises(ValueError, match="multiclass models"):
        get_metric("merror").partial(np.zeros(3), np.zeros((1, 3)), None, None)
    with pytest.raises(ValueError, match=r"integer labels in \[0, 3\)"):
        get_metric("mlogloss").partial(np.array([0.0, 3.0]), np.zeros((3, 2)), None, SOFTPROB)
    with pytest.raises(ValueError, match=r"labels in \[0, 1\]"):
        get_metric("logloss").partial(np.array([0.0, 2.0]), np.zeros((1, 2)), None, SIGMOID)


def test_get_metric_passes_metrics_through_and_wraps_callables():
    metric = get_metric("rmse")
    assert get_metric(metric) is metric

    def my_mae(y_true, y_pred):
        return float(np.mean(np.abs(y_true - y_pred)))
    wrapped = get_metric(my_mae)
    assert isinstance(wrapped, CustomMetric) and wrapped.name == "my_mae"


# ---------------------------------------------------------------------------------------
# custom metrics
# ---------------------------------------------------------------------------------------
def test_custom_metric_is_called_once_on_all_the_rows_in_partition_order():
    rng = np.random.default_rng(31)
    y, m = _data("regression", rng, n=900)
    blocks = _blocks(y, m, None, 8, rng)
    assert any(len(b[0]) == 0 for b in blocks)          # an empty partition among them
    calls = []

    def worst(yt, yp):
        calls.append((yt.copy(), yp.copy()))
        return float(np.max(np.abs(yt - yp)))
    got = evaluate(CustomMetric(worst), blocks, IDENTITY)
    # the global maximum, not a mean of the partitions' maxima (what it was before)
    assert got == np.max(np.abs(y - m[0]))
    assert len(calls) == 1
    np.testing.assert_array_equal(calls[0][0], y)        # the rows in partition order
    np.testing.assert_array_equal(calls[0][1], m[0])
    # whatever the partitioning: an AUC as scikit-learn computes it on all the rows
    yb, mb = _data("binary", rng, n=900)
    auc = CustomMetric(skm.roc_auc_score)
    exact = skm.roc_auc_score(yb, _sigmoid(mb[0]))
    for parts in (1, 3, 8):
        assert evaluate(auc, _blocks(yb, mb, None, parts, rng), SIGMOID) == \
            pytest.approx(exact, rel=1e-12)


def test_an_estimator_saved_with_metric_functions_fits_again_after_loading(tmp_path):
    # a function cannot be stored in a model file: it is left out of eval_metric's list
    # (it was saved as null, and the loaded estimator's next fit failed on it)
    from daskboost import DaskBoostClassifier
    rng = np.random.default_rng(33)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    for saved, loaded in ((["auc", skm.roc_auc_score], ["auc"]),
                          ([skm.roc_auc_score], [])):
        model = DaskBoostClassifier(n_estimators=2, eval_metric=saved).fit(X, y)
        model.save_model(tmp_path / "model.json")
        again = DaskBoostClassifier()
        again.load_model(tmp_path / "model.json")
        assert again.eval_metric == loaded
        again.fit(X, y, eval_set=[(X, y)])
        assert list(again.evals_result_["validation_0"]) == (loaded or ["logloss"])


def test_custom_metric_with_sample_weights_and_probabilities():
    rng = np.random.default_rng(32)
    y, m = _data("multiclass", rng, n=600)
    w = rng.uniform(0.5, 2.0, 600)

    def mlogloss(y_true, y_pred, sample_weight=None):
        assert y_pred.shape == (len(y_true), 3)
        return skm.log_loss(y_true, y_pred, sample_weight=sample_weight, labels=[0, 1, 2])
    blocks = _blocks(y, m, w, 3, rng)
    got = evaluate(CustomMetric(mlogloss), blocks, SOFTPROB)
    # a weighted mean over rows, combined with the partitions' weight sums: exact
    assert _rel(got, evaluate("mlogloss", blocks, SOFTPROB)) <= 1e-12


def test_custom_metric_rejects_non_finite_values():
    bad = CustomMetric(lambda yt, yp: float("nan"), name="broken_metric")
    with pytest.raises(ValueError, match="'broken_metric' returned nan"):
        evaluate(bad, [(np.ones(3), np.ones((1, 3)), None)], IDENTITY)
    inf = CustomMetric(lambda yt, yp: np.inf, name="inf_metric")
    with pytest.raises(ValueError, match="'inf_metric' returned inf on 3 rows"):
        evaluate(inf, [(np.ones(3), np.ones((1, 3)), None)], IDENTITY)
    with pytest.raises(ValueError, match="must return a number"):
        evaluate(CustomMetric(lambda yt, yp: "high", name="text"),
                 [(np.ones(3), np.ones((1, 3)), None)], IDENTITY)
    with pytest.raises(TypeError, match="callable"):
        CustomMetric(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(evaluate(CustomMetric(lambda yt, yp: 1.0),
                                   [(np.zeros(0), np.zeros((1, 0)), None)], IDENTITY))


def test_sigmoid_logloss_kernel_is_numpys_logaddexp_form():
    # the eval pass's log loss from margins: one exp and one log1p a row instead of two
    # logaddexp over the array; the same values, extremes and soft labels included, up
    # to the last bits (the kernel's exp and log1p are fast_exp's and fast_log's, each
    # within 1 ulp of the C library's: measured at most 4.7e-16 relative)
    from daskboost.metrics import _LOG_EPS, _sigmoid_logloss
    rng = np.random.default_rng(7)
    m = np.concatenate([rng.normal(0, 3, 20000), rng.normal(0, 40, 2000),
                        [0.0, -0.0, 1e-300, -1e-300, 36.8, -36.8, 700.0, -700.0, 745.0]])
    y = np.concatenate([(rng.random(20000) < 0.5).astype(float), rng.random(2000),
                        [0, 1, 0, 1, 0, 1, 0.5, 0.5, 1]])
    max_loss = -math.log(_LOG_EPS)
    pos = np.minimum(np.logaddexp(0.0, -m), max_loss)
    neg = np.minimum(np.logaddexp(0.0, m), max_loss)
    expected = np.where(y == 0.0, 0.0, y * pos) + np.where(y == 1.0, 0.0, (1.0 - y) * neg)
    got = _sigmoid_logloss(y, m, max_loss)
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0.0)


@pytest.mark.parametrize("n_classes", [2, 3, 10])
def test_softmax_logloss_kernel_is_log_softmax(n_classes):
    # mlogloss's row losses from one loop over the rows: the values of the clipped numpy
    # log softmax, huge margins (the clip) included.  The same operations, but the
    # kernel's exp and log are libm's and numpy's are its own vectorised ones, chosen
    # by CPU and numpy version: with numpy 2.4.6 on this machine 0.8% of the rows
    # differ in the last bit (at most 8.3e-16 relative), so a few ulps are allowed
    from daskboost.links import log_softmax
    from daskboost.metrics import _LOG_EPS, _softmax_logloss
    rng = np.random.default_rng(8)
    n = 5000
    m = rng.normal(0, 4, size=(n_classes, n))
    m[:, :50] *= 100.0
    labels = rng.integers(0, n_classes, n)
    max_loss = -math.log(_LOG_EPS)
    expected = np.minimum(-log_softmax(m)[labels, np.arange(n)], max_loss)
    np.testing.assert_allclose(_softmax_logloss(labels, m, max_loss), expected, rtol=4e-15,
                               atol=0)
