"""Binary classification benchmark: daskboost vs xgboost, lightgbm and scikit-learn.

What it measures, in one process and one run, side by side:

* Data: a synthetic task of ``--rows`` (default 1,000,000) training rows x 28 float32
  features plus a separate ``--test-rows`` (default 200,000) test set. Features mix
  normal, uniform, exponential and small-integer columns; the label is
  ``logit + logistic noise > 0`` for a nonlinear logit with interactions (several
  features are pure noise), and then 5% of all feature values are set to NaN at random.
  Generation is vectorised and seeded (``--seed``), so every run sees the same data.
* Model: 100 trees, depth 6, learning rate 0.1, 256 bins (255 for lightgbm and
  scikit-learn, whose ``max_bin(s)=255`` is the comparable setting), L2 penalty 1,
  minimum child hessian 1, the settings of each library mapped as closely as it allows.
* daskboost reads the training data as a realistic lake: the train rows are written
  (untimed) as ``--files`` parquet files in a temporary directory, and the timed fit is
  ``dd.read_parquet(dir)`` -> ``X = ddf[features]``, ``y = ddf["label"]`` ->
  ``DaskBoostClassifier.fit(X, y)`` on the default local threaded scheduler (no
  distributed Client), so reading the parquet is part of the fit time. The other
  libraries fit on the in-memory numpy arrays. Every library predicts the in-memory
  200k-row numpy test set.
* Reported per library: median fit seconds and median predict seconds over
  ``--repeats`` runs (default 3; the repeats go round-robin over the libraries so slow
  drifts of a shared machine hit all of them), test AUC, and daskboost's fit time as a
  ratio to the library's (< 1 means daskboost is faster), plus each AUC minus xgboost's.
* Threads: 2 for everyone (the reference machine has 2 cores): xgboost and lightgbm get
  ``n_jobs=2``, OMP_NUM_THREADS defaults to 2 (for scikit-learn's OpenMP) and dask's
  threaded scheduler uses its default pool of one thread per core.
* Warm-up (untimed): daskboost first fits 1,000 rows read from a tiny parquet lake so
  numba's JIT compilation is not counted; the other libraries get a tiny fit as well.

Run from the repository root::

    python benchmarks/bench_binary.py --repeats 3
    python benchmarks/bench_binary.py --rows 50000 --repeats 1 --libraries daskboost,xgboost
    python benchmarks/bench_binary.py --output benchmarks/results/binary

``--output PATH`` writes ``PATH.json`` (configuration, every timing, versions) and
``PATH.md`` (the table) besides printing the table to stdout.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import Case, DataSummary, Metric, make_binary, roc_auc, run_benchmark  # noqa: E402


def describe_data(y_train, y_test, test_logit):
    return DataSummary(f"positives: train {y_train.mean():.3f}, test {y_test.mean():.3f}; "
                       f"true-logit test AUC {roc_auc(y_test, test_logit):.4f} "
                       "(ceiling on complete features)")


CASE = Case(name="bench_binary", title="binary", task="binary", doc=__doc__,
            make_data=make_binary, describe_data=describe_data,
            metrics=[Metric("auc", "AUC", roc_auc)],
            default_rows=1_000_000, default_test_rows=200_000)


def main(argv=None):
    return run_benchmark(CASE, argv)


if __name__ == "__main__":
    sys.exit(main())
