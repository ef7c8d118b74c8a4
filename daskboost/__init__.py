"""daskboost: XGBoost-style second-order gradient boosting, native to Dask.

Dask partitions are the data blocks: numba kernels build gradient histograms and
quantile-sketch summaries per partition, the summaries are tree-reduced, and the trees
are grown level by level on the client.
"""

from .booster import Booster
from .sklearn import DaskBoostClassifier, DaskBoostRegressor

__version__ = "0.1.0"

__all__ = ["Booster", "DaskBoostClassifier", "DaskBoostRegressor", "__version__"]
