"""Objectives: gradients against finite differences, F0 against a direct minimisation."""

import math

import numpy as np
import pytest

from daskboost.objectives import get_objective


def squared_error_loss(y, m):
    return 0.5 * (y - m) ** 2


def logistic_loss(y, m):
    p = 1.0 / (1.0 + np.exp(-m))
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


LOSSES = {"reg:squarederror": squared_error_loss, "binary:logistic": logistic_loss}


def labels_for(name, rng, n):
    return rng.normal(size=n) if name == "reg:squarederror" else rng.integers(0, 2, n).astype(float)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_finite_differences(name):
    rng = np.random.default_rng(0)
    n = 200
    y = labels_for(name, rng, n)
    margin = rng.normal(size=n) * 2
    weight = rng.uniform(0.5, 2.0, n)
    grad, hess = get_objective(name).gradients(margin, y.astype(np.float32), weight.astype(np.float32))
    loss = LOSSES[name]
    eps = 1e-4
    fd_grad = (loss(y, margin + eps) - loss(y, margin - eps)) / (2 * eps) * weight
    fd_hess = (loss(y, margin + eps) - 2 * loss(y, margin) + loss(y, margin - eps)) / eps ** 2 * weight
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hess, fd_hess, rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_base_margin_minimises_the_weighted_loss(name):
    rng = np.random.default_rng(1)
    y = labels_for(name, rng, 500)
    w = rng.uniform(0.1, 3.0, 500)
    obj = get_objective(name)
    c = obj.base_margin(float(w @ y), float(w.sum()))
    total = lambda m: float(w @ LOSSES[name](y, np.full_like(y, m)))
    assert total(c) <= total(c + 1e-3) and total(c) <= total(c - 1e-3)


def test_base_score_is_in_output_space():
    assert get_objective("reg:squarederror").margin_from_base_score(2.5) == 2.5
    assert get_objective("binary:logistic").margin_from_base_score(0.5) == 0.0
    assert get_objective("binary:logistic").margin_from_base_score(0.8) == pytest.approx(math.log(4))
    with pytest.raises(ValueError, match="base_score=1.5"):
        get_objective("binary:logistic").margin_from_base_score(1.5)


def test_logistic_start_stays_finite_for_one_class():
    assert math.isfinite(get_objective("binary:logistic").base_margin(10.0, 10.0))


def test_logistic_hessian_never_zero():
    obj = get_objective("binary:logistic")
    _, hess = obj.gradients(np.array([80.0, -80.0]), np.array([1.0, 0.0], np.float32), None)
    assert (hess > 0).all()


def test_logistic_labels_outside_unit_interval_are_rejected():
    with pytest.raises(ValueError, match=r"labels in \[0, 1\]"):
        get_objective("binary:logistic").check_labels(-1.0, 1.0)


def test_unknown_objective_lists_the_valid_ones():
    with pytest.raises(ValueError, match="reg:squarederror"):
        get_objective("reg:nonsense")
