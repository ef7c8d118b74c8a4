"""Multiclass benchmark (10 classes): daskboost vs xgboost, lightgbm and scikit-learn.

Same harness as bench_binary.py (common.run_benchmark: one process, one run, round-robin
repeats, medians, daskboost's fit-time ratios); what differs:

* Data: ``--rows`` (default 500,000) training rows x 28 float32 features plus a separate
  ``--test-rows`` (default 100,000) test set, the same feature columns as the binary case
  (normal, uniform, exponential and small-integer columns, then 5% of all values set to
  NaN at random). Ten class scores are fixed random mixtures of the binary logit's
  fifteen nonlinear terms (standardised); each label is drawn from the softmax of its
  row's scores (argmax of scores + Gumbel noise), so the Bayes classifier reaches about
  0.66 accuracy and 0.95 mlogloss on complete features; classes hold 4-17% of the rows.
  Seeded (``--seed``): every run sees the same data.
* Model: 100 boosting rounds of 10 trees (one per class, softmax), depth 6, learning
  rate 0.1, 256 bins (255 for lightgbm and scikit-learn), L2 penalty 1, minimum child
  hessian 1. daskboost: ``DaskBoostClassifier`` (multi:softprob with num_class=10 chosen
  from the labels); xgboost: ``XGBClassifier(tree_method="hist",
  objective="multi:softprob")``; lightgbm: ``LGBMClassifier(objective="multiclass",
  num_leaves=64, max_depth=6)``; scikit-learn: ``HistGradientBoostingClassifier``
  (log_loss). The softmax hessian differs by a constant factor between libraries
  (xgboost and daskboost 2p(1-p), lightgbm K/(K-1) p(1-p), scikit-learn p(1-p)), so equal
  min_child_weight / L2 settings are close but not identical.
* daskboost fits from a parquet lake (``--files`` files, written untimed; the timed fit
  is ``dd.read_parquet`` -> ``fit(ddf[features], ddf["label"])`` on dask's local
  threaded scheduler); the others fit in-memory numpy. All predict the numpy test set.
* Reported per library: median fit and predict seconds over ``--repeats`` (default 3),
  test mlogloss (xgboost's definition) and accuracy, daskboost's fit time as a ratio to
  the library's (< 1 means daskboost is faster), and each metric minus xgboost's.
* Threads: 2 for everyone; warm-up: an untimed 1,000-row fit per library (numba JIT).

Run from the repository root::

    python benchmarks/bench_multiclass.py --repeats 3
    python benchmarks/bench_multiclass.py --rows 20000 --repeats 1 --libraries daskboost,xgboost
    python benchmarks/bench_multiclass.py --output benchmarks/results/multiclass

``--output PATH`` writes ``PATH.json`` (configuration, every timing, versions) and
``PATH.md`` (the table) besides printing the table to stdout.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (N_CLASSES, N_ESTIMATORS, Case, DataSummary, Metric,  # noqa: E402
                    accuracy, make_multiclass, mlogloss, run_benchmark, softmax)

import numpy as np  # noqa: E402


def describe_data(y_train, y_test, test_scores):
    shares = np.bincount(y_train, minlength=N_CLASSES) / y_train.size
    test_shares = np.bincount(y_test, minlength=N_CLASSES) / y_test.size
    proba = softmax(test_scores)
    true_loss, true_accuracy = mlogloss(y_test, proba), accuracy(y_test, proba)
    line = (f"{N_CLASSES} classes, shares: train {shares.min():.3f}-{shares.max():.3f}, "
            f"test {test_shares.min():.3f}-{test_shares.max():.3f}; true-probability test "
            f"mlogloss {true_loss:.4f}, accuracy {true_accuracy:.4f} "
            "(ceiling on complete features)")
    footnote = (f"Ceiling (true class probabilities on complete features): test mlogloss "
                f"{true_loss:.4f}, accuracy {true_accuracy:.4f}.")
    info = {"train_class_shares": [round(s, 4) for s in shares],
            "true_test_mlogloss": true_loss, "true_test_accuracy": true_accuracy}
    return DataSummary(line, [footnote], info)


CASE = Case(name="bench_multiclass", title=f"multiclass ({N_CLASSES} classes)",
            task="multiclass", doc=__doc__, make_data=make_multiclass,
            describe_data=describe_data,
            metrics=[Metric("mlogloss", "mlogloss", mlogloss),
                     Metric("accuracy", "accuracy", accuracy)],
            default_rows=500_000, default_test_rows=100_000,
            trees=f"{N_ESTIMATORS} rounds x {N_CLASSES} trees (one per class)",
            config={"classes": N_CLASSES, "objective": "multi:softprob"})


def main(argv=None):
    return run_benchmark(CASE, argv)


if __name__ == "__main__":
    sys.exit(main())
