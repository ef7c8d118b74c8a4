"""Learning to rank search results from a parquet lake (LambdaMART, ``rank:ndcg``).

Writes a small lake of search results: each row a document shown for a query, with a
``qid`` column, a few features and a relevance label 0..4; each file holds whole
queries, in increasing ``qid`` (a query's rows must all be in one partition).  Then
trains a ``DaskBoostRanker`` on it with the threaded scheduler: X keeps its ``qid``
column (the ranker takes the query ids from it, as xgboost's ``XGBRanker``), an eval
set of later queries drives early stopping on NDCG@10.  Prints the held-out NDCG@10 of
the model and of ranking by the single most relevant feature.

    python examples/ranking.py [--queries 3000]
"""

import argparse
import os
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd

from daskboost import DaskBoostRanker
from daskboost.metrics import evaluate

FEATURES = ["bm25", "title_match", "clicks", "freshness", "length"]


def write_lake(directory, n_queries, seed=0):
    """4 parquet files of whole queries: 5-40 documents each, relevance from the
    features (title matches and clicks help, stale and very long documents less so)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 41, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    n = len(qid)
    frame = pd.DataFrame({
        "qid": qid,
        "bm25": rng.gamma(2.0, 2.0, n),
        "title_match": rng.integers(0, 2, n).astype(float),
        "clicks": rng.poisson(3.0, n).astype(float),
        "freshness": rng.uniform(0, 365, n),
        "length": rng.lognormal(6, 1, n),
    })
    merit = (0.4 * frame["bm25"] + 1.5 * frame["title_match"] + 0.3 * np.sqrt(frame["clicks"])
             - 0.004 * frame["freshness"] - 0.3 * (np.log(frame["length"]) > 7.5)
             + rng.normal(scale=0.8, size=n))
    frame["relevance"] = np.digitize(merit, np.quantile(merit, [0.4, 0.7, 0.88, 0.96]))
    os.makedirs(directory, exist_ok=True)
    starts = np.searchsorted(qid, np.linspace(0, n_queries, 5).astype(int))
    for i, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        frame.iloc[a:b].to_parquet(os.path.join(directory, f"part-{i}.parquet"), index=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=3000)
    args = parser.parse_args(argv)
    lake = os.path.join("examples", "output", "ranking-lake")
    write_lake(lake, args.queries)
    data = dd.read_parquet(lake)
    # later queries held out: whole queries, so every partition keeps its queries whole
    train = data[data["qid"] < 0.7 * args.queries]
    valid = data[(data["qid"] >= 0.7 * args.queries) & (data["qid"] < 0.8 * args.queries)]
    test = data[data["qid"] >= 0.8 * args.queries]
    columns = ["qid", *FEATURES]

    model = DaskBoostRanker(objective="rank:ndcg", n_estimators=300, max_depth=5,
                            learning_rate=0.1, eval_metric="ndcg@10", early_stopping_rounds=20)
    start = time.perf_counter()
    model.fit(train[columns], train["relevance"],
              eval_set=[(valid[columns], valid["relevance"])])
    seconds = time.perf_counter() - start
    print(f"trained {model.best_iteration + 1} rounds in {seconds:.1f} s "
          f"(best validation NDCG@10 {model.best_score:.4f})")

    held_out = test.compute()
    score = model.score(held_out[columns], held_out["relevance"])
    baseline = ndcg_at_10(held_out, held_out["bm25"].to_numpy())
    print(f"held-out NDCG@10: {score:.4f} (ranking by bm25 alone: {baseline:.4f})")
    return model, score, baseline


def ndcg_at_10(frame, scores):
    """NDCG@10 of ranking each query's documents by ``scores``: the ranker's metric
    (``daskboost.metrics.evaluate`` on one block, its query groups given)."""
    qid = frame["qid"].to_numpy()
    groups = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)]
    block = (frame["relevance"].to_numpy(), np.asarray(scores, np.float64), None, groups)
    return evaluate("ndcg@10", [block], None)

if __name__ == "__main__":
    main()
