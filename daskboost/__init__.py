"""daskboost: XGBoost-style second-order gradient boosting, native to Dask.

Dask partitions are the data blocks: numba kernels build gradient histograms and
quantile-sketch summaries per partition, the summaries are tree-reduced in one fixed
order, and the trees are grown level by level where the partitions are: in process on
the local schedulers, on every worker at once on a ``distributed`` cluster.
"""

from . import kernel_cache

kernel_cache.install()  # (before any module with numba kernels is imported)

from .booster import Booster  # noqa: E402
from .callbacks import TrainingCallback  # noqa: E402
from .cross_validation import cv  # noqa: E402
from .cv_models import CVBooster  # noqa: E402
from .data_iter import DataIter  # noqa: E402
from .dmatrix import DMatrix, ExtMemQuantileDMatrix, QuantileDMatrix  # noqa: E402
from .folds import cv_folds  # noqa: E402
from .native_train import train  # noqa: E402
from .plotting import plot_importance, plot_metric, plot_tree, to_graphviz  # noqa: E402
from .sklearn import (DaskBoostClassifier, DaskBoostRanker, DaskBoostRegressor,  # noqa: E402
                      DaskBoostRFClassifier, DaskBoostRFRegressor)
from .verbosity import config_context, get_config, set_config  # noqa: E402
from . import callback  # noqa: E402  (xgboost's name: xgb.callback.EarlyStopping)
from . import dask  # noqa: E402  (xgboost.dask's functions: daskboost.dask.train, ...)
from .warmup import start as _start_warmup  # noqa: E402

_start_warmup()

__version__ = "0.1.0"

# xgboost's scikit-learn names, so that ``import daskboost as xgb`` runs a script's
# ``xgb.XGBClassifier(...)``: the estimators themselves
XGBClassifier = DaskBoostClassifier
XGBRegressor = DaskBoostRegressor
XGBRanker = DaskBoostRanker
XGBRFClassifier = DaskBoostRFClassifier
XGBRFRegressor = DaskBoostRFRegressor
# xgboost's generic ``XGBModel(objective=...)``: the regressor, which takes any
# single-output objective, labels as they are (``binary:logistic``: 0/1 labels,
# ``predict`` gives probabilities, as XGBModel's)
XGBModel = DaskBoostRegressor

# xgboost's names for what daskboost does not do: the AttributeError says so
_NOT_HERE = {
    "collective": "there is no collective (rabit) layer: dask's scheduler does that",
    "tracker": "there is no collective (rabit) layer: dask's scheduler does that",
    "spark": "there is no Spark integration",
}


def __getattr__(name):
    if name in _NOT_HERE:
        raise AttributeError(f"module 'daskboost' has no attribute {name!r} (xgboost's): "
                             f"{_NOT_HERE[name]}")
    raise AttributeError(f"module 'daskboost' has no attribute {name!r}")

__all__ = ["Booster", "CVBooster", "DMatrix", "DaskBoostClassifier", "DaskBoostRanker",
           "DaskBoostRegressor", "DaskBoostRFClassifier", "DaskBoostRFRegressor",
           "DataIter", "ExtMemQuantileDMatrix", "QuantileDMatrix", "TrainingCallback",
           "XGBClassifier", "XGBModel", "XGBRFClassifier", "XGBRFRegressor", "XGBRanker",
           "XGBRegressor",
           "callback",
           "config_context", "cv", "cv_folds", "get_config", "plot_importance", "plot_metric",
           "plot_tree", "set_config", "to_graphviz", "train", "__version__"]
