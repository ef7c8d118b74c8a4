"""In-memory input the way scikit-learn reads it (daskboost/sklearn.py): array-likes of
any kind train the same model as the numpy array they stand for, a column-vector y
warns, unfitted estimators raise NotFittedError, and ``import daskboost`` does not
import scikit-learn."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted

from daskboost import DaskBoostClassifier, DaskBoostRegressor
from daskboost.sklearn import _feature_input, _not_fitted_error

ESTIMATORS = [DaskBoostRegressor, DaskBoostClassifier]


class ArrayLike:
    """Neither a list nor a numpy array: only ``__array__`` (scikit-learn's _NotAnArray)."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def model_json(estimator):
    return json.dumps(estimator.get_booster().to_dict(), sort_keys=True)


@pytest.fixture(params=ESTIMATORS, ids=lambda cls: cls.__name__)
def problem(request, reg_xy, clf_xy):
    cls = request.param
    X, y = reg_xy if cls is DaskBoostRegressor else clf_xy
    w = np.random.default_rng(3).integers(1, 4, len(y)).astype(np.float64)
    return cls, X, y, w


@pytest.mark.parametrize("convert", [
    lambda a: a.tolist(),
    lambda a: tuple(map(tuple, a.tolist())) if a.ndim == 2 else tuple(a.tolist()),
    ArrayLike,
], ids=["list", "tuple", "__array__"])
def test_array_likes_train_the_numpy_model(problem, fast, convert):
    cls, X, y, w = problem
    reference = cls(**fast).fit(X, y, sample_weight=w)
    model = cls(**fast).fit(convert(X), convert(y), sample_weight=convert(w))
    assert model_json(model) == model_json(reference)
    assert model.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(model.predict(convert(X[:50])), reference.predict(X[:50]))
    assert model.score(convert(X), convert(y)) == reference.score(X, y)
    if cls is DaskBoostClassifier:
        np.testing.assert_array_equal(model.predict_proba(convert(X[:50])),
                                      reference.predict_proba(X[:50]))


def test_eval_sets_of_lists(reg_xy, fast):
    X, y = reg_xy
    reference = DaskBoostRegressor(**fast).fit(X, y, eval_set=[(X[:300], y[:300])],
                                               sample_weight_eval_set=[np.ones(300)])
    model = DaskBoostRegressor(**fast).fit(X, y, eval_set=[(X[:300].tolist(), y[:300].tolist())],
                                           sample_weight_eval_set=[[1.0] * 300])
    assert model.evals_result() == reference.evals_result()
    assert len(model.evals_result()["validation_0"]["rmse"]) == fast["n_estimators"]


def test_object_arrays_of_numbers_read_as_float64(problem, fast):
    cls, X, y, _ = problem
    reference = cls(**fast).fit(X, y)
    model = cls(**fast).fit(X.astype(object), y)
    assert model_json(model) == model_json(reference)
    np.testing.assert_array_equal(model.predict(X.astype(object)), reference.predict(X))


def test_regressor_reads_an_object_target_of_numbers_as_float64(reg_xy, fast):
    X, y = reg_xy
    reference = DaskBoostRegressor(**fast).fit(X, y)
    for target in (y.astype(object), pd.Series(y.astype(object))):
        assert model_json(DaskBoostRegressor(**fast).fit(X, target)) == model_json(reference)
    with pytest.raises(TypeError, match=r"y must be numeric for regression; .*'two'"):
        DaskBoostRegressor(**fast).fit(X, np.array([1.0, "two"] * (len(y) // 2), dtype=object))


def test_numeric_numpy_x_is_not_copied():
    for dtype in (np.float64, np.float32, np.int16, bool):
        X = np.zeros((5, 3), dtype=dtype)
        assert _feature_input(X) is X
        assert _feature_input(np.asfortranarray(X)).flags.f_contiguous


@pytest.mark.parametrize("column", [lambda y: y[:, None], lambda y: pd.DataFrame({"y": y})],
                         ids=["numpy", "pandas"])
def test_column_vector_y_warns_and_trains_the_1d_model(problem, fast, column):
    cls, X, y, _ = problem
    with pytest.warns(DataConversionWarning, match=r"A column-vector y was passed when a 1d "
                      r"array was expected \(shape \(1200, 1\)\)"):
        model = cls(**fast).fit(X, column(y))
    assert model_json(model) == model_json(cls(**fast).fit(X, y))


def test_score_with_a_column_vector_y(problem, fast):
    # (a (n, 1) y once broadcast against the (n,) predictions: n x n comparisons)
    cls, X, y, _ = problem
    model = cls(**fast).fit(X, y)
    with pytest.warns(DataConversionWarning, match="A column-vector y"):
        assert model.score(X, y[:, None]) == model.score(X, y)
    assert 0.5 < model.score(X, y) < 1.0


def test_column_vector_warning_points_at_the_callers_fit(reg_xy, fast):
    X, y = reg_xy
    with pytest.warns(DataConversionWarning) as record:
        DaskBoostRegressor(**fast).fit(X, y[:, None])
    assert record[0].filename == __file__


# ---- unfitted estimators -----------------------------------------------------------------

@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("attribute", ["feature_importances_", "best_iteration", "best_score"])
def test_fitted_only_properties_raise_not_fitted_error(cls, attribute, reg_xy, fast):
    estimator = cls(**fast)
    with pytest.raises(NotFittedError, match=rf"This {cls.__name__} instance is not fitted yet"):
        getattr(estimator, attribute)
    # a NotFittedError is an AttributeError: probes by getattr/hasattr (dask-ml's
    # GridSearchCV reads every public attribute ending in "_") see no attribute
    assert not hasattr(estimator, attribute)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    X, y = reg_xy
    estimator.fit(X, (y > 0).astype(int) if cls is DaskBoostClassifier else y)
    check_is_fitted(estimator)
    assert hasattr(estimator, attribute)


def test_not_fitted_error_without_scikit_learn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.exceptions", None)  # import raises ImportError
    error = _not_fitted_error(DaskBoostRegressor())
    assert not isinstance(error, NotFittedError)
    assert isinstance(error, ValueError) and isinstance(error, AttributeError)
    assert "This DaskBoostRegressor instance is not fitted yet" in str(error)


def test_import_daskboost_does_not_import_scikit_learn():
    """scikit-learn's import takes ~0.65 s (scipy.stats), more than daskboost's own."""
    code = ("import sys, daskboost; from daskboost import DaskBoostClassifier; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
