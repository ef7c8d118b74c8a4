"""Categorical columns on real data: native categorical splits against encodings.

The diamonds data set (53,940 diamonds, shipped by ``plotnine``: ``pip install -e
.[bench]``): predict log(price) from carat, depth, table, x, y, z and the categorical
columns cut, color and clarity. The same 80/20 split is fitted five ways, 100 trees of
depth 6 each, and the test RMSE printed with the seconds of each model's second fit
(a first fit in a process loads the compiled kernels from numba's cache, or compiles
them once in a fresh environment):

- daskboost with the string columns as they are (categorical splits: one-vs-rest below
  ``max_cat_to_onehot`` categories, else sorted-partition splits);
- daskboost on ordinal codes (each category replaced by its index: numeric splits);
- daskboost on one-hot columns (``pandas.get_dummies``);
- xgboost with ``enable_categorical=True`` and LightGBM with ``category`` columns, when
  installed.

    python examples/categorical.py
"""

import time

import dask.dataframe as dd
import numpy as np
import pandas as pd

from daskboost import DaskBoostRegressor

CATEGORICAL = ["cut", "color", "clarity"]
PARAMS = dict(n_estimators=100, max_depth=6, learning_rate=0.1)


def load(seed=0):
    from plotnine.data import diamonds
    frame = diamonds.copy()
    for column in CATEGORICAL:
        frame[column] = frame[column].astype(str)
    y = np.log(frame.pop("price").to_numpy())
    test = np.random.default_rng(seed).random(len(frame)) < 0.2
    return frame[~test], y[~test], frame[test], y[test]


def rmse(y, prediction):
    return float(np.sqrt(np.mean((y - prediction) ** 2)))


def ordinal(train, test):
    out_train, out_test = train.copy(), test.copy()
    for column in CATEGORICAL:
        categories = sorted(train[column].unique())
        out_train[column] = pd.Categorical(train[column], categories).codes
        out_test[column] = pd.Categorical(test[column], categories).codes
    return out_train, out_test


def one_hot(train, test):
    out_train = pd.get_dummies(train, columns=CATEGORICAL, dtype=float)
    out_test = pd.get_dummies(test, columns=CATEGORICAL, dtype=float)
    return out_train, out_test.reindex(columns=out_train.columns, fill_value=0.0)


def as_category(train, test):
    out_train, out_test = train.copy(), test.copy()
    for column in CATEGORICAL:
        categories = sorted(train[column].unique())
        out_train[column] = pd.Categorical(train[column], categories)
        out_test[column] = pd.Categorical(test[column], categories)
    return out_train, out_test


def contestants(X_train, X_test):
    """{name: (model, X_train, X_test)}."""
    out = {"daskboost, categorical splits": (DaskBoostRegressor(**PARAMS),
                                             dd.from_pandas(X_train, npartitions=4), X_test),
           "daskboost, ordinal codes": (DaskBoostRegressor(**PARAMS), *ordinal(X_train, X_test)),
           "daskboost, one-hot": (DaskBoostRegressor(**PARAMS), *one_hot(X_train, X_test))}
    try:
        import xgboost
        out["xgboost, enable_categorical"] = (
            xgboost.XGBRegressor(**PARAMS, tree_method="hist", enable_categorical=True),
            *as_category(X_train, X_test))
    except ImportError:
        pass
    try:
        import lightgbm
        out["lightgbm, category columns"] = (
            lightgbm.LGBMRegressor(**PARAMS, num_leaves=64, verbose=-1),
            *as_category(X_train, X_test))
    except ImportError:
        pass
    return out


def main():
    X_train, y_train, X_test, y_test = load()
    print(f"diamonds: {len(X_train):,} training rows, {len(X_test):,} test rows; "
          f"categorical: {', '.join(CATEGORICAL)}\n")
    y_dask = dd.from_pandas(pd.Series(y_train, index=X_train.index), npartitions=4)
    print(f"{'model':34s} {'test RMSE':>9s} {'fit s':>7s}")
    for name, (model, train, test) in contestants(X_train, X_test).items():
        y = y_dask if isinstance(train, dd.DataFrame) else y_train
        model.fit(train, y)  # (the first fit: loads or compiles the kernels)
        start = time.perf_counter()
        model.fit(train, y)
        seconds = time.perf_counter() - start
        print(f"{name:34s} {rmse(y_test, np.asarray(model.predict(test))):9.4f} {seconds:7.2f}")


if __name__ == "__main__":
    main()
