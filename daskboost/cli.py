"""Command line: train on and predict for parquet lakes, on a laptop or a cluster.

    daskboost train DATA... --label COL... [--features COL... | --drop COL...] [--weight COL]
                    [--objective OBJ] [--qid COL] [--param k=v ...] [--eval DATA...]
                    --output model.json [--scheduler S] [--quiet]
    daskboost predict MODEL DATA... --output preds.parquet [--id COL] [--scheduler S]
                    [--margin]
    daskboost explain MODEL DATA... --output contribs.parquet [--approx] [--id COL]
    daskboost importance MODEL [--type gain] [--plot importance.png]
    daskboost export MODEL --format xgboost --output model-xgboost.json

DATA is parquet files, directories of them or glob patterns.  Ranking (``--objective
rank:ndcg`` ...) takes each row's query id from ``--qid COL``: the files hold whole
queries in non-decreasing id order (``query_groups``).  ``--scheduler`` is
``threads`` (default), ``synchronous`` or the address of a ``distributed`` scheduler.
Inputs are checked from the parquet schemas before any data is read: paths that match
nothing or cannot be read, label, weight, feature or id columns that do not exist, files
whose columns differ (their order may differ: columns are selected by name).  Outputs
are written next to their destination and renamed into place, so a failed run leaves
nothing half-written.
"""

import argparse
import contextlib
import glob
import json
import os
import shutil
import sys
import time
import uuid

from .objectives import OBJECTIVES


class CliError(Exception):
    """A problem with the command's input: reported as one line, exit status 2."""


def parquet_files(patterns):
    """Expand files, directories and globs into parquet file paths (sorted, unique)."""
    files = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) or ([pattern] if os.path.exists(pattern) else [])
        if not matches:
            raise CliError(f"no parquet data at {pattern!r} (no such file, directory or match)")
        for path in matches:
            if os.path.isdir(path):
                found = sorted(glob.glob(os.path.join(path, "**", "*.parquet"), recursive=True))
                if not found:
                    raise CliError(f"directory {path!r} holds no .parquet files")
                files.extend(found)
            else:
                files.append(path)
    return list(dict.fromkeys(files))


def check_schemas(files):
    """The column names of the first file, after checking (metadata only) that every file has
    the same columns and types, in any order; CliError naming any difference."""
    import pyarrow.parquet as pq
    schemas = {}
    for path in files:
        try:
            schemas[path] = pq.read_schema(path)
        except Exception as err:  # pyarrow raises several types for unreadable files
            raise CliError(f"cannot read parquet file {path!r}: {err}") from None
    first_path, first = files[0], schemas[files[0]]
    a = {f.name: str(f.type) for f in first}
    for path in files[1:]:
        b = {f.name: str(f.type) for f in schemas[path]}
        if b != a:  # by name: files may order their columns differently
            diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            detail = ", ".join(f"{k}: {a.get(k, 'missing')} vs {b.get(k, 'missing')}" for k in diff)
            raise CliError(f"parquet files have different schemas: {first_path!r} and {path!r} "
                           f"differ in {detail}")
    return [field.name for field in first]


def open_lake(patterns):
    """The parquet files behind ``patterns`` and their column names (schemas only)."""
    files = parquet_files(patterns)
    return files, check_schemas(files)


def check_columns(wanted, names, what="column(s)"):
    """CliError naming the ``wanted`` columns that are not in ``names``."""
    missing = [c for c in wanted if c not in names]
    if missing:
        raise CliError(f"{what} {missing} not in the data; columns: {names}")


def read_columns(files, columns):
    """The named columns of ``files`` as a lazy dask DataFrame, in that order."""
    import dask.dataframe as dd
    return dd.read_parquet(files, columns=list(columns))


def label_of(labels):
    """The label column's name, or the list of several (a frame of one column each)."""
    return labels[0] if len(labels) == 1 else labels


def feature_columns(columns, labels, weight=None, features=None, drop=None, qid=None):
    """The training features: ``features`` as given, else every column but ``drop``, the
    label columns (one per target), the weight and the query ids.  CliError for unknown
    names or a label, weight or query id column used as a feature."""
    not_features = {**{label: "label" for label in labels}, weight: "weight", qid: "qid"}
    if features is not None:
        check_columns(features, columns, "--features column(s)")
        for name in features:
            if name in not_features:
                raise CliError(f"--features: {name!r} is the {not_features[name]} column, "
                               f"not a feature")
        return list(dict.fromkeys(features))
    check_columns(drop or [], columns, "--drop column(s)")
    chosen = [c for c in columns if c not in not_features and c not in (drop or [])]
    if not chosen:
        raise CliError(f"no feature columns left; columns: {columns}")
    return chosen


def parse_param(text):
    """``key=value`` with value read as JSON when it parses (numbers, booleans), else text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise CliError(f"--param {text!r} must look like key=value")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


@contextlib.contextmanager
def scheduler(spec):
    import dask
    if spec in (None, "threads", "synchronous"):
        with dask.config.set(scheduler=spec or "threads"):
            yield
        return
    from distributed import Client
    with Client(spec):
        yield


@contextlib.contextmanager
def written_into_place(path):
    """Yield a temporary path next to ``path``; rename it to ``path`` on success."""
    path = os.path.abspath(path)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        if os.path.isdir(path) and os.path.isdir(tmp):
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        elif os.path.exists(tmp):
            os.remove(tmp)


def estimator_for(objective):
    """The classifier for a classification objective (binary or multiclass, as the
    objective's ``kind`` says), the ranker for a ranking one, else the regressor (also
    for no objective)."""
    from .sklearn import estimator_class_for
    if objective is not None and (not isinstance(objective, str) or objective not in OBJECTIVES):
        valid = ", ".join(repr(name) for name in OBJECTIVES)
        raise CliError(f"objective={objective!r} is not supported; valid objectives: {valid}")
    return estimator_class_for(objective)


def train(args):
    params = dict(parse_param(p) for p in args.param)
    if args.objective:
        params["objective"] = args.objective
    if args.memory_budget is not None:
        params["memory_budget"] = args.memory_budget
    if args.cache_dir:
        params["cache_dir"] = args.cache_dir
    cls = estimator_for(params.get("objective"))
    try:
        model = cls(verbose=not args.quiet, **params)
    except TypeError as err:
        raise CliError(f"unknown --param: {err}") from None
    files, columns = open_lake(args.data)
    labels = list(dict.fromkeys(args.label))  # (several: one output per target column)
    for label in labels:
        if label not in columns:
            raise CliError(f"label column {label!r} is not in the data; columns: {columns}")
    if args.weight is not None and args.weight not in columns:
        raise CliError(f"weight column {args.weight!r} is not in the data; columns: {columns}")
    if args.weight is not None and args.weight in labels:
        raise CliError(f"--weight {args.weight!r} is the label column")
    ranking = model._estimator_type == "ranker"
    if ranking and args.qid is None:
        raise CliError(f"objective={params['objective']!r} ranks within queries: give --qid "
                       "COL, the column of each row's query id")
    if not ranking and args.qid is not None:
        raise CliError(f"--qid {args.qid!r} is for the ranking objectives (rank:ndcg, "
                       f"rank:pairwise, rank:map); objective={params.get('objective')!r}")
    if ranking:
        check_columns([args.qid], columns, "--qid column")
    features = feature_columns(columns, labels, args.weight, args.features, args.drop,
                               args.qid)
    targets = labels + ([args.weight] if args.weight else []) + (
        [args.qid] if ranking else [])
    eval_files = None
    if args.eval:
        eval_files, eval_columns = open_lake(args.eval)
        check_columns(features + labels + ([args.qid] if ranking else []), eval_columns)
        eval_targets = [c for c in targets if c in eval_columns]
    data = read_columns(files, features + targets)
    weight = data[args.weight] if args.weight else None
    eval_set = eval_weights = None
    queries = {}
    if eval_files:
        eval_data = read_columns(eval_files, features + eval_targets)
        eval_set = [(eval_data[features], eval_data[label_of(labels)])]
        if args.weight in eval_targets:
            eval_weights = [eval_data[args.weight]]
        if ranking:
            queries["eval_qid"] = [eval_data[args.qid]]
    if ranking:
        queries["qid"] = data[args.qid]
    start = time.perf_counter()
    with scheduler(args.scheduler):
        model.fit(data[features], data[label_of(labels)], sample_weight=weight, eval_set=eval_set,
                  sample_weight_eval_set=eval_weights, **queries)
    model.save_model(args.output)  # (atomic; by its name: UBJSON for .ubj, as xgboost)
    rounds = model.get_booster().n_rounds
    print(f"trained {rounds} rounds on {len(features)} features in "
          f"{time.perf_counter() - start:.1f} s; model written to {args.output}")


def load_model_file(path):
    """The estimator in the model file at ``path`` (daskboost's or xgboost's JSON)."""
    from .sklearn import load_estimator
    try:
        return load_estimator(path)  # ValueError for a bad file: one line, exit 2
    except FileNotFoundError:
        raise CliError(f"no model file at {path!r}") from None
    except OSError as err:
        raise CliError(f"cannot read model file {path!r}: {err.strerror or err}") from None


def model_input(model, args):
    """(the lake's columns the model needs, as a dask DataFrame, their names), checked
    from the schemas first (with the ``--id`` column if asked)."""
    features = list(getattr(model, "feature_names_in_", []))
    files, columns = open_lake(args.data)
    check_columns(features, columns, "the model's feature column(s)")
    if args.id is not None:
        check_columns([args.id], columns, "--id column")
    X_columns = features or columns  # a model without feature names takes every column
    data = read_columns(files, dict.fromkeys(X_columns + ([args.id] if args.id else [])))
    return data, X_columns


def predict(args):
    from .sklearn import DaskBoostClassifier
    model = load_model_file(args.model)
    data, X_columns = model_input(model, args)
    with scheduler(args.scheduler):
        X = data[X_columns]
        if args.margin:
            out = model.predict(X, output_margin=True)
            if out.ndim == 2:  # multiclass: a margin per class
                out.columns = [f"margin_{c}" for c in out.columns]
        elif isinstance(model, DaskBoostClassifier):
            out = model.predict_proba(X)
            out.columns = [f"proba_{c}" for c in out.columns]
            predicted = model.predict(X)
            if predicted.ndim == 2:  # several labels: each label's class
                for c in predicted.columns:
                    out[f"prediction_{c}"] = predicted[c]
            else:
                out["prediction"] = predicted
        else:
            out = model.predict(X)
            if out.ndim == 2 and model.get_booster().n_targets > 1:  # a column per target
                out.columns = [f"prediction_{t}" for t in out.columns]
            elif out.ndim == 2:  # several quantile levels: a prediction per level
                levels = model.get_booster().objective_params["quantile_alpha"]
                out.columns = [f"prediction_{a:g}" for a in levels]
        frame = out.to_frame(name="margin" if args.margin else "prediction") \
            if hasattr(out, "to_frame") else out
        if args.id is not None:
            frame = with_id_column(frame, data[args.id], args.id)
        with written_into_place(args.output) as tmp:
            frame.to_parquet(tmp, write_index=True)
    print(f"predictions written to {args.output}")


def explain(args):
    """SHAP contributions of every row: one column per feature and the bias (per class:
    ``<column>_<class>``), in the data's row order."""
    model = load_model_file(args.model)
    data, X_columns = model_input(model, args)
    booster = model.get_booster()
    names = list(booster.feature_names or X_columns) + ["bias"]
    if booster.n_outputs > 1:
        classes = range(booster.n_outputs) if booster.n_targets > 1 else getattr(
            model, "classes_", range(booster.n_outputs))
        names = [f"{name}_{c}" for c in classes for name in names]
    if args.id is not None and args.id in names:
        raise CliError(f"--id {args.id!r} clashes with a contribution column")
    job = _ExplainPartition(booster, names, args.approx)
    with scheduler(args.scheduler):
        frame = data[X_columns].map_partitions(job, meta=job.meta())
        if args.id is not None:
            frame = with_id_column(frame, data[args.id], args.id)
        with written_into_place(args.output) as tmp:
            frame.to_parquet(tmp, write_index=True)
    print(f"contributions of {len(X_columns)} features written to {args.output}")


class _ExplainPartition:
    """A partition's contributions as a DataFrame (the partition's index kept)."""

    def __init__(self, booster, names, approx):
        self.booster, self.names, self.approx = booster, names, approx

    def meta(self):
        import pandas as pd
        return pd.DataFrame({name: pd.Series(dtype="float64") for name in self.names})

    def __call__(self, part):
        import pandas as pd
        values = self.booster.predict_contributions(part, approx=self.approx)
        return pd.DataFrame(values.reshape(len(part), -1), index=part.index, columns=self.names)


def importance(args):
    """The features' importances, largest first (and a bar plot with ``--plot``)."""
    from .inspection import IMPORTANCE_TYPES
    if args.type not in IMPORTANCE_TYPES:
        raise CliError(f"--type {args.type!r} must be one of {', '.join(IMPORTANCE_TYPES)}")
    model = load_model_file(args.model)
    scores = model.get_booster().get_score(importance_type=args.type)
    width = max([len(name) for name in scores] + [len("feature")])
    print(f"{'feature':<{width}}  {args.type}")
    for name, score in sorted(scores.items(), key=lambda item: -item[1]):
        print(f"{name:<{width}}  {score:.6g}")
    if args.plot:
        from .plotting import _pyplot, plot_importance
        plt = _pyplot()
        ax = plot_importance(model, importance_type=args.type)
        with written_into_place(args.plot) as tmp:
            ax.figure.savefig(tmp, format=os.path.splitext(args.plot)[1][1:] or "png",
                              bbox_inches="tight")
        plt.close(ax.figure)
        print(f"plot written to {args.plot}")


def export(args):
    """The model file in another format (xgboost's JSON model)."""
    model = load_model_file(args.model)
    model.get_booster().to_payload(args.format)  # what cannot be exported fails here
    model.save_model(args.output, format=args.format)  # (atomic; JSON or UBJSON by its name)
    print(f"{args.format} model written to {args.output}")


def with_id_column(frame, ids, name):
    """``frame`` (predictions, partitioned like the data) with the ``ids`` column first."""
    if name in frame.columns:
        raise CliError(f"--id {name!r} clashes with a prediction column; columns: "
                       f"{list(frame.columns)}")
    return frame.assign(**{name: ids})[[name] + list(frame.columns)]


def build_parser():
    parser = argparse.ArgumentParser(prog="daskboost", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fit a model on a parquet lake")
    t.add_argument("data", nargs="+", help="parquet files, directories or globs")
    t.add_argument("--label", required=True, nargs="+", metavar="COL",
                   help="the label column; several: a model with one output per column "
                   "(multi-target; multi-label with a binary objective)")
    chosen = t.add_mutually_exclusive_group()
    chosen.add_argument("--features", nargs="+", metavar="COL",
                        help="train on exactly these columns (default: every column but the "
                        "label and the weight)")
    chosen.add_argument("--drop", nargs="+", metavar="COL",
                        help="train on every column but these (and the label and the weight), "
                        "e.g. ids and timestamps")
    t.add_argument("--weight", metavar="COL", help="a column of sample weights; also used for "
                   "the --eval data if it has the column, else the --eval rows weigh 1")
    t.add_argument("--objective", help="e.g. reg:squarederror, binary:logistic, multi:softprob, "
                   "rank:ndcg")
    t.add_argument("--qid", metavar="COL", help="ranking: the column of each row's query id "
                   "(whole queries in each file, in non-decreasing id order); also in --eval")
    t.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="an estimator parameter, e.g. n_estimators=200 (repeatable)")
    t.add_argument("--eval", nargs="+", help="parquet data to evaluate every round")
    t.add_argument("--output", required=True, help="the model file to write (JSON)")
    t.add_argument("--scheduler", help="threads (default), synchronous, or a distributed address")
    t.add_argument("--quiet", action="store_true", help="no progress display")
    t.add_argument("--memory-budget", help="memory for binned data, e.g. 2GB (default: auto, "
                   "half the available memory); the rest is spilled to --cache-dir")
    t.add_argument("--cache-dir", action="append", metavar="DIR",
                   help="directory for spilled blocks (repeatable: blocks are spread over "
                   "them); default: the system temp dir")
    p = sub.add_parser("predict", help="predict for a parquet lake with a saved model")
    p.add_argument("model", help="a model file written by `daskboost train` or save_model")
    p.add_argument("data", nargs="+", help="parquet files, directories or globs")
    p.add_argument("--output", required=True, help="the parquet dataset to write")
    p.add_argument("--scheduler", help="threads (default), synchronous, or a distributed address")
    p.add_argument("--margin", action="store_true", help="write raw margins")
    p.add_argument("--id", metavar="COL", help="copy this column of the data into the output, "
                   "before the predictions")
    e = sub.add_parser("explain", help="SHAP contributions for a parquet lake")
    e.add_argument("model", help="a model file (daskboost's or xgboost's JSON)")
    e.add_argument("data", nargs="+", help="parquet files, directories or globs")
    e.add_argument("--output", required=True, help="the parquet dataset to write: a column "
                   "per feature and the bias (per class for multiclass models)")
    e.add_argument("--approx", action="store_true", help="Saabas' approximation instead of "
                   "exact TreeSHAP")
    e.add_argument("--id", metavar="COL", help="copy this column of the data into the output")
    e.add_argument("--scheduler", help="threads (default), synchronous, or a distributed address")
    i = sub.add_parser("importance", help="print the features' importances")
    i.add_argument("model", help="a model file (daskboost's or xgboost's JSON)")
    i.add_argument("--type", default="gain", help="weight, gain (default), cover, "
                   "total_gain or total_cover")
    i.add_argument("--plot", metavar="FILE", help="also draw them (png, svg, pdf: needs "
                   "matplotlib)")
    x = sub.add_parser("export", help="write a model file in another format")
    x.add_argument("model", help="a model file (daskboost's or xgboost's JSON)")
    x.add_argument("--format", required=True, choices=("xgboost", "daskboost"),
                   help="xgboost: xgboost's JSON model (xgboost and treelite load it)")
    x.add_argument("--output", required=True, help="the model file to write")
    return parser


COMMANDS = {"train": train, "predict": predict, "explain": explain, "importance": importance,
            "export": export}


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        COMMANDS[args.command](args)
    except (CliError, ValueError, TypeError) as err:  # input, parameter and data errors
        print(f"daskboost: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
