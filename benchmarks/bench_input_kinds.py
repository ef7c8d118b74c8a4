"""Fitting from an Arrow table: pandas, a pyarrow ``Table`` and a polars DataFrame of the
same rows, daskboost against xgboost and LightGBM.

What it measures, side by side in one process and one run:

* The binary task of ``bench_binary`` (``common.make_binary``, float32 features, 5%
  missing), ``--rows`` rows (default 500,000), held as a pandas DataFrame, a pyarrow
  ``Table`` and a polars DataFrame (built once, untimed).
* Each library's scikit-learn classifier fits each of them: 100 trees, depth 6, learning
  rate 0.1, 256 bins (255 for LightGBM), 2 threads; ``--repeats`` times, the (library,
  input) pairs round robin in a balanced order (a shared, noisy machine drifts on all of
  them alike).  Each pair fits once first, untimed (compilation, caches).
* Reported: median seconds per pair; for each library its time from a table over its
  time from pandas (what reading the table costs it); whether the predictions on 10,000
  rows from each input equal the pandas fit's; "refused" where a library does not take
  that input.

Run from the repository root::

    python benchmarks/bench_input_kinds.py --repeats 3
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm")
INPUTS = ("pandas", "pyarrow", "polars")


def make_estimator(library):
    if library == "daskboost":
        from daskboost import DaskBoostClassifier
        return DaskBoostClassifier(n_estimators=100, max_depth=6, learning_rate=0.1,
                                   max_bin=256, n_jobs=common.N_THREADS)
    if library == "xgboost":
        import xgboost
        return xgboost.XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1,
                                     max_bin=256, tree_method="hist",
                                     n_jobs=common.N_THREADS)
    import lightgbm
    return lightgbm.LGBMClassifier(n_estimators=100, max_depth=6, num_leaves=63,
                                   learning_rate=0.1, max_bin=255, min_child_samples=1,
                                   min_child_weight=1.0, reg_lambda=1.0,
                                   n_jobs=common.N_THREADS, verbose=-1)


def inputs_of(X):
    import polars as pl
    frame = pd.DataFrame(X, columns=common.FEATURE_NAMES)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return {"pandas": frame, "pyarrow": table, "polars": pl.from_arrow(table)}


def fit_and_predict(library, X, y, X_check):
    model = make_estimator(library).fit(X, y)
    return model.predict_proba(X_check)[:, 1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    args = parser.parse_args(argv)
    libraries = [name for name in args.libraries.split(",") if name]
    machine = common.machine_info()
    X, y, _ = common.make_binary(args.rows, seed=0)
    data = inputs_of(X)
    checks = inputs_of(X[:10_000])
    pairs, refused, reference = [], {}, {}
    for library in libraries:  # warm-up fits; a library that refuses an input drops it
        for kind in INPUTS:
            try:
                prediction = fit_and_predict(library, data[kind], y, checks[kind])
            except Exception as err:  # noqa: BLE001 - reported as the library's answer
                refused[(library, kind)] = f"{type(err).__name__}: {err}"[:160]
                continue
            pairs.append((library, kind))
            reference.setdefault(library, prediction)
            same = np.array_equal(prediction, reference[library])
            print(f"# warm-up {library} from {kind}: predictions "
                  f"{'equal to' if same else 'differ from'} the first input's", flush=True)
    times = {pair: [] for pair in pairs}
    order = [pair for r in range(args.repeats) for pair in common.balanced_order(pairs, r)]
    for i, pair in enumerate(order):
        library, kind = pair
        _, seconds, _ = common.timed(fit_and_predict, library, data[kind], y, checks[kind])
        times[pair].append(seconds)
        print(f"# {i + 1}/{len(order)} {library} from {kind}: {seconds:.2f} s", flush=True)
    medians = {pair: common.median(v) for pair, v in times.items()}
    rows = []
    for library in libraries:
        base = medians.get((library, "pandas"))
        cells = [library]
        for kind in INPUTS:
            if (library, kind) in refused:
                cells.append("refused")
            elif base is None:
                cells.append(f"{medians[(library, kind)]:.2f}")
            else:
                cells.append(f"{medians[(library, kind)]:.2f} ({medians[(library, kind)] / base:.2f})")
        rows.append(cells)
    header = ["library", *(f"fit from {kind}, s (÷ pandas)" for kind in INPUTS)]
    print(common.markdown_table(header, rows))
    for (library, kind), reason in refused.items():
        print(f"\n{library} refused {kind}: {reason}")
    print(f"\n{args.rows:,} rows x {X.shape[1]} features, {args.repeats} repeats; commit "
          f"{machine['git_commit']}, load at start {machine['load_average_at_start']}, now "
          f"{common.load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
