"""daskboost with dask-ml and scikit-learn: a pipeline and hyperparameter searches.

Builds a synthetic dask DataFrame with a string column, splits it with dask-ml's
``train_test_split``, and tunes a pipeline (dask-ml's ``Categorizer``, then a
``DaskBoostClassifier`` that splits on the categories) with dask-ml's ``GridSearchCV``
and ``RandomizedSearchCV``, then scikit-learn's ``GridSearchCV`` with ``n_jobs=2``.
Prints each search's scores, the best parameters and the test accuracy of the refitted
pipeline.  Last, ``daskboost.cv`` on the dask DataFrame itself (the folds' models grown
together, one pass per level): with the folds it deals, then with folds given as a
column that holds each city out whole (how well the model does on cities it never saw),
with each row predicted by the fold model that never saw its city.

dask-ml's searches fit one candidate per task on folds they compute into memory; on a
``distributed`` cluster each fit runs in process in its task.  For data larger than
memory, fit the candidates one at a time on the dask DataFrame.

    python examples/model_selection.py [--rows 20000]
"""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask_ml.model_selection import GridSearchCV, RandomizedSearchCV, train_test_split
from dask_ml.preprocessing import Categorizer
from sklearn import model_selection
from sklearn.pipeline import make_pipeline

from daskboost import DaskBoostClassifier, cv

STEP = "daskboostclassifier__"  # the pipeline's name for the estimator's parameters
CITIES = ["lima", "oslo", "rome", "kyiv", "pune", "lagos"]


def make_frame(n_rows, seed):
    """Numeric features and a city; the label depends on both (and interacts)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n_rows, 5)), columns=[f"x{j}" for j in range(5)])
    frame["city"] = rng.choice(CITIES, size=n_rows)
    city_effect = frame["city"].map(dict(zip(CITIES, [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5])))
    logit = frame["x0"] * frame["x1"] + np.sin(2 * frame["x2"]) + city_effect - 0.3
    label = (logit + rng.logistic(size=n_rows) > 0).astype(np.int8).rename("label")
    return (dd.from_pandas(frame, npartitions=8), dd.from_pandas(label, npartitions=8))


def print_results(name, search, seconds):
    results = pd.DataFrame(search.cv_results_)
    columns = [c for c in results if c.startswith("param_")] + ["mean_test_score",
                                                                  "rank_test_score"]
    table = results[columns].sort_values("rank_test_score")
    table.columns = [c.removeprefix("param_").removeprefix(STEP) for c in table.columns]
    print(f"\n{name}: {len(results)} candidates x 3 folds in {seconds:.1f} s")
    print(table.to_string(index=False, float_format="{:.4f}".format))
    best = {k.removeprefix(STEP): v for k, v in search.best_params_.items()}
    print(f"best: {best} (cv accuracy {search.best_score_:.4f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000, help="rows in all")
    args = parser.parse_args()

    X, y = make_frame(args.rows, seed=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, shuffle=True,
                                                        random_state=0)
    pipeline = make_pipeline(Categorizer(), DaskBoostClassifier(n_estimators=50))
    print(f"{args.rows:,} rows, {X.npartitions} partitions; pipeline: "
          f"{' -> '.join(type(step).__name__ for _, step in pipeline.steps)}")

    grid = {"daskboostclassifier__max_depth": [2, 4, 6],
            "daskboostclassifier__learning_rate": [0.1, 0.3]}
    start = time.perf_counter()
    search = GridSearchCV(pipeline, grid, cv=3).fit(X_train, y_train)
    print_results("dask-ml GridSearchCV", search, time.perf_counter() - start)
    predicted = search.predict(X_test)  # a lazy dask Series, X_test's index kept
    accuracy = float((predicted == y_test).mean().compute())
    print(f"refitted best pipeline: test accuracy {accuracy:.4f}")

    distributions = {"daskboostclassifier__max_depth": [2, 3, 4, 5, 6],
                     "daskboostclassifier__learning_rate": [0.05, 0.1, 0.2, 0.3],
                     "daskboostclassifier__subsample": [0.7, 0.85, 1.0],
                     "daskboostclassifier__reg_lambda": [0.0, 1.0, 10.0]}
    start = time.perf_counter()
    search = RandomizedSearchCV(pipeline, distributions, n_iter=6, cv=3,
                                random_state=0).fit(X_train, y_train)
    print_results("dask-ml RandomizedSearchCV", search, time.perf_counter() - start)

    # scikit-learn's own search on in-memory data, two worker processes
    X_memory, y_memory = X_train.compute(), y_train.compute()
    start = time.perf_counter()
    search = model_selection.GridSearchCV(pipeline, grid, cv=3, n_jobs=2).fit(X_memory,
                                                                               y_memory)
    print_results("scikit-learn GridSearchCV(n_jobs=2)", search, time.perf_counter() - start)

    # daskboost's own cross-validation on the dask DataFrame (string column as is)
    params = {"objective": "binary:logistic", "max_depth": 4, "learning_rate": 0.3}
    start = time.perf_counter()
    dealt = cv(params, X, y, nfold=3, num_boost_round=50, metrics="error")
    # folds given as a column: each city's rows in one fold (CITIES' index mod 3)
    by_city = X["city"].map(dict(zip(CITIES, np.arange(len(CITIES)) % 3)),
                            meta=("city", "int64"))
    grouped, models = cv(params, X, y, folds=by_city, num_boost_round=50, metrics="error",
                         return_cvbooster=True)
    print(f"\ndaskboost.cv, 3 folds, 50 rounds ({time.perf_counter() - start:.1f} s for both): "
          f"test accuracy {1 - dealt['test-error-mean'].iloc[-1]:.4f} with rows dealt to "
          f"folds, {1 - grouped['test-error-mean'].iloc[-1]:.4f} on cities never seen")
    # each row predicted by the fold model that never saw its city (a lazy dask Series,
    # one task per partition, each row with its index)
    out_of_fold = models.predict_out_of_fold(X, y).compute()
    by_city_accuracy = (out_of_fold == y.compute()).groupby(X["city"].compute()).mean()
    print("out-of-fold accuracy by city: " + ", ".join(
        f"{city} {by_city_accuracy[city]:.3f}" for city in CITIES))


if __name__ == "__main__":
    main()
