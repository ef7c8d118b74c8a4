"""What a trained ``Booster`` takes of xgboost's parameters outside a fit.

xgboost's ``Booster(params)`` and ``set_param`` hold every parameter; on a trained model
only a few of them change anything before the next ``update``: the threads that
predict (``nthread``), the metrics ``eval``/``eval_set`` report (``eval_metric``) and
the device.  Those are the settings here.  daskboost has no ``Booster.update`` (a fit
continues a model with ``train(..., xgb_model=booster)``), so a training parameter
given to ``set_param`` outside a fit is refused by name; ``Booster(params)`` takes a
whole training dict, as xgboost's constructor does, and keeps only the settings.
"""

from .local_threads import check_n_jobs

THREADS = ("nthread", "n_jobs")
DEFAULT_METRIC = None  # in a list of ``eval_metric`` names: the objective's default one
SETTINGS = THREADS + ("eval_metric", "device")


def with_settings(settings, params, strict):
    """``settings`` (``{setting: value}``) updated by ``params`` (a dict or xgboost's list
    of ``(key, value)`` pairs): thread counts as ``n_jobs`` counts them; each
    ``eval_metric`` added to the metrics so far, as xgboost adds them; ``device`` "cpu"
    only.  ``strict``: a key that is not a setting is a ValueError (``set_param``); else
    it is left out (``Booster(params)``)."""
    out = dict(settings)
    for key, value in (params.items() if isinstance(params, dict) else params):
        if key in THREADS:
            out["nthread"] = check_n_jobs(value, key)
        elif key == "eval_metric":
            names = out.get("eval_metric", [])
            out["eval_metric"] = names + [m for m in _metric_names(value) if m not in names]
        elif key == "device":
            if not (isinstance(value, str) and value.split(":")[0] == "cpu"):
                raise ValueError(f"device={value!r}: daskboost predicts on the CPU ('cpu')")
        elif strict:
            raise ValueError(
                f"set_param({key!r}) on a trained Booster: outside a fit a Booster takes "
                f"{', '.join(SETTINGS)}; a training parameter shapes the next fit: "
                f"daskboost.train(params, ..., xgb_model=booster) continues this model")
    return out


def _metric_names(value):
    names = list(value) if isinstance(value, (list, tuple)) else [value]
    if not names or not all(isinstance(name, str) and name for name in names):
        raise TypeError(f"eval_metric={value!r:.80} must be a metric name or a list of names")
    return names
