"""Tuning with Optuna, pruning unpromising trials through a training callback.

Each trial fits a ``DaskBoostClassifier`` on a dask DataFrame with an eval set; a
callback (xgboost's ``TrainingCallback`` shape: ``after_iteration(model, epoch,
evals_log) -> stop``) reports the eval set's log loss to Optuna after every round and
stops the fit when Optuna's median pruner says the trial is behind the others.  Prints
how many trials finished and how many were pruned, the best parameters and the best
validation log loss.

Optuna is an optional install:

    pip install optuna
    python examples/optuna_pruning.py [--trials 20] [--rows 20000]
"""

import argparse

import dask.dataframe as dd
import numpy as np
import pandas as pd

from daskboost import DaskBoostClassifier, TrainingCallback


class OptunaPruning(TrainingCallback):
    """Report ``evals_log[data][metric]`` to ``trial`` after every round; stop the fit
    (and mark the trial pruned) when Optuna says so."""

    def __init__(self, trial, data="validation_0", metric="logloss"):
        self.trial, self.data, self.metric = trial, data, metric
        self.pruned_at = None

    def after_iteration(self, model, epoch, evals_log):
        self.trial.report(evals_log[self.data][self.metric][-1], step=epoch)
        if self.trial.should_prune():
            self.pruned_at = epoch
            return True
        return False


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"x{i}": rng.normal(size=n) for i in range(8)})
    frame["shop"] = rng.choice([f"shop{i:02d}" for i in range(30)], n)
    shop_effect = dict(zip(sorted(frame["shop"].unique()), rng.normal(0, 1, 30)))
    logit = (frame["x0"] * frame["x1"] + np.sin(2 * frame["x2"]) + frame["shop"].map(shop_effect)
             - 0.5 * frame["x3"] ** 2)
    frame["bought"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    return frame


def main(argv=None):
    import optuna

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args(argv)
    frame = make_data(args.rows)
    cut = int(0.8 * len(frame))
    train = dd.from_pandas(frame.iloc[:cut], npartitions=4)
    valid = dd.from_pandas(frame.iloc[cut:], npartitions=1)
    features = [c for c in frame.columns if c != "bought"]

    def objective(trial):
        model = DaskBoostClassifier(
            n_estimators=200, eval_metric="logloss",
            learning_rate=trial.suggest_float("learning_rate", 0.02, 0.5, log=True),
            max_depth=trial.suggest_int("max_depth", 2, 8),
            min_child_weight=trial.suggest_float("min_child_weight", 0.5, 20, log=True),
            reg_lambda=trial.suggest_float("reg_lambda", 1e-3, 10, log=True))
        pruning = OptunaPruning(trial)
        model.fit(train[features], train["bought"],
                  eval_set=[(valid[features], valid["bought"])], callbacks=[pruning])
        if pruning.pruned_at is not None:
            raise optuna.TrialPruned(f"pruned after round {pruning.pruned_at}")
        return model.evals_result()["validation_0"]["logloss"][-1]

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=0),
                                pruner=optuna.pruners.MedianPruner(n_startup_trials=3,
                                                                   n_warmup_steps=10))
    study.optimize(objective, n_trials=args.trials)
    states = [t.state for t in study.trials]
    print(f"trials: {states.count(optuna.trial.TrialState.COMPLETE)} finished, "
          f"{states.count(optuna.trial.TrialState.PRUNED)} pruned")
    print(f"best validation log loss {study.best_value:.4f} with {study.best_params}")


if __name__ == "__main__":
    main()
