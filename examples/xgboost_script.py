"""A script written for xgboost, run by daskboost: only the import differs.

Writes a small parquet lake and trains the way xgboost's native API and xgboost.dask do:
the lake read with pandas into ``DMatrix`` objects, ``train`` with eval sets,
xgboost's ``EarlyStopping`` (here ``daskboost.callbacks``'s, which can keep the best
round) and ``EvaluationMonitor``, ``cv``, the model saved and loaded back with
``Booster(model_file=...)``, ``eval``; then the lake read with dask and xgboost.dask's
``DaskXGBClassifier`` fitted on a ``distributed`` client of 2 workers.  With
``--library xgboost`` the same lines run on xgboost itself, so the two outputs can be
compared (the early-stopping callback then is xgboost's).

    python examples/xgboost_script.py [--rows 20000] [--library daskboost|xgboost]
"""

import argparse
import importlib
import os
import tempfile

import dask.dataframe as dd
import numpy as np
import pandas as pd


def write_lake(directory, n_rows, seed=0):
    """A parquet lake of 4 files in ``directory``: 6 numeric features and a 0/1 label."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n_rows, 6)).astype(np.float32),
                         columns=[f"f{j}" for j in range(6)])
    logit = frame.f0 * frame.f1 + np.sin(2 * frame.f2) - 0.5 * frame.f3
    frame["label"] = (logit + rng.logistic(size=n_rows) > 0).astype(np.float32)
    bounds = np.linspace(0, n_rows, 5).astype(int)
    for i in range(4):
        frame.iloc[bounds[i]:bounds[i + 1]].to_parquet(
            os.path.join(directory, f"part-{i}.parquet"))


def run(xgb, lake, workdir):
    """The xgboost script: ``xgb`` is ``xgboost`` or ``daskboost``."""
    data = pd.read_parquet(lake)
    features = [c for c in data.columns if c != "label"]
    train, valid = data.iloc[:len(data) * 3 // 4], data.iloc[len(data) * 3 // 4:]
    dtrain = xgb.DMatrix(train[features], label=train["label"])
    dvalid = xgb.DMatrix(valid[features], label=valid["label"])
    params = {"objective": "binary:logistic", "eta": 0.3, "max_depth": 5,
              "eval_metric": ["logloss", "auc"], "tree_method": "hist"}
    callbacks = importlib.import_module(  # xgboost.callback, daskboost.callbacks
        f"{xgb.__name__}.callback" + ("s" if xgb.__name__ == "daskboost" else ""))
    log = {}
    booster = xgb.train(params, dtrain, 200, evals=[(dtrain, "train"), (dvalid, "valid")],
                        evals_result=log, verbose_eval=False,
                        callbacks=[callbacks.EarlyStopping(rounds=10, data_name="valid"),
                                   callbacks.EvaluationMonitor(period=25)])
    best = booster.best_iteration
    print(f"stopped after {booster.num_boosted_rounds()} rounds; best round {best}: "
          f"valid auc {log['valid']['auc'][best]:.4f}, logloss {log['valid']['logloss'][best]:.4f}")

    path = os.path.join(workdir, "model.json")
    booster.save_model(path)
    loaded = xgb.Booster(model_file=path)
    print("reloaded, every round:", loaded.eval(dvalid, "valid", loaded.num_boosted_rounds() - 1))

    results = xgb.cv(params, dtrain, 30, nfold=3, seed=0)
    print(f"cv, 3 folds, 30 rounds: test auc {results['test-auc-mean'].iloc[-1]:.4f} "
          f"+- {results['test-auc-std'].iloc[-1]:.4f}")
    return booster


def run_dask_estimator(dxgb, lake, client):
    """xgboost.dask's estimator, its client set (the data persisted on the cluster first,
    as dask's tutorials do)."""
    data = client.persist(dd.read_parquet(lake))
    features = [c for c in data.columns if c != "label"]
    model = dxgb.DaskXGBClassifier(n_estimators=50, max_depth=5, learning_rate=0.3,
                                   tree_method="hist")
    model.client = client
    model.fit(data[features], data["label"])
    accuracy = float((model.predict(data[features]) == data["label"]).mean().compute())
    print(f"DaskXGBClassifier: training accuracy {accuracy:.4f}")
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--library", choices=["daskboost", "xgboost"], default="daskboost")
    args = parser.parse_args(argv)
    xgb = importlib.import_module(args.library)
    dxgb = importlib.import_module(f"{args.library}.dask")
    with tempfile.TemporaryDirectory() as workdir:
        lake = os.path.join(workdir, "lake")
        os.mkdir(lake)
        write_lake(lake, args.rows)
        booster = run(xgb, lake, workdir)
        import distributed
        with distributed.Client(n_workers=2, threads_per_worker=1,
                                dashboard_address=None) as client:
            model = run_dask_estimator(dxgb, lake, client)
    return booster, model


if __name__ == "__main__":
    main()
