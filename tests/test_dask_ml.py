"""The estimators in dask-ml's and scikit-learn's model selection and pipelines.

dask-ml's searches fit one estimator per task on the computed folds; on numpy, dask
arrays and dask DataFrames they must score every candidate as scikit-learn's own
``GridSearchCV`` does on the same rows, and refit the model a direct fit gives.
dask-ml's preprocessors hand the estimator lazy dask DataFrames.
"""

import json

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from dask_ml.model_selection import GridSearchCV, RandomizedSearchCV
from dask_ml.preprocessing import Categorizer, DummyEncoder
from sklearn import model_selection
from sklearn.pipeline import make_pipeline

from daskboost import DaskBoostClassifier, DaskBoostRegressor, cv

PARTITIONS = 4
GRID = {"max_depth": [1, 3], "learning_rate": [0.1, 0.5]}


def model_json(estimator):
    return json.dumps(estimator.get_booster().to_dict(), sort_keys=True)


@pytest.fixture(scope="module")
def data():
    """Features in few distinct values, a label with an interaction (depth matters)."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 8, size=(600, 4)).astype(np.float64)
    y = ((X[:, 0] - 3.5) * (X[:, 1] - 3.5) + rng.normal(scale=2.0, size=len(X)) > 0)
    return X, y.astype(np.int64)


def as_container(X, y, container):
    if container == "numpy":
        return X, y
    if container == "dask-array":
        chunk = len(X) // PARTITIONS
        return da.from_array(X, chunks=(chunk, -1)), da.from_array(y, chunks=chunk)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    return (dd.from_pandas(frame, npartitions=PARTITIONS),
            dd.from_pandas(pd.Series(y, name="y"), npartitions=PARTITIONS))


@pytest.fixture(scope="module")
def scikit_learn_scores(data):
    """scikit-learn's GridSearchCV, one process: the reference for every search here."""
    X, y = data
    search = model_selection.GridSearchCV(DaskBoostClassifier(n_estimators=10), GRID, cv=3)
    return search.fit(X, y).cv_results_


def assert_same_search(search, reference, folds=3):
    """Same candidates, and the same score on every fold.  (Not the means: dask-ml
    weights each fold by its size when the folds differ in size.)"""
    assert list(search.cv_results_["params"]) == list(reference["params"])
    for i in range(folds):
        np.testing.assert_array_equal(search.cv_results_[f"split{i}_test_score"],
                                      reference[f"split{i}_test_score"])


@pytest.mark.parametrize("container", ["numpy", "dask-array", "dask-dataframe"])
def test_dask_ml_grid_search(data, scikit_learn_scores, container):
    X, y = data
    search = GridSearchCV(DaskBoostClassifier(n_estimators=10), GRID, cv=3)
    Xc, yc = as_container(X, y, container)
    search.fit(Xc, yc)
    assert_same_search(search, scikit_learn_scores)
    best = scikit_learn_scores["params"][np.argmax(scikit_learn_scores["mean_test_score"])]
    assert search.best_params_ == best and best["max_depth"] == 3
    # refit on all the rows: the model of a direct fit
    direct = DaskBoostClassifier(n_estimators=10, **best).fit(Xc, yc)
    assert model_json(search.best_estimator_) == model_json(direct)


@pytest.mark.parametrize("container", ["numpy", "dask-dataframe"])
def test_dask_ml_randomized_search(data, container):
    X, y = data
    distributions = {"max_depth": [1, 2, 3, 4], "learning_rate": [0.05, 0.1, 0.3, 0.5],
                     "reg_lambda": [0.0, 1.0, 10.0]}
    reference = model_selection.RandomizedSearchCV(
        DaskBoostRegressor(n_estimators=10), distributions, n_iter=4, cv=3,
        random_state=0).fit(X, y.astype(np.float64)).cv_results_
    search = RandomizedSearchCV(DaskBoostRegressor(n_estimators=10), distributions, n_iter=4,
                                cv=3, random_state=0)
    Xc, yc = as_container(X, y.astype(np.float64), container)
    search.fit(Xc, yc)
    assert_same_search(search, reference)


def test_scikit_learn_grid_search_with_n_jobs(data, scikit_learn_scores):
    # n_jobs=2: joblib's worker processes receive pickled estimators
    X, y = data
    search = model_selection.GridSearchCV(DaskBoostClassifier(n_estimators=10), GRID, cv=3,
                                          n_jobs=2).fit(X, y)
    assert_same_search(search, scikit_learn_scores)


# ---- pipelines of dask-ml preprocessors on dask DataFrames ---------------------------------

@pytest.fixture(scope="module")
def frame():
    """A dask DataFrame with a string column that decides half of the label."""
    rng = np.random.default_rng(8)
    n = 800
    pdf = pd.DataFrame({"x0": rng.integers(0, 10, n).astype(np.float64),
                        "x1": rng.normal(size=n).round(1),
                        "city": rng.choice(["oslo", "rome", "lima"], size=n)},
                       index=pd.RangeIndex(1000, 1000 + n))
    y = ((pdf["x0"] > 4) ^ (pdf["city"] == "rome")).astype(np.int64).rename("y")
    return dd.from_pandas(pdf, npartitions=PARTITIONS), dd.from_pandas(y, npartitions=PARTITIONS)


@pytest.mark.parametrize("encoders", [[Categorizer()], [Categorizer(), DummyEncoder()]],
                         ids=["categorical", "one-hot"])
def test_pipeline_with_dask_ml_preprocessors(frame, encoders):
    X, y = frame
    pipeline = make_pipeline(*encoders, DaskBoostClassifier(n_estimators=10)).fit(X, y)
    transformed = pipeline[:-1].transform(X)
    assert isinstance(transformed, dd.DataFrame)
    # the estimator was given the transformed dask DataFrame: the same model as fitting it
    direct = DaskBoostClassifier(n_estimators=10).fit(transformed, y)
    assert model_json(pipeline[-1]) == model_json(direct)
    assert pipeline[-1].feature_names_in_.tolist() == list(transformed.columns)
    predicted = pipeline.predict(X)
    assert isinstance(predicted, dd.Series)  # lazy, partitioned like X, X's index
    predicted = predicted.compute()
    assert predicted.index.equals(X.index.compute())
    assert (predicted == y.compute()).mean() > 0.95


def test_dask_ml_grid_search_over_a_pipeline_on_dask_dataframes(frame):
    X, y = frame
    pipeline = make_pipeline(Categorizer(), DaskBoostClassifier(n_estimators=10))
    grid = {"daskboostclassifier__max_depth": [1, 2]}
    search = GridSearchCV(pipeline, grid, cv=3).fit(X, y)
    reference = model_selection.GridSearchCV(pipeline, grid, cv=3).fit(X.compute(), y.compute())
    assert_same_search(search, reference.cv_results_)
    # the XOR of a number and a category needs two levels
    assert search.best_params_ == {"daskboostclassifier__max_depth": 2}


# ---- on a distributed cluster ---------------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


def _fit_in_task(X, y):
    return model_json(DaskBoostClassifier(n_estimators=5).fit(X, y))


def test_fits_in_tasks_on_every_worker_thread(client, data):
    # every worker thread runs a fit of in-memory data: each fits in process (sent to the
    # cluster, their passes would wait for threads the other fits hold, forever)
    X, y = data
    futures = [client.submit(_fit_in_task, X, y, pure=False) for _ in range(4)]
    models = [future.result(timeout=60) for future in futures]
    assert models == [_fit_in_task(X, y)] * 4


def _fit_and_cv_in_task(X, y):
    fitted = DaskBoostClassifier(n_estimators=5).fit(X, y, eval_set=[(X, y)])
    folds = cv({"objective": "binary:logistic"}, X, y, nfold=2, num_boost_round=3)
    return model_json(fitted), folds["test-logloss-mean"].tolist()


@pytest.mark.parametrize("container", ["dask-array", "dask-dataframe"])
def test_fit_of_dask_collections_in_a_task_on_one_thread_workers(client, data, container):
    # a task that fits dask collections: the fit runs on the cluster, whose two workers
    # have one thread each, this task's included; its thread leaves the worker's pool
    # while the fit runs (before: the fit's own tasks waited for that thread forever)
    X, y = as_container(*data, container)
    futures = [client.submit(_fit_and_cv_in_task, X, y, pure=False) for _ in range(2)]
    results = [future.result(timeout=120) for future in futures]
    assert results == [_fit_and_cv_in_task(X, y)] * 2


def test_dask_ml_grid_search_on_a_cluster(client, data, scikit_learn_scores):
    X, y = data
    search = GridSearchCV(DaskBoostClassifier(n_estimators=10), GRID, cv=3)
    search.fit(*as_container(X, y, "dask-array"))
    assert_same_search(search, scikit_learn_scores)
