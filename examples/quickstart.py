"""daskboost quickstart: train on a local parquet lake with the threaded scheduler.

Writes a synthetic parquet lake (train and test, several files each), reads it with
``dd.read_parquet``, fits a ``DaskBoostClassifier`` on the local threaded scheduler (no
cluster), prints test metrics, saves the model as JSON, loads it back and checks that
the loaded model predicts the same.

    python examples/quickstart.py [--rows 400000] [--output examples/output]
"""

import argparse
import time
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd

from daskboost import DaskBoostClassifier

N_FEATURES = 12
LABEL = "label"


def write_lake(directory, n_rows, n_files, seed):
    """A parquet lake of ``n_files`` files: float features with missing values, 0/1 label."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rows_per_file = n_rows // n_files
    for i in range(n_files):
        X = rng.normal(size=(rows_per_file, N_FEATURES)).astype(np.float32)
        logit = X[:, 0] - X[:, 1] * X[:, 2] + np.sin(2 * X[:, 3]) + 0.5 * X[:, 4] ** 2 - 0.5
        label = (logit + rng.logistic(size=rows_per_file) > 0).astype(np.int8)
        X[rng.random(X.shape) < 0.05] = np.nan
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)])
        frame[LABEL] = label
        frame.to_parquet(directory / f"part-{i:03d}.parquet", index=False)


def auc(y, score):
    """Area under the ROC curve (rank statistic, ties averaged)."""
    ranks = pd.Series(score).rank().to_numpy()
    n_pos = int(np.sum(y == 1))
    n_neg = len(y) - n_pos
    return (ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000, help="training rows")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "output")
    args = parser.parse_args()

    train_dir, test_dir = args.output / "lake" / "train", args.output / "lake" / "test"
    write_lake(train_dir, args.rows, n_files=8, seed=0)
    write_lake(test_dir, args.rows // 4, n_files=2, seed=1)
    print(f"wrote a parquet lake to {args.output / 'lake'}")

    train = dd.read_parquet(train_dir)
    test = dd.read_parquet(test_dir)
    features = [c for c in train.columns if c != LABEL]

    model = DaskBoostClassifier(n_estimators=100, max_depth=6, learning_rate=0.1)
    start = time.perf_counter()
    model.fit(train[features], train[LABEL])  # dask's local threaded scheduler
    fit_seconds = time.perf_counter() - start
    print(f"trained {len(model.get_booster().trees)} trees on {args.rows:,} rows x "
          f"{len(features)} features ({train.npartitions} parquet files) in {fit_seconds:.1f} s")

    proba = model.predict_proba(test[features])        # lazy dask DataFrame, index kept
    p = proba.iloc[:, 1].compute().to_numpy()
    y = test[LABEL].compute().to_numpy()
    eps = 1e-15
    logloss = -np.mean(y * np.log(np.clip(p, eps, 1)) + (1 - y) * np.log(np.clip(1 - p, eps, 1)))
    accuracy = np.mean((p > 0.5) == (y == 1))
    print(f"test AUC      {auc(y, p):.4f}")
    print(f"test logloss  {logloss:.4f}")
    print(f"test accuracy {accuracy:.4f}")

    path = args.output / "model.json"
    model.save_model(path)
    reloaded = DaskBoostClassifier().load_model(path)
    same = np.array_equal(reloaded.predict_proba(test[features]).iloc[:, 1].compute().to_numpy(), p)
    print(f"saved the model to {path}; reloaded model predicts identically: {same}")
    if not same:
        raise SystemExit("the reloaded model disagrees with the trained one")


if __name__ == "__main__":
    main()
