"""Survival analysis: an accelerated failure time model on censored times, from a lake.

Writes a small parquet lake of event times, some of them censored: each row has the
bounds of its time, ``lower`` and ``upper`` (equal when the event was observed, ``upper``
infinite when follow-up ended first, right-censored). Trains
``DaskBoostRegressor(objective="survival:aft")`` on the two bound columns with the
threaded scheduler (an eval set and early stopping on ``aft-nloglik``, the negative
log-likelihood of the intervals). ``predict`` gives times. Prints, on the held-out
rows, the mean negative log-likelihood, the share of observed times within a factor of
1.5 of their prediction, and the concordance of the predicted times with the observed
ones (Harrell's C over pairs whose order is known).

    python examples/survival.py [--rows 60000]
"""

import argparse
import os
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd

from daskboost import DaskBoostRegressor


def write_lake(directory, n_rows, seed=0):
    """4 parquet files: x0..x3 and each row's bounds; log times linear in x0, x1 with
    normal noise; a third of the rows right-censored at a random earlier time."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n_rows, 4)), columns=[f"x{j}" for j in range(4)])
    time_ = np.exp(1.0 + 0.5 * frame["x0"] - 0.3 * frame["x1"] ** 2
                   + 0.4 * rng.normal(size=n_rows))
    censored = rng.random(n_rows) < 1 / 3
    frame["lower"] = np.where(censored, time_ * rng.uniform(0.2, 1.0, n_rows), time_)
    frame["upper"] = np.where(censored, np.inf, time_)
    os.makedirs(directory, exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(n_rows), 4)):
        frame.iloc[part].to_parquet(os.path.join(directory, f"part-{i}.parquet"), index=False)


def concordance(lower, upper, predicted, pairs=200_000, seed=0):
    """Harrell's C on random pairs whose order is known: an observed time below the
    other row's lower bound; the share ordered alike by the predicted times."""
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(lower), (2, pairs))
    known = (lower[i] == upper[i]) & (upper[i] < lower[j])
    return float(np.mean(predicted[i][known] < predicted[j][known]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=60_000)
    args = parser.parse_args(argv)
    lake = os.path.join("examples", "output", "survival-lake")
    write_lake(lake, args.rows)
    data = dd.read_parquet(lake)
    train, valid, test = data.random_split([0.7, 0.1, 0.2], random_state=0)
    features = [f"x{j}" for j in range(4)]
    bounds = ["lower", "upper"]

    model = DaskBoostRegressor(objective="survival:aft", aft_loss_distribution="normal",
                               aft_loss_distribution_scale=1.0, n_estimators=500,
                               max_depth=4, learning_rate=0.1, early_stopping_rounds=20)
    start = time.perf_counter()
    model.fit(train[features], train[bounds], eval_set=[(valid[features], valid[bounds])],
              verbose=False)
    seconds = time.perf_counter() - start
    print(f"trained {model.best_iteration + 1} rounds in {seconds:.1f} s (best validation "
          f"aft-nloglik {model.best_score:.4f})")

    X_test, intervals = test[features].compute(), test[bounds].compute().to_numpy()
    predicted = model.predict(X_test)                          # times: exp(margin)
    lower, upper = intervals[:, 0], intervals[:, 1]
    observed = lower == upper
    close = np.abs(np.log(predicted[observed] / lower[observed])) < np.log(1.5)
    print(f"held-out aft-nloglik {-model.score(X_test, intervals):.4f}; "
          f"{close.mean():.3f} of the observed times within 1.5x of their prediction; "
          f"concordance {concordance(lower, upper, predicted):.3f}")
    return model, predicted, intervals


if __name__ == "__main__":
    main()
