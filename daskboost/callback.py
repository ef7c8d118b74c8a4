"""xgboost's module name for the training callbacks: ``daskboost.callback`` holds
``daskboost.callbacks``' classes, so a script's ``xgb.callback.EarlyStopping(...)`` and
``from xgboost.callback import TrainingCallback`` run with daskboost in xgboost's place."""

from .callbacks import (EarlyStopping, EvaluationMonitor, LearningRateScheduler,  # noqa: F401
                        TrainingCallback, TrainingCheckPoint)

__all__ = ["EarlyStopping", "EvaluationMonitor", "LearningRateScheduler", "TrainingCallback",
           "TrainingCheckPoint"]
