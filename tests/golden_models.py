"""The fits whose model files are kept under ``tests/data/`` (golden files).

``python tests/golden_models.py`` writes them; ``tests/test_golden_models.py`` fits them
again and compares the bytes, so a change that alters what a fit learns (or how a model
is written) shows up, and is deliberate. The data are small, seeded and continuous (no
exact-greedy shortcut), with missing values.
"""

import os
import sys

import dask.dataframe as dd
import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(HERE, "data")


def frame(seed=11, n=3000, n_features=5):
    """(X as a 4-partition dask DataFrame, continuous y, 3-class y)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.05] = np.nan
    x = np.nan_to_num(X)
    y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=n)
    classes = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(n_features)])
    pdf["y"], pdf["c"] = y, classes
    df = dd.from_pandas(pdf, npartitions=4)
    return df[list(pdf.columns[:n_features])], df["y"], df["c"]


def fits():
    """{name: (estimator, fit(estimator) -> estimator)}."""
    from daskboost import DaskBoostClassifier, DaskBoostRanker, DaskBoostRegressor
    X, y, c = frame()
    qid = X.index.to_series() // 25  # queries of 25 rows, whole in each 750-row partition
    binary = (c == 2).astype(int)
    X_eval, y_eval, _ = frame(seed=12, n=1000)
    common = dict(n_estimators=12, max_depth=4, learning_rate=0.3, max_bin=64)
    return {
        "binary": (DaskBoostClassifier(**common), lambda m: m.fit(X, binary)),
        "multiclass": (DaskBoostClassifier(**common), lambda m: m.fit(X, c)),
        "lossguide": (DaskBoostRegressor(**{**common, "max_depth": 0}, grow_policy="lossguide",
                                         max_leaves=9), lambda m: m.fit(X, y)),
        "approx": (DaskBoostRegressor(**common, tree_method="approx"), lambda m: m.fit(X, y)),
        "subsampling": (DaskBoostRegressor(**common, subsample=0.7, colsample_bytree=0.8,
                                           colsample_bynode=0.8, random_state=3),
                        lambda m: m.fit(X, y)),
        "early_stopping": (DaskBoostRegressor(**{**common, "n_estimators": 60},
                                              early_stopping_rounds=3),
                           lambda m: m.fit(X, y, eval_set=[(X_eval, y_eval)])),
        "ranking": (DaskBoostRanker(**common), lambda m: m.fit(X, c, qid=qid)),
    }


def cluster_fit():
    """The binary fit on a 2-worker LocalCluster (the caller provides the Client)."""
    return fits()["binary"]


def write_all():
    import distributed
    os.makedirs(DATA_DIR, exist_ok=True)
    for name, (model, fit) in fits().items():
        fit(model).save_model(os.path.join(DATA_DIR, f"golden_{name}.json"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        model, fit = cluster_fit()
        fit(model).save_model(os.path.join(DATA_DIR, "golden_cluster_binary.json"))


if __name__ == "__main__":
    write_all()
    sys.exit(0)
