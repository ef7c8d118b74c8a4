"""A progress line for long fits: rounds done, the latest eval metrics, elapsed, ETA.

Written with a carriage return to a terminal (one line that updates in place) and as
plain lines elsewhere (notebooks, logs), at most every ``min_interval`` seconds plus
the last round.
"""

import numbers
import sys
import time


def reporter_for(verbose):
    """The progress of a fit with ``verbose``: False/0/None nothing; True a line at most
    every second (and the last round); an int k >= 1 a line every k rounds (xgboost's
    ``fit(verbose=k)``) and the last.  ValueError naming ``verbose`` otherwise."""
    if verbose is None or verbose is False:
        return None
    if verbose is True:
        return ProgressReporter()
    if isinstance(verbose, numbers.Integral) and verbose >= 0:
        return ProgressReporter(period=int(verbose)) if verbose else None
    raise ValueError(f"verbose={verbose!r:.80} must be True, False or a number of rounds "
                     ">= 1 between progress lines")


class ProgressReporter:
    """Callable ``(rounds_done, n_rounds, evals_result)`` that prints progress: at most
    every ``min_interval`` seconds, or (``period``) every ``period`` rounds; and the
    last round."""

    def __init__(self, stream=None, min_interval=1.0, period=None):
        self.stream = sys.stderr if stream is None else stream
        self.min_interval = 0.0 if period else min_interval
        self.period = period
        self.start = time.perf_counter()
        self._last = -float("inf")
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done, total, evals_result):
        now = time.perf_counter()
        if done < total and (now - self._last < self.min_interval
                             or (self.period and done % self.period)):
            return
        self._last = now
        self.stream.write(("\r" if self._tty else "") + self.line(done, total, evals_result, now)
                          + ("" if self._tty and done < total else "\n"))
        self.stream.flush()

    def line(self, done, total, evals_result, now=None):
        elapsed = (time.perf_counter() if now is None else now) - self.start
        eta = elapsed / done * (total - done) if done else float("nan")
        metrics = " ".join(f"{data}-{name}={values[-1]:.6g}"
                           for data, by_name in evals_result.items()
                           for name, values in by_name.items() if values)
        return (f"[daskboost] round {done}/{total} {metrics + ' ' if metrics else ''}"
                f"elapsed {_duration(elapsed)} ETA {_duration(eta)}")


def _duration(seconds):
    if seconds != seconds:  # nan
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"
