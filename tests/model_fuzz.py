"""Fuzzing model files: random mutations of valid files, loaded and used for prediction.

Run as a script (``python tests/model_fuzz.py MODEL.json... --data X.npy --mutations N
--seed S``) in a subprocess of the test, so a crash of the process fails the test
instead of ending the run. For each mutation it prints one JSON line *before* trying it
(``{"i": ..., "model": ..., "mutations": [...]}``) and one after
(``{"i": ..., "outcome": "ok" | "ValueError" | "other", ...}``): the parent tells a
crash or a hang from the last line it got.

A mutation changes numbers (to boundary values, huge, NaN, infinities), types (strings,
null, booleans, arrays, objects), array lengths and order, keys (deleted, renamed, added,
given twice), the tree structure (a child pointed at another node), or the bytes of the
file (truncated, a byte changed, deep nesting, invalid UTF-8).
"""

import argparse
import json
import math
import os
import random
import sys
import tempfile
import time

import numpy as np

DUPLICATE = "__duplicate_key__"  # serialised as the key it names, given twice


def json_paths(value, path=()):
    """Every path to a value in a JSON document (containers and scalars)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from json_paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from json_paths(item, path + (i,))


def get(doc, path):
    for step in path:
        doc = doc[step]
    return doc


def put(doc, path, value):
    if not path:
        return value
    get(doc, path[:-1])[path[-1]] = value
    return doc


def interesting_numbers(rng, old):
    n = rng.randrange(1, 64)
    base = [-1, 0, 1, 2, 3, n, -n, 2 ** 31 - 1, 2 ** 31, -2 ** 31 - 1, 2 ** 63, 10 ** 30, 10 ** 400,
            0.5, -0.5, 1e300, -1e300, 1e308, math.nan, math.inf, -math.inf, 700.0, 1000.0]
    if isinstance(old, (int, float)) and not isinstance(old, bool) and abs(old) < 1e300:
        base += [old + 1, old - 1, -old, old * 1e6, old * 0.5]
    return rng.choice(base)


def other_type(rng, old):
    return rng.choice(["x", "", "inf", "nan", "1", None, True, False, [], {}, [old],
                       {"a": old}, [[1, 2], [3]]])


def mutate_document(rng, doc):
    """Apply one random structural mutation to ``doc``; returns (doc, description)."""
    paths = [p for p in json_paths(doc) if DUPLICATE not in p]  # leave those as they are
    op = rng.choice(["number", "number", "number", "type", "list", "list", "key", "child",
                     "child", "swap"])
    if op == "child":  # point a split's child at another node of its tree (cycles, sharing)
        trees = doc.get("trees") if isinstance(doc, dict) else None
        if isinstance(trees, list) and trees and isinstance(trees[0], dict):
            t = rng.randrange(len(trees))
            tree = trees[t]
            side = rng.choice(["left", "right"])
            if isinstance(tree, dict) and isinstance(tree.get(side), list) and tree[side]:
                node = rng.randrange(len(tree[side]))
                target = rng.randrange(len(tree[side]))
                tree[side][node] = target
                return doc, f"trees[{t}].{side}[{node}] = {target}"
        op = "number"
    if op == "swap":  # swap two entries of a node array (reorders a tree)
        lists = [p for p in paths if isinstance(get(doc, p), list) and len(get(doc, p)) > 1]
        if lists:
            path = rng.choice(lists)
            values = get(doc, path)
            i, j = rng.sample(range(len(values)), 2)
            values[i], values[j] = values[j], values[i]
            return doc, f"swap {path}[{i}] <-> [{j}]"
        op = "number"
    if op == "number":
        leaves = [p for p in paths if not isinstance(get(doc, p), (dict, list))]
        path = rng.choice(leaves or paths)
        value = interesting_numbers(rng, get(doc, path))
        return put(doc, path, value), f"{path} = {value!r}"
    if op == "type":
        path = rng.choice(paths)
        value = other_type(rng, get(doc, path))
        return put(doc, path, value), f"{path} = {value!r}"
    if op == "list":
        lists = [p for p in paths if isinstance(get(doc, p), list)]
        if not lists:
            return doc, "no list"
        path = rng.choice(lists)
        values = get(doc, path)
        how = rng.choice(["truncate", "append", "delete", "duplicate", "empty"])
        if how == "truncate":
            del values[rng.randrange(len(values) + 1):]
        elif how == "append":
            values.append(interesting_numbers(rng, values[-1] if values else 0))
        elif how == "delete" and values:
            del values[rng.randrange(len(values))]
        elif how == "duplicate" and values:
            values.insert(rng.randrange(len(values)), values[rng.randrange(len(values))])
        elif how == "empty":
            values.clear()
        return doc, f"{how} {path}"
    objects = [p for p in paths if isinstance(get(doc, p), dict) and get(doc, p)]
    if not objects:
        return doc, "no object"
    path = rng.choice(objects)
    obj = get(doc, path)
    key = rng.choice([k for k in obj if k != DUPLICATE] or [DUPLICATE])
    if key == DUPLICATE:
        return doc, "no key"
    how = rng.choice(["delete", "rename", "add", "duplicate"])
    if how == "delete":
        del obj[key]
    elif how == "rename":
        obj[key + "_"] = obj.pop(key)
    elif how == "add":
        obj["unexpected"] = interesting_numbers(rng, 0)
    else:
        obj[DUPLICATE] = [key, other_type(rng, obj[key]) if rng.random() < 0.5 else obj[key]]
    return doc, f"{how} key {key!r} of {path}"


def serialise(doc):
    """JSON text of ``doc``, with ``DUPLICATE`` entries written as a repeated key."""
    if isinstance(doc, dict):
        items = []
        for key, value in doc.items():
            if key == DUPLICATE:
                items.append(f"{json.dumps(value[0])}:{serialise(value[1])}")
            else:
                items.append(f"{json.dumps(key)}:{serialise(value)}")
        return "{" + ",".join(items) + "}"
    if isinstance(doc, list):
        return "[" + ",".join(serialise(v) for v in doc) + "]"
    return json.dumps(doc)  # NaN / Infinity as Python writes them


def mutate_bytes(rng, data):
    how = rng.choice(["truncate", "byte", "delete", "nest", "utf8"])
    if how == "truncate":
        cut = rng.randrange(len(data))
        return data[:cut], f"truncate at {cut}"
    if how == "byte":
        i = rng.randrange(len(data))
        b = rng.choice(b'{}[],:"0-9.eE \x00\xff')
        return data[:i] + bytes([b]) + data[i + 1:], f"byte {i} = {b}"
    if how == "delete":
        i = rng.randrange(len(data))
        j = min(len(data), i + rng.randrange(1, 64))
        return data[:i] + data[j:], f"delete bytes {i}:{j}"
    if how == "nest":
        i = data.index(b"[") + 1
        return data[:i] + b"[" * 100000 + data[i:], "100000 nested arrays"
    return data.replace(b'"feature"', b'"feat\xc3\x28re"', 1), "invalid UTF-8"


def mutated_file(rng, text):
    """Bytes of a mutated model file and a description of its mutations."""
    if rng.random() < 0.2:
        data, what = mutate_bytes(rng, text.encode())
        return data, [what]
    doc = json.loads(text)
    described = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        doc, what = mutate_document(rng, doc)
        described.append(what)
    return serialise(doc).encode(), described


def try_model(path, X):
    """Load and predict; returns the outcome's name or raises on a non-finite output."""
    from daskboost.sklearn import DaskBoostClassifier, load_estimator
    model = load_estimator(path)
    outputs = [model.predict(X, output_margin=True)]
    if isinstance(model, DaskBoostClassifier):
        outputs.append(model.predict_proba(X))
        model.predict(X)
    else:
        outputs.append(model.predict(X))
    for out in outputs:
        if not np.isfinite(np.asarray(out, dtype=np.float64)).all():
            raise AssertionError("a model that loaded predicted non-finite values")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="+")
    parser.add_argument("--data", required=True)
    parser.add_argument("--mutations", type=int, default=1000, help="per model")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    X = np.load(args.data)
    texts = {path: open(path).read() for path in args.models}
    rng = random.Random(args.seed)
    directory = tempfile.mkdtemp(prefix="daskboost-fuzz-")
    path = os.path.join(directory, "model.json")
    i = 0
    for model, text in texts.items():
        for _ in range(args.mutations):
            data, described = mutated_file(rng, text)
            print(json.dumps({"i": i, "model": os.path.basename(model), "mutations": described}),
                  flush=True)
            with open(path, "wb") as f:
                f.write(data)
            start = time.perf_counter()
            try:
                try_model(path, X)
                outcome, detail = "ok", ""
            except ValueError as err:
                outcome, detail = "ValueError", str(err)[:300]
            except Exception as err:  # noqa: BLE001 - what the test is looking for
                outcome, detail = "other", f"{type(err).__name__}: {str(err)[:300]}"
            print(json.dumps({"i": i, "outcome": outcome, "detail": detail,
                              "seconds": time.perf_counter() - start}), flush=True)
            i += 1
    os.remove(path)
    os.rmdir(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
