"""Objectives: gradients against finite differences of the loss, F0 against a direct
minimisation, label and parameter checks, output transforms, and agreement with
xgboost 3.2 (intercepts, base_score mapping, gradient sums)."""

import json
import math
import sys

import numba
import numpy as np
import pytest

from daskboost import links, objectives
from daskboost.objectives import (
    BINARY, KINDS, MULTICLASS, OBJECTIVES, RANKING, REGRESSION, LabelStats,
    classifier_objectives,
    get_objective, is_classification, objective_kind, objectives_of_kind, regressor_objectives,
)

# (test id, objective name, parameters): every objective, some with several settings
CASES = [
    ("squarederror", "reg:squarederror", {}),
    ("squaredlogerror", "reg:squaredlogerror", {}),
    ("absoluteerror", "reg:absoluteerror", {}),
    ("pseudohuber", "reg:pseudohubererror", {"huber_slope": 1.5}),
    ("quantile0.3", "reg:quantileerror", {"quantile_alpha": 0.3}),
    ("quantile0.9", "reg:quantileerror", {"quantile_alpha": 0.9}),
    ("reglogistic", "reg:logistic", {}),
    ("binarylogistic", "binary:logistic", {}),
    ("logitraw", "binary:logitraw", {}),
    ("hinge", "binary:hinge", {}),
    ("poisson", "count:poisson", {}),
    ("poisson-mds0.7", "count:poisson", {"max_delta_step": 0.7}),
    ("gamma", "reg:gamma", {}),
    ("tweedie1.0", "reg:tweedie", {"tweedie_variance_power": 1.0}),
    ("tweedie1.5", "reg:tweedie", {"tweedie_variance_power": 1.5}),
    ("tweedie1.9", "reg:tweedie", {"tweedie_variance_power": 1.9}),
    ("softprob", "multi:softprob", {"num_class": 3}),
    ("softmax", "multi:softmax", {"num_class": 4}),
]
IDS = [c[0] for c in CASES]
KINKED = {"reg:absoluteerror", "reg:quantileerror",   # loss not twice differentiable
          "binary:hinge"}


def test_every_objective_is_covered():
    # (the ranking objectives' gradients are a query's, not a row's: tests/test_ranking.py;
    # survival:aft's labels are intervals: tests/test_survival.py)
    assert {c[1] for c in CASES} == set(OBJECTIVES) - set(objectives_of_kind(RANKING)) - {
        "survival:aft"}


def labels_for(name, params, rng, n):
    if name in ("reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror",
                "reg:quantileerror"):
        return rng.normal(size=n) * 2 + 1
    if name == "reg:logistic":
        return rng.uniform(0, 1, n)
    if name.startswith("binary:"):
        return rng.integers(0, 2, n).astype(float)
    if name == "count:poisson":
        return rng.poisson(3.0, n).astype(float)
    if name in ("reg:gamma", "reg:squaredlogerror"):
        return rng.gamma(2.0, 1.5, n)
    if name == "reg:tweedie":   # compound Poisson-gamma: many exact zeros
        return np.where(rng.uniform(size=n) < 0.3, 0.0, rng.gamma(2.0, 1.5, n))
    return rng.integers(0, params["num_class"], n).astype(float)


def stats_for(name, y, w, summary_size=4096):
    return LabelStats.from_labels(y, w, summary_size=summary_size,
                                  classifier=name.startswith("multi:"))


# ---------------------------------------------------------------------------
# gradients and hessians
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_match_finite_differences(case):
    """g_k = w dl/dm_k and h_k = w d2l/dm_k^2 by central differences (step 1e-4),
    grad within rtol 1e-4 / atol 1e-5, hess within rtol 1e-3 / atol 1e-4.
    xgboost's conventions where they differ from the exact second derivative:
    absolute/quantile error h = w (exact: 0 away from the kink; margins are kept
    >= 0.05 from the labels so the difference quotients are exact); softmax
    h_k = 2 p_k (1 - p_k) w, twice the diagonal second derivative; Poisson with
    max_delta_step s: h = exp(s) * exp(m) w.  Squared log error: margins within 0.6x-1.6x
    of the labels, inside its domain (> -1, where xgboost clamps) and where its
    hessian is the exact one (xgboost floors it at 1e-6 where it would be negative)."""
    _, name, params = case
    obj = get_objective(name, **params)
    rng = np.random.default_rng(0)
    n, K = 300, obj.n_outputs()
    y = labels_for(name, params, rng, n)
    w = rng.uniform(0.5, 2.0, n).astype(np.float32)
    margin = rng.normal(size=(K, n))
    if name in KINKED:  # (kept >= 0.05 from the kink: the label, or for hinge t = 2y - 1)
        kink = 2.0 * y - 1.0 if name == "binary:hinge" else y
        margin = kink[None, :] + rng.choice([-1, 1], n) * rng.uniform(0.05, 2.0, n)
    if name == "reg:squaredlogerror":
        margin = (y * rng.uniform(0.6, 1.6, n))[None, :]
    grad, hess = obj.gradients(margin, y.astype(np.float32), w)
    assert grad.shape == hess.shape == (K, n)
    assert grad.dtype == hess.dtype == np.float64   # weighted: float64, see gradient_dtype
    assert np.array_equal(grad / w, (grad / w).astype(np.float32))  # w * float32(g) exactly
    y32 = y.astype(np.float32).astype(np.float64)   # the labels the kernel saw
    wd = w.astype(np.float64)
    step = 1e-4
    for k in range(K):
        up, down = margin.copy(), margin.copy()
        up[k] += step
        down[k] -= step
        l_up, l_mid, l_down = obj.loss(y32, up), obj.loss(y32, margin), obj.loss(y32, down)
        fd_grad = (l_up - l_down) / (2 * step) * wd
        fd_hess = (l_up - 2 * l_mid + l_down) / step ** 2 * wd
        np.testing.assert_allclose(grad[k], fd_grad, rtol=1e-4, atol=1e-5)
        if name in KINKED:
            np.testing.assert_allclose(fd_hess, 0.0, atol=1e-4)
            if name == "binary:hinge":  # xgboost's: 1 inside the margin, FLT_MIN outside
                inside = margin[k] * (2.0 * y32 - 1.0) < 1.0
                np.testing.assert_array_equal(hess[k], np.where(
                    inside, w, np.finfo(np.float32).tiny))
                assert 0 < inside.sum() < n
            else:
                np.testing.assert_array_equal(hess[k], w)
            continue
        if name.startswith("multi:"):
            fd_hess = 2.0 * fd_hess
        if name == "count:poisson":
            fd_hess = math.exp(params.get("max_delta_step", 0.0)) * fd_hess
        np.testing.assert_allclose(hess[k], fd_hess, rtol=1e-3, atol=1e-4)
        assert (hess[k] > 0).all()


@pytest.mark.parametrize("name", ["binary:logistic", "multi:softprob"])
def test_clamped_hessians_stay_positive_at_extreme_margins(name):
    obj = get_objective(name, num_class=3)
    K = obj.n_outputs()
    margin = np.array([[800.0, -800.0, 40.0]] * K)
    margin[0] *= -1
    y = np.array([1.0, 0.0, 1.0], np.float32)
    grad, hess = obj.gradients(margin, y, None)
    assert np.isfinite(grad).all()
    assert (hess > 0).all()


def test_gradients_accept_float64_labels_weights_and_1d_margins():
    obj = get_objective("reg:squarederror")
    y = np.array([1.0, 2.0, 3.0])
    g64, h64 = obj.gradients(np.zeros((1, 3)), y, np.array([1.0, 2.0, 3.0]))
    g1d, _ = obj.gradients(np.zeros(3), y.astype(np.float32), None)
    np.testing.assert_array_equal(g64, [[-1, -4, -9]])
    np.testing.assert_array_equal(h64, [[1, 2, 3]])
    np.testing.assert_array_equal(g1d, [[-1, -2, -3]])
    with pytest.raises(ValueError, match=r"margins of shape \(3, n_rows\)"):
        get_objective("multi:softprob", num_class=3).gradients(np.zeros((2, 3)), y, None)


# ---------------------------------------------------------------------------
# the constant start F0
# ---------------------------------------------------------------------------


# (squared log error starts as xgboost does, one Newton step from 0: its own test below)
MINIMISING = [c for c in CASES if c[1] != "reg:squaredlogerror"]


@pytest.mark.parametrize("case", MINIMISING, ids=[c[0] for c in MINIMISING])
def test_base_margin_minimises_the_weighted_loss(case):
    """F0 = argmin_c sum_i w_i l(y_i, c) with an exact label summary: moving any
    coordinate by +-1e-3 does not decrease the weighted loss (up to 1e-12 relative)."""
    _, name, params = case
    obj = get_objective(name, **params)
    rng = np.random.default_rng(1)
    n, K = 500, obj.n_outputs()
    y = labels_for(name, params, rng, n)
    w = rng.uniform(0.1, 3.0, n)
    stats = stats_for(name, y, w)
    assert stats.label_summary.is_exact
    obj.check_labels(stats)
    c = obj.base_margin(stats)
    assert c.shape == (K,) and c.dtype == np.float64

    def total(const):
        return float(w @ obj.loss(y, np.repeat(const[:, None], n, axis=1)))

    best = total(c)
    for k in range(K):
        for delta in (1e-3, -1e-3):
            moved = c.copy()
            moved[k] += delta
            assert total(moved) >= best - 1e-12 * abs(best), (k, delta)


def test_squared_log_error_starts_with_xgboosts_newton_step():
    """F0 = sum w log1p(y) / sum w (1 + log1p(y)): the gradient and hessian sums at 0."""
    obj = get_objective("reg:squaredlogerror")
    rng = np.random.default_rng(2)
    y, w = rng.gamma(2.0, 1.5, 500), rng.uniform(0.1, 3.0, 500)
    logs = np.log1p(y)
    expected = (w @ logs) / (w @ (1.0 + logs))
    assert obj.base_margin(stats_for("reg:squaredlogerror", y, w))[0] == pytest.approx(
        expected, rel=1e-12)
    grad, hess = obj.gradients(np.zeros((1, 500)), y, w)
    assert expected == pytest.approx(-grad.sum() / hess.sum(), rel=1e-6)  # (float32 rounding)
    with pytest.raises(ValueError, match="needs labels > -1"):
        obj.check_labels(stats_for("reg:squaredlogerror", np.array([0.5, -1.0]), None))
    with pytest.raises(ValueError, match="base_score=-1.0 must be > -1"):
        obj.margin_from_base_score(-1.0)


def approximate_stats(y, w, size=33, parts=8):
    """Label statistics reduced over `parts` partitions with small sketches (eps > 0)."""
    chunks = np.array_split(np.arange(len(y)), parts)
    stats = [LabelStats.from_labels(y[i], w[i], summary_size=size) for i in chunks]
    total = stats[0]
    for s in stats[1:]:
        total = total.merge(s, summary_size=size)
    assert total.label_summary.eps > 0
    return total


@pytest.mark.parametrize("name,q", [("reg:absoluteerror", 0.5), ("reg:quantileerror", 0.1),
                                    ("reg:quantileerror", 0.75)])
def test_sketch_quantile_start_is_within_the_rank_error(name, q):
    """LAD/quantile F0 from an approximate sketch: W(< F0)/W - eps/2 <= q <= W(<= F0)/W + eps/2."""
    rng = np.random.default_rng(2)
    y = rng.standard_t(3, size=4000)
    w = rng.uniform(0.1, 3.0, 4000)
    stats = approximate_stats(y, w)
    eps = stats.label_summary.eps
    c = get_objective(name, quantile_alpha=q).base_margin(stats)[0]
    below, at_or_below = w[y < c].sum() / w.sum(), w[y <= c].sum() / w.sum()
    assert below - eps / 2 - 1e-12 <= q <= at_or_below + eps / 2 + 1e-12
    assert c in y


def test_pseudo_huber_start_from_an_approximate_sketch_has_a_small_derivative():
    """|sum_i w_i psi(F0 - y_i)| <= eps * W * delta for an eps-approximate summary
    (the sketch CDF is within eps W / 2 of the true one, psi has total variation 2 delta)."""
    rng = np.random.default_rng(3)
    y = rng.standard_t(2, size=4000) * 3 + 5
    w = rng.uniform(0.1, 3.0, 4000)
    stats = approximate_stats(y, w)
    eps = stats.label_summary.eps
    for delta in (0.3, 1.0, 10.0):
        obj = get_objective("reg:pseudohubererror", huber_slope=delta)
        c = obj.base_margin(stats)[0]
        z = c - y
        derivative = float(w @ (z / np.sqrt(1 + (z / delta) ** 2)))
        assert abs(derivative) <= eps * w.sum() * delta


def test_base_margin_needs_its_statistics():
    stats = LabelStats(n_rows=3, weight_sum=3.0, weighted_label_sum=3.0, label_min=0.0,
                       label_max=2.0, all_integer=True, label_summary=None, class_weights=None)
    for name in ("reg:absoluteerror", "reg:quantileerror", "reg:pseudohubererror"):
        assert get_objective(name).needs_label_summary
        with pytest.raises(ValueError, match=f"{name}.*label_summary"):
            get_objective(name).base_margin(stats)
    assert get_objective("multi:softmax", num_class=3).needs_class_weights
    with pytest.raises(ValueError, match="multi:softmax.*class_weights"):
        get_objective("multi:softmax", num_class=3).base_margin(stats)


def test_one_class_and_all_zero_starts_stay_finite():
    ones = LabelStats.from_labels(np.ones(10))
    zeros = LabelStats.from_labels(np.zeros(10))
    for name in ("binary:logistic", "reg:logistic", "binary:logitraw"):
        assert np.isfinite(get_objective(name).base_margin(ones)).all()
        assert np.isfinite(get_objective(name).base_margin(zeros)).all()
    for name in ("count:poisson", "reg:tweedie"):
        assert np.isfinite(get_objective(name).base_margin(zeros)).all()
    absent = LabelStats.from_labels(np.zeros(10), classifier=True)
    assert np.isfinite(get_objective("multi:softprob", num_class=3).base_margin(absent)).all()


def test_logistic_start_uses_class_weights_for_classifiers():
    stats = LabelStats(n_rows=4, weight_sum=4.0, weighted_label_sum=0.0, label_min=0.0,
                       label_max=1.0, all_integer=True, class_weights={0: 1.0, 1: 3.0})
    assert get_objective("binary:logistic").base_margin(stats)[0] == pytest.approx(math.log(3))


def test_label_stats_merge_equals_whole():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 4, 100).astype(float)
    w = rng.uniform(0.5, 2, 100)
    whole = LabelStats.from_labels(y, w, summary_size=64, classifier=True)
    merged = LabelStats.from_labels(y[:30], w[:30], summary_size=64, classifier=True).merge(
        LabelStats.from_labels(y[30:], w[30:], summary_size=64, classifier=True), 64)
    for field in ("n_rows", "weight_sum", "weighted_label_sum", "label_min", "label_max",
                  "all_integer"):
        assert getattr(merged, field) == pytest.approx(getattr(whole, field))
    assert merged.class_weights.keys() == whole.class_weights.keys()
    for k in whole.class_weights:
        assert merged.class_weights[k] == pytest.approx(whole.class_weights[k])
    np.testing.assert_array_equal(merged.label_summary.values, whole.label_summary.values)


# ---------------------------------------------------------------------------
# label and parameter validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name,params,labels,message", [
    ("count:poisson", {}, [0.0, 2.0, -1.0], r"count:poisson.*non-negative.*-1\.0"),
    ("reg:tweedie", {}, [0.0, -0.5], r"reg:tweedie.*non-negative.*-0\.5"),
    ("reg:gamma", {}, [1.0, 0.0], r"reg:gamma.*positive.*got label 0\.0"),
    ("binary:logistic", {}, [0.0, 1.5], r"binary:logistic.*\[0, 1\].*1\.5"),
    ("reg:logistic", {}, [-0.2, 1.0], r"reg:logistic.*\[0, 1\].*-0\.2"),
    ("binary:logitraw", {}, [0.0, 2.0], r"binary:logitraw.*\[0, 1\].*2\.0"),
    ("multi:softprob", {"num_class": 3}, [0.0, 3.0], r"multi:softprob.*\[0, 3\).*got label 3\.0"),
    ("multi:softmax", {"num_class": 3}, [0.0, 1.5], r"multi:softmax.*integer.*1\.5"),
    ("multi:softmax", {"num_class": 3}, [-1.0, 1.0], r"multi:softmax.*\[0, 3\).*-1\.0"),
    ("reg:squarederror", {}, [0.0, np.inf], r"reg:squarederror.*finite"),
])
def test_labels_outside_the_domain_are_rejected(name, params, labels, message):
    stats = LabelStats.from_labels(np.array(labels))
    with pytest.raises(ValueError, match=message):
        get_objective(name, **params).check_labels(stats)


def test_valid_labels_pass_and_empty_data_is_rejected():
    get_objective("reg:gamma").check_labels(LabelStats.from_labels([0.5, 2.0]))
    get_objective("multi:softmax", num_class=3).check_labels(
        LabelStats.from_labels([0.0, 2.0], classifier=True))
    with pytest.raises(ValueError, match="at least one row with positive weight"):
        get_objective("reg:squarederror").check_labels(LabelStats.from_labels([1.0], [0.0]))


def test_unknown_objective_lists_the_valid_ones():
    with pytest.raises(ValueError, match="reg:nonsense") as info:
        get_objective("reg:nonsense")
    for name in OBJECTIVES:
        assert repr(name) in str(info.value)


@pytest.mark.parametrize("name,params,message", [
    ("reg:pseudohubererror", {"huber_slope": 0.0}, r"huber_slope=0\.0 must be"),
    ("reg:pseudohubererror", {"huber_slope": -1.0}, r"huber_slope=-1\.0 must be"),
    ("reg:pseudohubererror", {"huber_slope": float("nan")}, r"huber_slope=nan"),
    ("reg:quantileerror", {"quantile_alpha": 0.0}, r"quantile_alpha=0\.0 must be in \(0, 1\)"),
    ("reg:quantileerror", {"quantile_alpha": 1.5}, r"quantile_alpha=1\.5 must be in \(0, 1\)"),
    ("reg:quantileerror", {"quantile_alpha": "x"}, r"quantile_alpha='x' must be a number"),
    ("reg:tweedie", {"tweedie_variance_power": 2.5},
     r"tweedie_variance_power=2\.5 must be in \[1, 2\)"),
    ("reg:tweedie", {"tweedie_variance_power": 2.0},
     r"tweedie_variance_power=2\.0 must be in \[1, 2\)"),
    ("reg:tweedie", {"tweedie_variance_power": 0.9},
     r"tweedie_variance_power=0\.9 must be in \[1, 2\)"),
    ("multi:softprob", {}, r"num_class=None must be an integer >= 2"),
    ("multi:softprob", {"num_class": 1}, r"num_class=1 must be an integer >= 2"),
    ("multi:softmax", {"num_class": 2.5}, r"num_class=2\.5 must be an integer >= 2"),
    ("count:poisson", {"max_delta_step": -1.0}, r"max_delta_step=-1\.0 must be"),
])
def test_bad_parameters_are_rejected(name, params, message):
    with pytest.raises(ValueError, match=message):
        get_objective(name, **params)


def test_unused_parameters_are_ignored():
    assert get_objective("reg:squarederror", num_class=None, huber_slope=-5,
                         quantile_alpha=7, tweedie_variance_power=9).n_outputs() == 1


# ---------------------------------------------------------------------------
# base_score and the output transform
# ---------------------------------------------------------------------------


def test_base_score_is_in_output_space():
    assert get_objective("reg:squarederror").margin_from_base_score(2.5).tolist() == [2.5]
    assert get_objective("reg:quantileerror").margin_from_base_score(-2.5).tolist() == [-2.5]
    assert get_objective("binary:logistic").margin_from_base_score(0.5).tolist() == [0.0]
    assert get_objective("reg:logistic").margin_from_base_score(0.8)[0] == \
        pytest.approx(math.log(4))
    assert get_objective("binary:logitraw").margin_from_base_score(1.5).tolist() == [1.5]
    for name in ("count:poisson", "reg:gamma", "reg:tweedie"):
        assert get_objective(name).margin_from_base_score(2.0)[0] == pytest.approx(math.log(2))
    np.testing.assert_array_equal(
        get_objective("multi:softprob", num_class=3).margin_from_base_score(-1.0), [-1.0] * 3)


@pytest.mark.parametrize("name,value,message", [
    ("binary:logistic", 1.5, r"base_score=1\.5 must be in \(0, 1\)"),
    ("reg:logistic", 0.0, r"base_score=0\.0 must be in \(0, 1\)"),
    ("count:poisson", 0.0, r"base_score=0\.0 must be > 0"),
    ("reg:gamma", -1.0, r"base_score=-1\.0 must be > 0"),
    ("reg:squarederror", float("nan"), r"base_score=nan must be finite"),
])
def test_base_score_outside_the_link_domain_is_rejected(name, value, message):
    with pytest.raises(ValueError, match=message):
        get_objective(name).margin_from_base_score(value)


def test_transforms():
    rng = np.random.default_rng(5)
    margin = rng.normal(size=(4, 50)) * 3
    margin[:, 0] = [1000.0, 999.0, -1000.0, 0.0]   # overflows without the max shift
    prob = get_objective("multi:softprob", num_class=4).transform(margin)
    assert prob.shape == (50, 4)
    assert np.isfinite(prob).all()
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    naive = np.exp(margin[:, 1:]) / np.exp(margin[:, 1:]).sum(axis=0)
    np.testing.assert_allclose(prob[1:], naive.T, rtol=1e-12)
    cls = get_objective("multi:softmax", num_class=4).transform(margin)
    assert cls.shape == (50,) and cls.dtype == np.float64
    np.testing.assert_array_equal(cls, margin.argmax(axis=0))
    one = margin[:1, 1:]
    for name in ("count:poisson", "reg:gamma", "reg:tweedie"):
        np.testing.assert_allclose(get_objective(name).transform(one), np.exp(one[0]), rtol=1e-15)
    for name in ("reg:squarederror", "binary:logitraw", "reg:absoluteerror"):
        np.testing.assert_array_equal(get_objective(name).transform(one), one[0])
    p = get_objective("binary:logistic").transform(np.array([[-800.0, 0.0, 800.0]]))
    np.testing.assert_array_equal(p, [0.0, 0.5, 1.0])


def test_default_metrics_are_xgboosts():
    expected = {"reg:squarederror": "rmse", "reg:absoluteerror": "mae",
                "reg:pseudohubererror": "mphe", "reg:quantileerror": "quantile",
                "reg:logistic": "rmse", "binary:logistic": "logloss",
                "binary:logitraw": "logloss", "count:poisson": "poisson-nloglik",
                "reg:gamma": "gamma-deviance", "reg:tweedie": "tweedie-nloglik@1.5",
                "multi:softprob": "mlogloss", "multi:softmax": "mlogloss"}
    for name, metric in expected.items():
        assert get_objective(name, num_class=3).default_metric == metric
    assert get_objective("reg:tweedie", tweedie_variance_power=1.0).default_metric == \
        "tweedie-nloglik@1"


def test_leaf_quantiles():
    assert get_objective("reg:absoluteerror").leaf_quantiles == (0.5,)
    assert get_objective("reg:quantileerror", quantile_alpha=0.2).leaf_quantiles == (0.2,)
    for name in OBJECTIVES:
        if name not in KINKED:
            assert get_objective(name, num_class=3).leaf_quantiles is None


# ---------------------------------------------------------------------------
# objective metadata: kind, probability output, class rule
# ---------------------------------------------------------------------------

# (kind, probability_output) of every objective, written out by hand
METADATA = {
    "reg:squarederror": (REGRESSION, False),
    "reg:absoluteerror": (REGRESSION, False),
    "reg:pseudohubererror": (REGRESSION, False),
    "reg:quantileerror": (REGRESSION, False),
    "reg:logistic": (REGRESSION, True),
    "binary:logistic": (BINARY, True),
    "binary:logitraw": (BINARY, False),
    "binary:hinge": (BINARY, False),
    "count:poisson": (REGRESSION, False),
    "reg:gamma": (REGRESSION, False),
    "reg:tweedie": (REGRESSION, False),
    "reg:squaredlogerror": (REGRESSION, False),
    "survival:aft": (REGRESSION, False),
    "multi:softprob": (MULTICLASS, True),
    "multi:softmax": (MULTICLASS, False),
    "rank:pairwise": (RANKING, False),
    "rank:ndcg": (RANKING, False),
    "rank:map": (RANKING, False),
}


def test_every_objective_has_its_kind_and_probability_flag():
    assert set(METADATA) == set(OBJECTIVES)
    for name, cls in OBJECTIVES.items():
        assert cls.kind in KINDS, name
        assert isinstance(cls.probability_output, bool), name
        assert (cls.kind, cls.probability_output) == METADATA[name], name
        assert objective_kind(name) == cls.kind
        # xgboost's naming: the binary:* and multi:* objectives are the classifiers
        assert is_classification(name) == name.startswith(("binary:", "multi:")), name


def test_metadata_helpers():
    assert objectives_of_kind(REGRESSION) == (
        "reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror", "reg:quantileerror",
        "reg:logistic", "count:poisson", "reg:gamma", "reg:tweedie", "reg:squaredlogerror",
        "survival:aft")
    assert objectives_of_kind(BINARY) == ("binary:logistic", "binary:logitraw", "binary:hinge")
    assert objectives_of_kind(MULTICLASS) == ("multi:softprob", "multi:softmax")
    assert objectives_of_kind(*KINDS) == tuple(OBJECTIVES)
    assert objectives_of_kind(REGRESSION, BINARY, probability_output=True) == (
        "reg:logistic", "binary:logistic")
    assert objectives_of_kind(MULTICLASS, probability_output=False) == ("multi:softmax",)
    # the lists the estimators accepted before the metadata existed, in the same order
    assert regressor_objectives() == (
        "reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror", "reg:quantileerror",
        "reg:logistic", "binary:logistic", "count:poisson", "reg:gamma", "reg:tweedie",
        "reg:squaredlogerror", "survival:aft")
    assert classifier_objectives() == (
        "binary:logistic", "binary:logitraw", "binary:hinge", "multi:softprob", "multi:softmax")
    for name in ("custom", "binary:svm", "multi:nonsense", None, 3, ["reg:logistic"]):
        assert objective_kind(name) is None
        assert not is_classification(name)
    with pytest.raises(ValueError, match="kind='classification' is not one of"):
        objectives_of_kind("classification")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_metadata_matches_what_the_objective_does(case):
    """kind and probability_output describe the outputs and transform the objective has."""
    _, name, params = case
    obj = get_objective(name, **params)
    K = obj.n_outputs()
    assert K == (params["num_class"] if obj.kind == MULTICLASS else 1)
    rng = np.random.default_rng(9)
    margin = rng.normal(0.0, 4.0, size=(K, 400))
    margin[0, :3] = [-30.0, 0.0, 30.0]
    out = obj.transform(margin)
    if obj.probability_output:
        expected = links.sigmoid(margin[0]) if K == 1 else links.softmax(margin)
        assert_same_bits(out, expected)
        assert out.min() >= 0.0 and out.max() <= 1.0
    elif obj.outputs_classes:  # the class itself (binary:hinge)
        np.testing.assert_array_equal(out, (margin[0] > 0).astype(np.float64))
    else:     # a margin, a mean on the log scale or a class index: not confined to [0, 1]
        assert out.min() < 0.0 or out.max() > 1.0
    if obj.kind == REGRESSION:
        with pytest.raises(ValueError, match="not a classification objective"):
            obj.class_index(margin)
    else:     # the predicted class is the most probable one
        proba = links.sigmoid(margin[0]) if K == 1 else links.softmax(margin)
        proba = np.column_stack([1.0 - proba, proba]) if K == 1 else proba
        best = obj.class_index(margin)
        assert best.dtype == np.float64
        assert_same_bits(best, links.class_index(margin))
        np.testing.assert_array_equal(best, proba.argmax(axis=1))
        if obj.kind == MULTICLASS and not obj.probability_output:   # multi:softmax
            assert_same_bits(out, best)


# ---------------------------------------------------------------------------
# link functions: one definition each, bit for bit the copies they replaced
# ---------------------------------------------------------------------------

def assert_same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


# The copies as they were before links.py (numpy and numba), kept verbatim as references.
def old_objectives_sigmoid(margin):
    margin = np.asarray(margin, dtype=np.float64)
    e = np.exp(-np.abs(margin))
    return np.where(margin >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def old_metrics_sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def old_sklearn_probabilities(n_outputs, margin):
    if n_outputs == 1:
        with np.errstate(over="ignore"):   # the old copy warned; the values are the point
            p = 1.0 / (1.0 + np.exp(-margin[0]))
        return np.column_stack([1.0 - p, p])
    shifted = np.exp(margin - margin.max(axis=0))
    return (shifted / shifted.sum(axis=0)).T


def old_sklearn_class_index(n_outputs, margin):
    if n_outputs == 1:
        return (margin[0] > 0).astype(np.float64)
    return np.argmax(margin, axis=0).astype(np.float64)


def old_softprob(m):
    z = m - m.max(axis=0, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=0, keepdims=True)).T


def old_log_softmax(m):
    shifted = m - m.max(axis=0)
    return shifted - np.log(np.exp(shifted).sum(axis=0))


@numba.njit(nogil=True)
def old_logistic_kernel(margin, y, weight, grad, hess):
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else weight[i]
        m = margin[0, i]
        if m >= 0.0:
            p = 1.0 / (1.0 + math.exp(-m))
        else:
            e = math.exp(m)
            p = e / (1.0 + e)
        grad[0, i] = (p - y[i]) * w
        hess[0, i] = max(p * (1.0 - p), 1e-16) * w


@numba.njit(nogil=True)
def old_softmax_kernel(margin, y, weight, grad, hess):
    K = margin.shape[0]
    for i in range(y.shape[0]):
        w = 1.0 if weight.shape[0] == 0 else weight[i]
        top = margin[0, i]
        for k in range(1, K):
            top = max(top, margin[k, i])
        total = 0.0
        for k in range(K):
            total += math.exp(margin[k, i] - top)
        label = int(y[i])
        for k in range(K):
            p = math.exp(margin[k, i] - top) / total
            g = p - 1.0 if k == label else p
            grad[k, i] = g * w
            hess[k, i] = max(2.0 * p * (1.0 - p), 1e-16) * w


@numba.njit
def old_scalar_sigmoids(margin, out):
    for i in range(margin.shape[0]):
        m = margin[i]
        if m >= 0.0:
            out[i] = 1.0 / (1.0 + math.exp(-m))
        else:
            e = math.exp(m)
            out[i] = e / (1.0 + e)


@numba.njit
def scalar_sigmoids(margin, out):
    for i in range(margin.shape[0]):
        out[i] = links.sigmoid_scalar(margin[i])


@numba.njit
def softmax_columns(margin, out):
    top, total = np.empty(margin.shape[1]), np.empty(margin.shape[1])
    links.softmax_rows(margin, 0, margin.shape[1], out, top, total)


# -800 .. 800 densely, the edges of exp's range, the extremes of float64, signed zeros
# and subnormals: finite and infinite margins whose sigmoid is not NaN
_EDGES = [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 36.7, -36.7, 709.78, -709.78,
          709.79, -709.79, 745.13, -745.13, 745.14, -745.14, 800.0, -800.0, 1e300, -1e300,
          sys.float_info.max, -sys.float_info.max, math.inf, -math.inf]
SIGMOID_GRID = np.concatenate([np.linspace(-800.0, 800.0, 320001), _EDGES,
                               np.random.default_rng(3).normal(0.0, 8.0, 20000)])


def softmax_grid(K, n=30000, seed=4):
    """``(K, n)`` margins, normal ones and columns mixing the extremes up to +-1e300 (no
    inf: ``inf - inf`` is NaN; no float max: ``-max - max`` overflows)."""
    rng = np.random.default_rng(seed)
    m = rng.normal(0.0, 6.0, size=(K, n))
    finite = np.array([e for e in _EDGES if abs(e) <= 1e300])
    m[:, : n // 3] = rng.choice(finite, size=(K, n // 3))
    m[:, n // 3: 2 * n // 3] = rng.uniform(-800.0, 800.0, size=(K, n // 3))
    return m


def test_sigmoid_gives_the_old_values_bit_for_bit():
    x = SIGMOID_GRID
    assert_same_bits(links.sigmoid(x), old_objectives_sigmoid(x))
    assert_same_bits(get_objective("binary:logistic").transform(x[None]), old_objectives_sigmoid(x))
    assert_same_bits(get_objective("reg:logistic").transform(x[None]), old_objectives_sigmoid(x))
    assert_same_bits(links.sigmoid_direct(x), old_metrics_sigmoid(x))
    # the kernels' form takes exp from fast_exp (within 1 ulp of the C library's): within
    # 2 ulp of the old values, and the same once rounded to float32 as gradients are
    scalar, old = np.empty_like(x), np.empty_like(x)
    scalar_sigmoids(x, scalar)
    old_scalar_sigmoids(x, old)
    assert np.all(np.abs(scalar - old) <= 2 * np.spacing(old))
    assert_same_bits(scalar.astype(np.float32), old.astype(np.float32))
    for p in (links.sigmoid(x), links.sigmoid_direct(x), scalar):
        assert not np.isnan(p).any() and p.min() >= 0.0 and p.max() <= 1.0
    # the direct form is the same function: equal bits for m >= 0, within 4 ulp of the split
    # form where that is a normal number (the reason both stay: they round differently)
    direct, split = links.sigmoid_direct(x), links.sigmoid(x)
    assert_same_bits(direct[x >= 0], split[x >= 0])
    normal = split >= sys.float_info.min
    assert np.all(np.abs(direct - split)[normal] <= 4 * np.spacing(split[normal]))


def test_logit_inverts_the_sigmoid():
    for p in (1e-6, 0.25, 0.5, 0.75, 1 - 1e-6):
        assert links.logit(p) == math.log(p / (1.0 - p))
        assert links.sigmoid(links.logit(p)) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("K", [2, 3, 7])
def test_softmax_gives_the_old_values_bit_for_bit(K):
    m = softmax_grid(K)
    p = links.softmax(m)
    assert not np.isnan(p).any()
    assert_same_bits(p, old_softprob(m))
    assert_same_bits(p, old_sklearn_probabilities(K, m))
    assert_same_bits(get_objective("multi:softprob", num_class=K).transform(m), old_softprob(m))
    assert_same_bits(get_objective("multi:softmax", num_class=K).transform(m),
                     old_sklearn_class_index(K, m))
    assert_same_bits(links.log_softmax(m), old_log_softmax(m))
    assert_same_bits(links.class_index(m), old_sklearn_class_index(K, m))
    # the numba form: the values the old kernel divided out, row by row, with exp from
    # fast_exp (within 1 ulp of the C library's): within 3 ulp, and the same in float32
    columns = np.empty((K, m.shape[1]))
    softmax_columns(m, columns)
    top = m.max(axis=0)
    e = np.array([[math.exp(v) for v in row] for row in m - top])
    total = np.zeros(m.shape[1])
    for k in range(K):                      # summed in class order, as the kernel does
        total += e[k]
    old = e / total
    assert np.all(np.abs(columns - old) <= 3 * np.spacing(old))
    assert_same_bits(columns.astype(np.float32), old.astype(np.float32))


def test_binary_class_rule_gives_the_old_values():
    x = SIGMOID_GRID[None]
    assert_same_bits(links.class_index(x), old_sklearn_class_index(1, x))
    assert_same_bits(get_objective("binary:logitraw").class_index(x),
                     old_sklearn_class_index(1, x))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("K", [1, 3, 5])
def test_link_kernels_give_the_old_gradients_bit_for_bit(K, weighted):
    rng = np.random.default_rng(K)
    if K == 1:
        margin = SIGMOID_GRID[None].copy()
        y = rng.uniform(0.0, 1.0, margin.shape[1])
        new_kernel, old_kernel = objectives._logistic_kernel, old_logistic_kernel
    else:
        margin = softmax_grid(K)
        y = rng.integers(0, K, margin.shape[1]).astype(np.float64)
        new_kernel, old_kernel = objectives._softmax_kernel, old_softmax_kernel
    unweighted = np.empty(0, np.float32)
    old = [np.empty(margin.shape, np.float32) for _ in range(2)]
    old_kernel(margin, y, unweighted, *old)
    if weighted:
        # weighted rows store w * (the unweighted float32 value) in float64
        w = rng.uniform(0.1, 3.0, margin.shape[1])
        new = [np.empty(margin.shape, np.float64) for _ in range(2)]
        new_kernel(margin, y, w, *new)
        old = [values.astype(np.float64) * w for values in old]
    else:
        new = [np.empty(margin.shape, np.float32) for _ in range(2)]
        new_kernel(margin, y, unweighted, *new)
    assert_same_bits(new[0], old[0])
    assert_same_bits(new[1], old[1])
    assert np.isfinite(new[0]).all() and np.isfinite(new[1]).all()


# ---------------------------------------------------------------------------
# agreement with xgboost 3.2
# ---------------------------------------------------------------------------

xgb = pytest.importorskip("xgboost")

N_XGB = 301


@pytest.fixture(scope="module")
def xgb_data():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(N_XGB, 3))
    w = rng.uniform(0.2, 3.0, N_XGB)
    return X, w, rng


def xgb_intercept(X, y, w, **params):
    """xgboost's estimated intercept (output space; a vector for multi:*)."""
    booster = xgb.train({"nthread": 1, **params}, xgb.DMatrix(X, y, weight=w), 1)
    learner = json.loads(booster.save_config())["learner"]
    return np.array(json.loads(learner["learner_model_param"]["base_score"]), dtype=np.float64)


def f32(a):
    """xgboost stores labels as float32; compare on the same values."""
    return np.asarray(a, np.float32).astype(np.float64)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("name", ["count:poisson", "reg:gamma", "reg:tweedie", "binary:logistic",
                                  "reg:logistic", "reg:squarederror"])
def test_mean_based_intercepts_match_xgboost(xgb_data, name, weighted):
    """exp(F0) (log link), sigmoid(F0) (logistic), F0 (identity) equal xgboost's estimated
    base_score to rtol 1e-5 (it is stored as float32)."""
    X, w, rng = xgb_data
    w = w if weighted else None
    y = f32(labels_for(name, {}, rng, N_XGB))
    obj = get_objective(name)
    f0 = obj.base_margin(LabelStats.from_labels(y, w))
    np.testing.assert_allclose(obj.transform(f0[:, None]), xgb_intercept(X, y, w, objective=name),
                               rtol=1e-5)


@pytest.mark.parametrize("name,q", [("reg:absoluteerror", 0.5), ("reg:quantileerror", 0.3),
                                    ("reg:quantileerror", 0.9)])
def test_quantile_intercepts_match_xgboost(xgb_data, name, q):
    """Weighted data: xgboost picks the first label whose cumulative weight reaches q W,
    the same value as ours (exactly, float32 labels, no ties in cumulative weight).
    Unweighted data: xgboost interpolates between order statistics at position
    q (n + 1) - 1 (Hyndman-Fan type 6), so its value lies between the labels
    just below and just above ours."""
    X, w, rng = xgb_data
    y = f32(rng.normal(size=N_XGB) * 2 + 1)
    obj = get_objective(name, quantile_alpha=q)
    ours_w = obj.base_margin(LabelStats.from_labels(y, w, summary_size=1024))[0]
    extra = {"quantile_alpha": q} if name == "reg:quantileerror" else {}
    theirs_w = xgb_intercept(X, y, w, objective=name, **extra)[0]
    assert ours_w == pytest.approx(theirs_w, rel=1e-7)
    ours = obj.base_margin(LabelStats.from_labels(y, None, summary_size=1024))[0]
    theirs = xgb_intercept(X, y, None, objective=name, **extra)[0]
    s = np.sort(y)
    i = np.searchsorted(s, ours)
    assert s[i - 1] - 1e-6 <= theirs <= s[i + 1] + 1e-6


@pytest.mark.parametrize("probabilities", [[0.2, 0.5, 0.3], [0.3, 0.7, 0.0]],
                         ids=["all-classes", "absent-class"])
def test_multiclass_intercepts_match_xgboost(xgb_data, probabilities):
    """xgboost 3.2 estimates the vector intercept log(prior_k) - mean_j log(prior_j), priors
    clipped below at 1e-6 (an absent class); ours agrees to atol 1e-5."""
    X, w, rng = xgb_data
    y = rng.choice(3, N_XGB, p=probabilities).astype(float)
    for weight in (None, w):
        obj = get_objective("multi:softprob", num_class=3)
        ours = obj.base_margin(LabelStats.from_labels(y, weight, classifier=True))
        theirs = xgb_intercept(X, y, weight, objective="multi:softprob", num_class=3)
        np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_xgboost_intercepts_that_differ_on_purpose(xgb_data):
    """Documented differences (see the class docstrings):
    reg:pseudohubererror: xgboost takes one Newton step from margin 0, -sum g(0)/sum h(0);
    ours is the argmin.  binary:logitraw: xgboost uses the label mean itself as the
    margin; ours is logit(mean), the argmin."""
    X, w, rng = xgb_data
    y = f32(rng.normal(size=N_XGB) + 10)
    theirs = xgb_intercept(X, y, w, objective="reg:pseudohubererror")[0]
    g0, h0 = get_objective("reg:pseudohubererror").gradients(np.zeros((1, N_XGB)), y, w)
    assert theirs == pytest.approx(-g0.sum(dtype=np.float64) / h0.sum(dtype=np.float64), rel=1e-4)
    ours = get_objective("reg:pseudohubererror").base_margin(
        LabelStats.from_labels(y, w, summary_size=1024))[0]
    assert abs(ours - 10) < 0.5 < abs(theirs - 10)
    yb = rng.integers(0, 2, N_XGB).astype(float)
    theirs = xgb_intercept(X, yb, w, objective="binary:logitraw")[0]
    p = float(w @ yb / w.sum())
    assert theirs == pytest.approx(p, rel=1e-5)
    ours = get_objective("binary:logitraw").base_margin(LabelStats.from_labels(yb, w))[0]
    assert ours == pytest.approx(math.log(p / (1 - p)))


@pytest.mark.parametrize("name,params,base_score", [
    ("reg:squarederror", {}, -1.5), ("reg:pseudohubererror", {}, 2.0),
    ("binary:logistic", {}, 0.3), ("reg:logistic", {}, 0.8), ("binary:logitraw", {}, 1.5),
    ("count:poisson", {}, 2.0), ("reg:gamma", {}, 0.5), ("reg:tweedie", {}, 3.0),
    ("multi:softprob", {"num_class": 3}, 0.7), ("multi:softmax", {"num_class": 3}, -1.0),
])
def test_base_score_maps_to_the_margin_xgboost_uses(xgb_data, name, params, base_score):
    """With learning rate 0 xgboost's output margin is its start; ours agrees to rtol 1e-6."""
    X, _, rng = xgb_data
    y = labels_for(name, params, rng, N_XGB)
    d = xgb.DMatrix(X, y)
    booster = xgb.train({"objective": name, "eta": 0.0, "base_score": base_score, "nthread": 1,
                         **params}, d, 1)
    theirs = booster.predict(d, output_margin=True)[0]
    ours = get_objective(name, **params).margin_from_base_score(base_score)
    np.testing.assert_allclose(np.atleast_1d(theirs), ours, rtol=1e-6)


@pytest.mark.parametrize("name,params", [
    ("reg:squarederror", {}), ("reg:pseudohubererror", {"huber_slope": 0.7}),
    ("binary:logistic", {}), ("count:poisson", {"max_delta_step": 0.0}),
    ("count:poisson", {"max_delta_step": 0.7}), ("reg:gamma", {}),
    ("reg:tweedie", {"tweedie_variance_power": 1.3}), ("multi:softprob", {"num_class": 3}),
], ids=["squared", "huber", "logistic", "poisson-mds0", "poisson-mds0.7", "gamma", "tweedie",
        "softprob"])
def test_gradient_sums_match_xgboost(xgb_data, name, params):
    """One xgboost tree that cannot split (gamma = 1e12) has root leaf -G / (H + lambda),
    with G, H the weighted sums of xgboost's gradients at the rows' margins (set per row
    through DMatrix base_margin).  Two lambdas give G and H; they match the sums of ours
    to rtol 2e-3 (xgboost accumulates in float32/float64 and predicts in float32).
    count:poisson with max_delta_step=0.7 is xgboost's default: its hessian carries
    exp(0.7); margins near log(mean) keep that leaf inside xgboost's [-0.7, 0.7] clip."""
    X, w, rng = xgb_data
    obj = get_objective(name, **params)
    K = obj.n_outputs()
    y = labels_for(name, params, rng, N_XGB)
    if name == "count:poisson":
        margin = math.log(y.mean()) + rng.normal(size=(K, N_XGB)) * 0.1 + 0.05
    else:
        margin = rng.normal(size=(K, N_XGB)) * 0.5 + (0.5 if name == "reg:gamma" else 0.0)
    lambdas = (0.0, 100.0)
    leaves = []
    for lam in lambdas:
        d = xgb.DMatrix(X, y, weight=w, base_margin=margin.T if K > 1 else margin[0])
        booster = xgb.train({"objective": name, "eta": 1.0, "gamma": 1e12, "lambda": lam,
                             "max_depth": 1, "nthread": 1, **params}, d, 1)
        pred = booster.predict(d, output_margin=True).reshape(N_XGB, K).T
        leaves.append((pred - margin)[:, 0].astype(np.float64))
    l0, l1 = leaves
    H = lambdas[1] * l1 / (l0 - l1)
    G = -l0 * H
    grad, hess = obj.gradients(margin, y.astype(np.float32), w.astype(np.float32))
    np.testing.assert_allclose(G, grad.sum(axis=1, dtype=np.float64), rtol=2e-3)
    np.testing.assert_allclose(H, hess.sum(axis=1, dtype=np.float64), rtol=2e-3)
