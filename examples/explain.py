"""Explain, export, look: SHAP values, an xgboost-format export, importance and learning
curve plots.

Writes a small parquet lake (numeric columns and a string column ``city``), trains a
``DaskBoostClassifier`` on it with the threaded scheduler and an eval set, then:

- SHAP contributions of the test rows (``predict(X, pred_contribs=True)``: a lazy dask
  array, one column per feature plus the bias, each row summing to its margin), and the
  features' mean |SHAP|;
- the model exported in xgboost's JSON format, loaded back by xgboost (and treelite,
  when installed), which predict the same probabilities;
- ``importance.png`` (``plot_importance``) and ``learning_curve.png``
  (``plot_metric``) in ``--images`` (needs matplotlib: ``pip install -e .[plot]``).

    python examples/explain.py [--rows 40000] [--images examples/output]
"""

import argparse
import os
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd

import daskboost
from daskboost import DaskBoostClassifier

CITIES = ["lima", "oslo", "rome", "kyiv", "pune", "lagos"]


def write_lake(directory, n_rows, seed=0):
    """A parquet lake of 4 files: x0..x4, a string city, and a label."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n_rows, 5)), columns=[f"x{j}" for j in range(5)])
    frame["city"] = rng.choice(CITIES, size=n_rows)
    effect = frame["city"].map(dict(zip(CITIES, [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5])))
    logit = 1.5 * frame["x0"] + frame["x1"] * frame["x2"] + effect - 0.3
    frame["label"] = (logit + rng.logistic(size=n_rows) > 0).astype(np.int8)
    os.makedirs(directory, exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(n_rows), 4)):
        frame.iloc[part].to_parquet(os.path.join(directory, f"part-{i}.parquet"), index=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--images", default=os.path.join("examples", "output"),
                        help="directory for the two plots")
    args = parser.parse_args(argv)
    lake = os.path.join("examples", "output", "explain-lake")
    write_lake(lake, args.rows)
    data = dd.read_parquet(lake)
    train, test = data.random_split([0.8, 0.2], random_state=0)
    features = [c for c in data.columns if c != "label"]

    model = DaskBoostClassifier(n_estimators=300, max_depth=4, learning_rate=0.1,
                                early_stopping_rounds=20, eval_metric="logloss")
    start = time.perf_counter()
    model.fit(train[features], train["label"],
              eval_set=[(train[features], train["label"]), (test[features], test["label"])])
    print(f"trained {model.best_iteration + 1} rounds (early stopping) in "
          f"{time.perf_counter() - start:.1f} s")

    # SHAP values: a lazy dask array, computed partition by partition
    contribs = model.predict(test[features], pred_contribs=True).compute()
    margins = model.predict(test[features].compute(), output_margin=True)
    print(f"SHAP values: {contribs.shape[0]} rows x {contribs.shape[1]} columns "
          f"(features + bias); largest |row sum - margin| = "
          f"{np.abs(contribs.sum(axis=1) - margins).max():.1e}")
    mean_abs = pd.Series(np.abs(contribs[:, :-1]).mean(axis=0), index=features)
    print("mean |SHAP| per feature:")
    print(mean_abs.sort_values(ascending=False).round(4).to_string())

    # export for xgboost (and treelite): the same predictions
    exported = os.path.join("examples", "output", "model-xgboost.json")
    model.save_model(exported, format="xgboost")
    X_test = test[features].compute()
    ours = model.predict_proba(X_test)[:, 1]
    try:
        import xgboost
        coded = X_test.assign(city=pd.Categorical(X_test["city"],
                                                  categories=model.get_booster().categories[5]))
        theirs = xgboost.Booster(model_file=exported).predict(
            xgboost.DMatrix(coded, enable_categorical=True),
            iteration_range=(0, model.best_iteration + 1))
        print(f"xgboost {xgboost.__version__} reads {exported}: largest probability "
              f"difference {np.abs(theirs - ours).max():.1e}")
    except ImportError:
        print("(xgboost is not installed: skipped loading the export)")

    # plots
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        print("(matplotlib is not installed: pip install -e .[plot] for the plots)")
        return 0
    os.makedirs(args.images, exist_ok=True)
    for name, draw in [("importance.png", lambda: daskboost.plot_importance(
                            model, importance_type="gain", title="Feature importance (gain)")),
                       ("learning_curve.png", lambda: daskboost.plot_metric(model))]:
        ax = draw()
        ax.figure.set_size_inches(6, 3.2)
        path = os.path.join(args.images, name)
        ax.figure.savefig(path, dpi=100, bbox_inches="tight")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
