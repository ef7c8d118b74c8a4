"""Prediction intervals: several quantiles in one model, from a parquet lake.

Writes a small parquet lake whose noise grows with ``x1``, then trains one
``DaskBoostRegressor(objective="reg:quantileerror", quantile_alpha=[0.05, 0.5, 0.95])``
on it with the threaded scheduler (an eval set and early stopping on the ``quantile``
metric, the pinball loss averaged over the levels). The model grows one tree per level
and round; ``predict`` gives one column per level. Prints, on the held-out rows, the
share of labels at or below each level's prediction (which should be near the level)
and the 90% interval's width where the noise is small and where it is large.

    python examples/quantile_regression.py [--rows 60000]
"""

import argparse
import os
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd

from daskboost import DaskBoostRegressor

LEVELS = [0.05, 0.5, 0.95]


def write_lake(directory, n_rows, seed=0):
    """4 parquet files: x0..x3 and a label whose noise scale is 0.2 + |x1|."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n_rows, 4)), columns=[f"x{j}" for j in range(4)])
    noise = rng.normal(size=n_rows) * (0.2 + frame["x1"].abs())
    frame["label"] = np.sin(2 * frame["x0"]) + 0.5 * frame["x2"] + noise
    os.makedirs(directory, exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(n_rows), 4)):
        frame.iloc[part].to_parquet(os.path.join(directory, f"part-{i}.parquet"), index=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=60_000)
    args = parser.parse_args(argv)
    lake = os.path.join("examples", "output", "quantile-lake")
    write_lake(lake, args.rows)
    data = dd.read_parquet(lake)
    train, valid, test = data.random_split([0.7, 0.1, 0.2], random_state=0)
    features = [c for c in data.columns if c != "label"]

    model = DaskBoostRegressor(objective="reg:quantileerror", quantile_alpha=LEVELS,
                               n_estimators=500, max_depth=4, learning_rate=0.1,
                               early_stopping_rounds=20)
    start = time.perf_counter()
    model.fit(train[features], train["label"],
              eval_set=[(valid[features], valid["label"])], verbose=False)
    seconds = time.perf_counter() - start
    print(f"trained {model.best_iteration + 1} rounds of {len(LEVELS)} trees in "
          f"{seconds:.1f} s (best validation pinball loss {model.best_score:.4f})")

    X_test, y_test = test[features].compute(), test["label"].compute().to_numpy()
    predicted = model.predict(X_test)                       # (n, 3): one column a level
    for k, level in enumerate(LEVELS):
        share = float(np.mean(y_test <= predicted[:, k]))
        print(f"level {level:.2f}: {share:.3f} of the held-out labels at or below it")
    width = predicted[:, 2] - predicted[:, 0]
    calm = X_test["x1"].abs().to_numpy() < 0.3
    print(f"90% interval width: {np.median(width[calm]):.2f} where |x1| < 0.3, "
          f"{np.median(width[~calm]):.2f} elsewhere")
    return model, predicted, y_test


if __name__ == "__main__":
    main()
