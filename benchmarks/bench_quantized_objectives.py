"""Quantized against float gradients, objective by objective: the test metric and the fit time.

What decides ``quantized_grad="auto"``'s objectives (``Objective.bounded_hessian``): for
every regression objective, one fit with ``quantized_grad=False`` and one with ``True``
(4 bins) on the same data, the eval set's last-round metric and the fit seconds of each.

* Data: ``--rows`` (default 200,000) training rows and 50,000 test rows of 20 float32
  features, 5% missing; a nonlinear signal ``f`` of five of them; labels per objective
  drawn around it (normal, Laplace and Student-t noise; Poisson counts, gamma and
  compound Poisson-gamma (Tweedie) amounts with log-mean ``f / 2``).
* Model: 100 trees, depth 6, learning rate 0.1, 256 bins, in memory (numpy), the
  threaded scheduler.

Run from the repository root::

    python benchmarks/bench_quantized_objectives.py
    python benchmarks/bench_quantized_objectives.py --objectives reg:gamma,reg:tweedie
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402

import numpy as np  # noqa: E402

N_FEATURES, TEST_ROWS = 20, 50_000


def make_data(n_rows, seed):
    """(X, f): features with 5% NaN, and the signal the labels are drawn around."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, N_FEATURES)).astype(np.float32)
    Z = X.astype(np.float64)
    f = (0.8 * Z[:, 0] - 0.5 * Z[:, 1] * Z[:, 2] + np.sin(2 * Z[:, 3])
         + 0.3 * np.abs(Z[:, 4]))
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, f


# objective: (eval metric, labels drawn around the signal f)
CASES = {
    "reg:squarederror": ("rmse", lambda rng, f: f + rng.normal(size=len(f))),
    "reg:absoluteerror": ("mae", lambda rng, f: f + rng.laplace(size=len(f))),
    "reg:quantileerror": ("quantile", lambda rng, f: f + rng.normal(size=len(f))),
    "reg:pseudohubererror": ("mphe", lambda rng, f: f + rng.standard_t(3, size=len(f))),
    "count:poisson": ("poisson-nloglik", lambda rng, f: rng.poisson(np.exp(0.5 * f))),
    "reg:gamma": ("gamma-deviance", lambda rng, f: rng.gamma(2.0, np.exp(0.5 * f) / 2.0)),
    "reg:tweedie": ("tweedie-nloglik@1.5", lambda rng, f: rng.poisson(np.exp(0.5 * f))
                    * rng.gamma(2.0, 0.5, size=len(f))),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000, help="training rows")
    parser.add_argument("--objectives", default=",".join(CASES),
                        help=f"comma list out of {','.join(CASES)}")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--output", default=None,
                        help="write PATH.json and PATH.md with the results")
    args = parser.parse_args(argv)
    objectives = [o.strip() for o in args.objectives.split(",") if o.strip()]
    if not objectives or any(o not in CASES for o in objectives) or args.rows < 1000:
        parser.error(f"--objectives out of {','.join(CASES)}; --rows >= 1000")
    from daskboost import DaskBoostRegressor
    from daskboost.objectives import get_objective

    X, f = make_data(args.rows + TEST_ROWS, args.seed)
    DaskBoostRegressor(n_estimators=2).fit(X[:1000], f[:1000])  # JIT, imports: untimed
    DaskBoostRegressor(n_estimators=2, quantized_grad=True).fit(X[:1000], f[:1000])
    rows, results = [], {}
    for objective in objectives:
        metric, draw = CASES[objective]
        y = draw(np.random.default_rng(args.seed + 1), f)
        scores, seconds = {}, {}
        for quantized in (False, True):
            model = DaskBoostRegressor(objective=objective, n_estimators=100, max_depth=6,
                                       learning_rate=0.1, max_bin=256,
                                       quantized_grad=quantized, eval_metric=metric)
            _, seconds[quantized], _ = common.timed(
                model.fit, X[:args.rows], y[:args.rows],
                eval_set=[(X[args.rows:], y[args.rows:])])
            scores[quantized] = model.evals_result()["validation_0"][metric][-1]
        change = (scores[True] - scores[False]) / abs(scores[False])
        results[objective] = {"metric": metric, "float": scores[False],
                              "quantized": scores[True], "seconds": seconds,
                              "bounded_hessian": get_objective(objective).bounded_hessian}
        rows.append([objective, metric, f"{scores[False]:.5f}", f"{scores[True]:.5f}",
                     f"{change:+.2%}", f"{seconds[False]:.2f} / {seconds[True]:.2f}",
                     "yes" if results[objective]["bounded_hessian"] else "no"])
        print(f"# {objective}: float {scores[False]:.5f}, quantized {scores[True]:.5f}",
              flush=True)
    common.report(args, "quantized_objectives",
                  ["objective", "test metric", "float", "quantized", "quantized vs float",
                   "fit s float / quantized", "auto quantizes"],
                  rows, common.machine_info(), results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
