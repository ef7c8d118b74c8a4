"""``n_jobs``: how many threads a fit, ``cv`` and in-memory prediction use in this process
(joblib's count: -1 every core, -2 all but one). It changes how a model is computed, never
the model."""

import os

import numpy as np
import pytest

import daskboost
from daskboost import DaskBoostClassifier, DaskBoostRegressor, TrainingCallback
from daskboost.local_threads import check_n_jobs, local_thread_count, local_threads


def data(n=60_000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    return X, (X[:, 0] + rng.normal(size=n) > 0).astype(int)


class ThreadCount(TrainingCallback):
    """After each round: the threads the fit's passes may use (what the in-process
    runtime sized its pool and native threads by)."""

    def __init__(self):
        self.counts = []

    def after_iteration(self, model, epoch, evals_log):
        self.counts.append(local_thread_count())
        return False


@pytest.mark.parametrize("n_jobs, expected", [
    (None, None), (1, 1), (3, 3), (-1, os.cpu_count()), (-10_000, 1),
    (-2, max(1, os.cpu_count() - 1)),
])
def test_check_n_jobs(n_jobs, expected):
    assert check_n_jobs(n_jobs) == expected


@pytest.mark.parametrize("n_jobs, error, match", [
    (0, ValueError, r"n_jobs=0 must be a number of threads >= 1"),
    (1.5, TypeError, r"n_jobs=1\.5 must be an integer or None"),
    ("2", TypeError, r"n_jobs='2' must be an integer or None"),
    (True, TypeError, r"n_jobs=True must be an integer or None"),
])
def test_bad_n_jobs_is_refused_before_any_work(n_jobs, error, match):
    X, y = data(n=200)
    with pytest.raises(error, match=match):
        DaskBoostClassifier(n_jobs=n_jobs).fit(X, y)
    with pytest.raises(error, match=match):
        daskboost.cv({"n_jobs": n_jobs}, X, y.astype(float), nfold=2, num_boost_round=1)


def test_the_fit_uses_that_many_threads_and_gives_the_same_model():
    X, y = data()
    one, two = ThreadCount(), ThreadCount()
    single = DaskBoostClassifier(n_estimators=4, n_jobs=1).fit(X, y, callbacks=[one])
    double = DaskBoostClassifier(n_estimators=4, n_jobs=2).fit(X, y, callbacks=[two])
    assert one.counts == [1] * 4
    assert two.counts == [2] * 4
    default = DaskBoostClassifier(n_estimators=4).fit(X, y)
    for model in (single, double):
        np.testing.assert_array_equal(model.predict_proba(X), default.predict_proba(X))
    # nothing is left set after the fit
    assert local_thread_count() == (os.cpu_count() or 1)


def test_prediction_uses_it_and_predicts_the_same():
    X, y = data()
    model = DaskBoostClassifier(n_estimators=4, n_jobs=1).fit(X, y)
    expected = model.predict_proba(X)
    model.set_params(n_jobs=2)
    np.testing.assert_array_equal(model.predict_proba(X), expected)
    np.testing.assert_array_equal(model.set_params(n_jobs=1).apply(X),
                                  model.set_params(n_jobs=None).apply(X))


def test_local_threads_sets_and_restores():
    before = local_thread_count()
    with local_threads(1):
        assert local_thread_count() == 1
    with local_threads(None):
        assert local_thread_count() == before
    assert local_thread_count() == before


def test_cv_takes_n_jobs_and_xgboosts_nthread():
    X, y = data(n=5000)
    frames = [daskboost.cv({"max_depth": 3, key: value}, X, y.astype(float), nfold=3,
                           num_boost_round=3)
              for key, value in (("n_jobs", 1), ("nthread", 2), ("n_jobs", None))]
    for frame in frames[1:]:
        assert frame.equals(frames[0])


def test_not_saved_with_the_model(tmp_path):
    X, y = data(n=2000)
    model = DaskBoostRegressor(n_estimators=2, n_jobs=1).fit(X, y.astype(float))
    path = tmp_path / "model.json"
    model.save_model(path)
    assert "n_jobs" not in path.read_text()
    assert DaskBoostRegressor().load_model(path).n_jobs is None
