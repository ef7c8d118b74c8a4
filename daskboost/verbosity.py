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
"""

import contextlib
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


def check_verbosity(value):
    """``verbosity`` as an int in 0..3; ValueError/TypeError naming it otherwise."""
    if value is None:
        return DEFAULT_VERBOSITY
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
