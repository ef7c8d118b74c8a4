"""sketch.weighted_quantile: exact weighted quantiles from exact summaries, the rank
bound eps * W / 2 for merged and pruned summaries, errors."""

import numpy as np
import pytest

from daskboost.sketch import merge, summarize_column, weighted_quantile


def rank_bounds(values, weights, x):
    """True W(< x) and W(<= x)."""
    return weights[values < x].sum(), weights[values <= x].sum()


QS = [0.0, 0.01, 0.1, 0.25, 0.3, 0.5, 0.77, 0.9, 0.99, 1.0]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_exact_summary_gives_an_exact_weighted_quantile(weighted):
    """eps = 0: W(< x) <= q W <= W(<= x) exactly (up to 1e-9 W rounding), x a data value."""
    rng = np.random.default_rng(0)
    y = np.round(rng.normal(size=500), 1)          # many ties
    w = rng.uniform(0.1, 3.0, 500) if weighted else np.ones(500)
    s = summarize_column(y, w if weighted else None, size=1000)
    assert s.is_exact
    W = w.sum()
    for q in QS:
        x = weighted_quantile(s, q)
        below, at_or_below = rank_bounds(y, w, x)
        assert below - 1e-9 * W <= q * W <= at_or_below + 1e-9 * W, q
        assert x in y
    assert weighted_quantile(s, 0.0) == y.min()
    assert weighted_quantile(s, 1.0) == y.max()


def test_exact_weighted_median_by_brute_force():
    """The weighted median minimises sum w |y - c| over the data values."""
    rng = np.random.default_rng(1)
    y = rng.standard_t(2, size=201)
    w = rng.uniform(0.1, 3.0, 201)
    x = weighted_quantile(summarize_column(y, w, size=512), 0.5)
    cost = np.abs(y[:, None] - y[None, :]).T @ w
    assert x == pytest.approx(y[np.argmin(cost)])


def test_boundary_target_takes_the_upper_value():
    s = summarize_column(np.array([1.0, 2.0, 3.0, 4.0]), None, size=8)
    assert weighted_quantile(s, 0.5) == 3.0     # W(<= 2) = 2 = q W exactly
    assert weighted_quantile(s, 0.49) == 2.0


@pytest.mark.parametrize("size", [5, 17, 65])
def test_approximate_summary_rank_is_within_half_eps(size):
    """Merged and pruned summaries: W(< x) - eps W / 2 <= q W <= W(<= x) + eps W / 2."""
    rng = np.random.default_rng(2)
    y = np.concatenate([rng.exponential(size=3000), np.full(500, 0.5)])
    w = rng.uniform(0.1, 3.0, y.size)
    parts = np.array_split(rng.permutation(y.size), 7)
    s = None
    for idx in parts:
        part = summarize_column(y[idx], w[idx], size)
        s = part if s is None else merge(s, part, size)
    assert s.eps > 0
    W = w.sum()
    assert s.total_weight == pytest.approx(W)
    for q in QS:
        x = weighted_quantile(s, q)
        below, at_or_below = rank_bounds(y, w, x)
        slack = s.eps * W / 2 + 1e-9 * W
        assert below - slack <= q * W <= at_or_below + slack, q


@pytest.mark.parametrize("q", [-0.1, 1.1, float("nan"), "half"])
def test_q_outside_unit_interval_is_rejected(q):
    s = summarize_column(np.array([1.0, 2.0]), None, size=4)
    with pytest.raises(ValueError, match="q=.* must be"):
        weighted_quantile(s, q)


def test_empty_summary_is_rejected():
    s = summarize_column(np.array([np.nan, np.nan]), None, size=4)
    with pytest.raises(ValueError, match="empty summary"):
        weighted_quantile(s, 0.5)
    s = summarize_column(np.array([1.0, 2.0]), np.zeros(2), size=4)
    with pytest.raises(ValueError, match="empty summary"):
        weighted_quantile(s, 0.5)
