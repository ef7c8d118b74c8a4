"""Shared small data sets for the estimator-level tests.

Features take few distinct integer values, so every value gets a bin of its own (the
quantile sketch is exact) and models trained on differently partitioned copies of the
same rows differ only by floating point summation order.
"""

import os

import numpy as np
import pandas as pd
import pytest

# Every model a test trains passes the checks a model file passes (daskboost.model_file).
os.environ["DASKBOOST_CHECK_MODELS"] = "1"
# scikit-learn's array API estimator check (tests/test_sklearn_checks.py) runs only when
# scipy was imported with this set; otherwise it is skipped
os.environ["SCIPY_ARRAY_API"] = "1"

N_ROWS = 1200
FAST = {"n_estimators": 8, "max_depth": 3}


def _features(rng, n=N_ROWS, n_features=4):
    return rng.integers(0, 6, size=(n, n_features)).astype(np.float64)


@pytest.fixture
def fast():
    """Small hyperparameters for quick fits (a fresh dict per test)."""
    return dict(FAST)


@pytest.fixture
def reg_xy():
    """(X, y): float64 numpy features with few distinct values and a noisy target."""
    rng = np.random.default_rng(1234)
    X = _features(rng)
    y = 1.5 * X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + rng.normal(scale=0.5, size=len(X))
    return X, y


@pytest.fixture
def clf_xy():
    """(X, y): float64 numpy features and 0/1 integer labels that depend on them."""
    rng = np.random.default_rng(99)
    X = _features(rng)
    logit = X[:, 0] - X[:, 1] + 0.5 * (X[:, 2] > 2) + rng.normal(scale=1.0, size=len(X))
    return X, (logit > 0).astype(np.int64)


@pytest.fixture
def reg_df(reg_xy):
    """(DataFrame with string column names, y as a Series) of ``reg_xy``."""
    X, y = reg_xy
    return pd.DataFrame(X, columns=["f0", "f1", "f2", "f3"]), pd.Series(y, name="target")


@pytest.fixture(scope="session")
def cluster():
    """A 2-worker ``distributed.LocalCluster`` (worker processes, one thread each),
    started once and shared by the tests that run on a cluster (enter a
    ``distributed.Client(cluster)`` to use it)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local_cluster:
        yield local_cluster
