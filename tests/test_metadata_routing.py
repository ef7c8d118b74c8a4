"""scikit-learn's metadata routing (``set_fit_request``, ``set_score_request``, ...),
``decision_function`` and the HTML display: the estimators in scikit-learn's own tools."""

import inspect
import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.exceptions import UnsetMetadataPassedError

from daskboost import DaskBoostClassifier, DaskBoostRegressor

FOLDS = KFold(3)


@pytest.fixture(scope="module")
def data():
    """A label whose weighted and unweighted fits differ: the weights favour the rows
    where feature 2 is high, whose labels follow another rule."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 6, size=(300, 4)).astype(np.float64)
    y = np.where(X[:, 2] > 2, X[:, 0] > 2, X[:, 1] > 2).astype(np.int64)
    flip = rng.random(len(y)) < 0.15
    y[flip] = 1 - y[flip]
    weight = np.where(X[:, 2] > 2, 5.0, 0.2) * rng.uniform(0.5, 1.5, size=len(y))
    return X, y, weight


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def model_of(estimator):
    return estimator.get_booster().to_dict()


def fold_models(X, y, weight):
    """The models a weighted (or, weight None, unweighted) fit gives on each training fold."""
    return [model_of(DaskBoostClassifier(n_estimators=5).fit(
        X[train], y[train], sample_weight=None if weight is None else weight[train]))
        for train, _ in FOLDS.split(X)]


@pytest.mark.parametrize("fit_request, weighted", [(True, True), (False, False)])
def test_the_fit_request_decides_whether_the_weights_reach_fit(routing, data, fit_request,
                                                               weighted):
    X, y, weight = data
    # (when fit does not take them, the scorer does: weights that nothing requests are
    # refused by scikit-learn)
    estimator = DaskBoostClassifier(n_estimators=5).set_fit_request(
        sample_weight=fit_request).set_score_request(sample_weight=not fit_request)
    result = cross_validate(estimator, X, y, cv=FOLDS, params={"sample_weight": weight},
                            return_estimator=True)
    models = [model_of(e) for e in result["estimator"]]
    assert models == fold_models(X, y, weight if weighted else None)
    assert models != fold_models(X, y, None if weighted else weight)  # (they differ)


def test_weights_given_without_a_request_are_scikit_learns_error(routing, data):
    X, y, weight = data
    with pytest.raises(UnsetMetadataPassedError, match=r"set_fit_request"):
        cross_validate(DaskBoostClassifier(n_estimators=5), X, y, cv=FOLDS,
                       params={"sample_weight": weight})


def test_an_alias_and_the_score_request(routing, data):
    X, y, weight = data
    estimator = (DaskBoostClassifier(n_estimators=5)
                 .set_fit_request(sample_weight="row_weight")
                 .set_score_request(sample_weight="row_weight"))
    result = cross_validate(estimator, X, y, cv=FOLDS, params={"row_weight": weight},
                            return_estimator=True)
    assert [model_of(e) for e in result["estimator"]] == fold_models(X, y, weight)
    # the default scorer (accuracy) was given the weights of the test rows
    expected = [e.score(X[test], y[test], sample_weight=weight[test])
                for e, (_, test) in zip(result["estimator"], FOLDS.split(X))]
    np.testing.assert_allclose(result["test_score"], expected, rtol=1e-12)


def test_grid_search_and_pipeline_route_the_weights(routing, data):
    X, y, weight = data
    estimator = DaskBoostClassifier(n_estimators=5).set_fit_request(
        sample_weight=True).set_score_request(sample_weight=False)
    search = GridSearchCV(estimator, {"max_depth": [2, 3]}, cv=FOLDS, refit=True)
    search.fit(X, y, sample_weight=weight)
    best = DaskBoostClassifier(n_estimators=5, **search.best_params_)
    assert model_of(search.best_estimator_) == model_of(best.fit(X, y, sample_weight=weight))
    pipeline = make_pipeline(StandardScaler().set_fit_request(sample_weight=False),
                             clone(estimator))
    pipeline.fit(X, y, sample_weight=weight)
    direct = DaskBoostClassifier(n_estimators=5).fit(StandardScaler().fit_transform(X), y,
                                                      sample_weight=weight)
    assert model_of(pipeline[-1]) == model_of(direct)


def test_other_fit_parameters_can_be_requested(routing, data):
    X, y, _ = data
    margin = np.linspace(-1.0, 1.0, len(y))
    estimator = DaskBoostRegressor(n_estimators=3).set_fit_request(base_margin=True)
    # (the default scorer, score, takes no base margin: the fold's R^2 is not asked here)
    result = cross_validate(estimator, X, y.astype(np.float64), cv=FOLDS,
                            params={"base_margin": margin}, return_estimator=True)
    train = next(FOLDS.split(X))[0]
    direct = DaskBoostRegressor(n_estimators=3).fit(X[train], y[train].astype(np.float64),
                                                     base_margin=margin[train])
    assert model_of(result["estimator"][0]) == model_of(direct)


def test_the_setters_follow_the_methods_signatures():
    for cls in (DaskBoostClassifier, DaskBoostRegressor):
        fit_params = [p for p in inspect.signature(cls.fit).parameters if p not in
                      ("self", "X", "y")]
        assert list(inspect.signature(cls().set_fit_request).parameters) == fit_params
        assert list(inspect.signature(cls().set_score_request).parameters) == ["sample_weight"]
    assert hasattr(DaskBoostClassifier(), "set_predict_proba_request")
    assert hasattr(DaskBoostClassifier(), "set_decision_function_request")
    assert not hasattr(DaskBoostRegressor(), "set_predict_proba_request")


def test_requests_are_kept_by_clone_and_pickle_not_by_params(routing):
    estimator = DaskBoostClassifier(max_depth=2).set_fit_request(sample_weight=True)
    for copy in (clone(estimator), pickle.loads(pickle.dumps(estimator))):
        assert copy.get_metadata_routing().fit.requests["sample_weight"] is True
        assert repr(copy) == repr(estimator) == "DaskBoostClassifier(max_depth=2)"
    fresh = DaskBoostClassifier().get_metadata_routing()
    assert fresh.fit.requests["sample_weight"] is None
    assert fresh.score.requests == {"sample_weight": None}


def test_bad_requests_are_refused(routing):
    with pytest.raises(TypeError, match=r"set_fit_request: unexpected arguments \['weights'\]"):
        DaskBoostClassifier().set_fit_request(weights=True)
    with pytest.raises(ValueError, match="sample_weight"):
        DaskBoostClassifier().set_fit_request(sample_weight=3)


def test_requests_need_routing_enabled():
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        DaskBoostClassifier().set_fit_request(sample_weight=True)


# ---- decision_function ----------------------------------------------------------------------

def test_decision_function_is_the_margin(data):
    X, y, _ = data
    binary = DaskBoostClassifier(n_estimators=5).fit(X, y)
    decision = binary.decision_function(X)
    assert decision.shape == (len(y),)
    np.testing.assert_array_equal(decision, binary.predict(X, output_margin=True))
    np.testing.assert_array_equal(binary.classes_[(decision > 0).astype(int)], binary.predict(X))
    labels = np.array(["a", "b", "c"])[(X[:, 0] // 2).astype(int)]
    multi = DaskBoostClassifier(n_estimators=5).fit(X, labels)
    decision = multi.decision_function(X)
    assert decision.shape == (len(y), 3)
    np.testing.assert_array_equal(multi.classes_[decision.argmax(axis=1)], multi.predict(X))


def test_calibration_reads_the_decision_function(data):
    X, y, _ = data
    calibrated = CalibratedClassifierCV(DaskBoostClassifier(n_estimators=5), cv=FOLDS,
                                        method="sigmoid").fit(X, y)
    proba = calibrated.predict_proba(X)
    assert proba.shape == (len(y), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert (calibrated.predict(X) == y).mean() > 0.7


# ---- the HTML display -----------------------------------------------------------------------

def test_html_display_is_scikit_learns_diagram():
    html = DaskBoostRegressor(max_depth=3)._repr_html_()
    assert "DaskBoostRegressor" in html and "max_depth" in html
    with sklearn.config_context(display="text"):
        assert DaskBoostRegressor()._repr_html_() is None
