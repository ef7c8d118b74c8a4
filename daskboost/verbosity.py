"""xgboost's ``verbosity``: how much a fit says, 0 (silent) to 3 (debug).

- 0: nothing; daskboost's own warnings (``DaskBoostWarning``) and log warnings are
  silenced for the call.
- 1 (default): warnings only.
- 2: also what the fit settled from the data, on the ``"daskboost"`` logger at INFO
  (rows, features, partitions, the objective and its start, quantized gradients, the
  memory budget) and its time at the end.
- 3: also one DEBUG line per round (its time).

The records go to the ``"daskboost"`` logger. When that logger has no handler of its
own (and the root logger none either) a handler writing to stderr is added for the call,
so that ``verbosity=2`` prints something, as xgboost's does, without logging set up.
Like xgboost's, the setting is process-wide while the call runs.

xgboost's global configuration: ``set_config(verbosity=...)``, ``get_config()`` and
``with config_context(verbosity=...)`` set the verbosity of the calls whose own
``verbosity`` is None (the default), in this thread (or asyncio task), as xgboost's do.
"""

import contextlib
import contextvars
import logging
import numbers
import sys
import warnings

LOGGER_NAME = "daskboost"
LEVELS = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}
DEFAULT_VERBOSITY = 1


class DaskBoostWarning(UserWarning):
    """A warning of daskboost's own (silenced by ``verbosity=0``)."""


def logger():
    return logging.getLogger(LOGGER_NAME)


# the global configuration (xgboost's ``set_config``): {name: value}, per thread/task
_CONFIG = contextvars.ContextVar("daskboost_config", default={"verbosity": DEFAULT_VERBOSITY})


def set_config(**new_config):
    """xgboost's ``set_config``: the global configuration, here ``verbosity`` (0-3), the
    verbosity of calls whose own is None.  Unknown names raise ValueError."""
    config = dict(_CONFIG.get())
    for name, value in new_config.items():
        if name not in config:
            raise ValueError(f"set_config({name}=...): not a setting; the settings are "
                             f"{sorted(config)}")
        config[name] = _check_verbosity_value(value)
    _CONFIG.set(config)


def get_config():
    """xgboost's ``get_config``: the global configuration, a new dict."""
    return dict(_CONFIG.get())


@contextlib.contextmanager
def config_context(**new_config):
    """xgboost's ``config_context``: ``set_config(**new_config)`` within the block, the
    configuration as it was afterwards."""
    token = _CONFIG.set(dict(_CONFIG.get()))
    try:
        set_config(**new_config)
        yield
    finally:
        _CONFIG.reset(token)


def check_verbosity(value):
    """``verbosity`` as an int in 0..3 (None: the global ``verbosity``, ``set_config``);
    ValueError/TypeError naming it otherwise."""
    if value is None:
        return _CONFIG.get()["verbosity"]
    return _check_verbosity_value(value)


def _check_verbosity_value(value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or int(value) not in LEVELS:
        raise ValueError(f"verbosity={value!r:.80} must be 0 (silent), 1 (warning), "
                         "2 (info) or 3 (debug)")
    return int(value)


@contextlib.contextmanager
def speaking(verbosity):
    """The ``"daskboost"`` logger (and daskboost's warnings) at ``verbosity`` for the
    block; everything as it was afterwards."""
    verbosity = check_verbosity(verbosity)
    log = logger()
    level, added = log.level, None
    if verbosity == DEFAULT_VERBOSITY:
        yield
        return
    log.setLevel(LEVELS[verbosity])
    if verbosity >= 2 and not log.handlers and not logging.getLogger().handlers:
        added = logging.StreamHandler(sys.stderr)
        added.setFormatter(logging.Formatter("[daskboost] %(message)s"))
        log.addHandler(added)
    try:
        with warnings.catch_warnings():
            if verbosity == 0:
                warnings.simplefilter("ignore", DaskBoostWarning)
            yield
    finally:
        log.setLevel(level)
        if added is not None:
            log.removeHandler(added)
