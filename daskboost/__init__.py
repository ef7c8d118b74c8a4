"""daskboost: XGBoost-style second-order gradient boosting, native to Dask.

Dask partitions are the data blocks: numba kernels build gradient histograms and
quantile-sketch summaries per partition, the summaries are tree-reduced in one fixed
order, and the trees are grown level by level where the partitions are: in process on
the local schedulers, on every worker at once on a ``distributed`` cluster.
"""

from .booster import Booster
from .callbacks import TrainingCallback
from .cross_validation import cv
from .folds import cv_folds
from .plotting import plot_importance, plot_metric, plot_tree
from .sklearn import DaskBoostClassifier, DaskBoostRegressor
from .warmup import start as _start_warmup

_start_warmup()

__version__ = "0.1.0"

__all__ = ["Booster", "DaskBoostClassifier", "DaskBoostRegressor", "TrainingCallback", "cv",
           "cv_folds", "plot_importance", "plot_metric", "plot_tree", "__version__"]
