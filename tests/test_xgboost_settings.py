"""xgboost's settings that scripts pass to every estimator: ``verbosity``, ``booster``,
``device``, and ``fit(verbose=...)``.  None of them changes the model."""

import json
import logging
import warnings

import numpy as np
import pytest

import daskboost
from daskboost import DaskBoostClassifier, DaskBoostRegressor
from daskboost.metrics import UndefinedMetricWarning
from daskboost.verbosity import DaskBoostWarning

PARAMS = dict(n_estimators=4, max_depth=3)


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 4))
    return X, (X[:, 0] + rng.normal(0, 0.5, 1200) > 0).astype(np.int64)


def model_json(estimator):
    return json.dumps(estimator.get_booster().to_dict(), sort_keys=True)


def one_class_eval(X):
    """An eval set of one class: its AUC is undefined (a daskboost warning)."""
    return [(X[:20], np.zeros(20, np.int64))]


def test_verbosity_0_silences_daskboost_warnings_only_for_the_call(xy):
    X, y = xy
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DaskBoostClassifier(eval_metric="auc", verbosity=0, **PARAMS).fit(
            X, y, eval_set=one_class_eval(X))
        assert caught == []
        DaskBoostClassifier(eval_metric="auc", **PARAMS).fit(X, y, eval_set=one_class_eval(X))
    assert caught and all(issubclass(w.category, UndefinedMetricWarning) for w in caught)
    assert issubclass(UndefinedMetricWarning, DaskBoostWarning)
    assert issubclass(UndefinedMetricWarning, RuntimeWarning)  # (what it was before)


def test_verbosity_2_and_3_say_what_the_fit_settled_and_its_rounds(xy, capsys, monkeypatch):
    X, y = xy
    # logging not set up (pytest's own root handlers set aside): the lines go to stderr
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    logger = logging.getLogger("daskboost")
    assert not logger.handlers
    DaskBoostClassifier(verbosity=2, **PARAMS).fit(X, y, eval_set=[(X, y)])
    info = capsys.readouterr().err
    assert "1200 rows x 4 features in 1 partitions; objective binary:logistic" in info
    assert "quantized gradients off" in info and "4 rounds in" in info
    assert "round 0:" not in info
    DaskBoostClassifier(verbosity=3, **PARAMS).fit(X, y, eval_set=[(X, y)])
    debug = capsys.readouterr().err
    assert debug.count("] round ") == 4 and "validation_0-logloss=" in debug
    DaskBoostClassifier(**PARAMS).fit(X, y)
    assert capsys.readouterr().err == ""
    # the logger as it was: no handler left, its level back
    assert not logger.handlers and logger.level == logging.NOTSET


def test_the_global_verbosity_as_xgboosts_set_config(xy):
    import threading
    X, y = xy
    assert daskboost.get_config() == {"verbosity": 1}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with daskboost.config_context(verbosity=0):
            assert daskboost.get_config() == {"verbosity": 0}
            DaskBoostClassifier(eval_metric="auc", **PARAMS).fit(X, y, eval_set=one_class_eval(X))
            assert caught == []
            # a call's own verbosity wins; another thread has its own configuration
            DaskBoostClassifier(eval_metric="auc", verbosity=1, **PARAMS).fit(
                X, y, eval_set=one_class_eval(X))
            assert caught
            seen = []
            thread = threading.Thread(target=lambda: seen.append(daskboost.get_config()))
            thread.start()
            thread.join()
            assert seen == [{"verbosity": 1}]
    assert daskboost.get_config() == {"verbosity": 1}
    daskboost.set_config(verbosity=2)
    try:
        assert daskboost.get_config()["verbosity"] == 2
    finally:
        daskboost.set_config(verbosity=1)
    with pytest.raises(ValueError, match=r"set_config\(use_rmm=...\): not a setting"):
        daskboost.set_config(use_rmm=True)
    with pytest.raises(ValueError, match="verbosity=5 must be"):
        with daskboost.config_context(verbosity=5):
            pass
    assert daskboost.get_config() == {"verbosity": 1}


def test_verbosity_2_goes_to_the_users_logging_when_set_up(xy, caplog):
    X, y = xy
    with caplog.at_level(logging.INFO, logger="daskboost"):
        daskboost.cv({"objective": "binary:logistic", "verbosity": 2}, X, y, nfold=3,
                     num_boost_round=2)
    assert any("cv, 3 folds: 1200 rows" in r.getMessage() for r in caplog.records)


def test_settings_do_not_change_the_model(xy):
    X, y = xy
    plain = DaskBoostClassifier(**PARAMS).fit(X, y)
    for settings in ({"verbosity": 0}, {"verbosity": 3}, {"booster": "gbtree"},
                     {"device": "cpu"}, {"verbose": 2}):
        assert model_json(DaskBoostClassifier(**settings, **PARAMS).fit(X, y)) == \
            model_json(plain), settings


ONE_VALUED = {"booster": "gbtree", "device": "cpu", "sampling_method": "uniform",
              "multi_strategy": "one_output_per_tree",
              "validate_parameters": False}


def test_settings_are_not_saved(xy, tmp_path):
    X, y = xy
    model = DaskBoostRegressor(verbosity=0, **ONE_VALUED, **PARAMS).fit(X, y)
    model.save_model(tmp_path / "m.json")
    saved = json.loads((tmp_path / "m.json").read_text())["estimator"]["params"]
    assert not {"verbosity", *ONE_VALUED} & set(saved)


def test_xgboosts_parameters_at_their_one_value_here_change_nothing(xy):
    X, y = xy
    plain = DaskBoostRegressor(**PARAMS).fit(X, y)
    assert model_json(DaskBoostRegressor(**ONE_VALUED, **PARAMS).fit(X, y)) == model_json(plain)
    native = daskboost.train({**ONE_VALUED, "validate_parameters": True,
                              "max_depth": PARAMS["max_depth"]}, X, y,
                             num_boost_round=PARAMS["n_estimators"])
    assert native.n_rounds == PARAMS["n_estimators"]


def test_fit_verbose_every_k_rounds(xy, capsys):
    X, y = xy
    model = DaskBoostClassifier(n_estimators=6, max_depth=2)
    model.fit(X, y, eval_set=[(X, y)], verbose=2)
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split()[2] for line in lines] == ["2/6", "4/6", "6/6"]
    assert all("validation_0-logloss=" in line for line in lines)
    model.fit(X, y, verbose=False)
    assert capsys.readouterr().err == ""
    DaskBoostClassifier(n_estimators=2, verbose=True).fit(X, y, verbose=False)
    assert capsys.readouterr().err == ""  # the fit's argument wins over the estimator's


@pytest.mark.parametrize("settings,match", [
    ({"booster": "dart"}, "booster='dart' is not supported"),
    ({"booster": "gblinear"}, "booster='gblinear'"),
    ({"device": "cuda"}, "device='cuda' is not supported"),
    ({"sampling_method": "gradient_based"}, "sampling_method='gradient_based' is not "
     "supported: rows are sampled uniformly"),
    ({"num_parallel_tree": 0}, "num_parallel_tree=0 must be >= 1"),
    ({"multi_strategy": "multi_output_tree"}, "multi_strategy='multi_output_tree' is not "
     "supported"),
    ({"validate_parameters": "yes"}, "validate_parameters='yes' is not supported"),
    ({"verbosity": 4}, "verbosity=4 must be"),
    ({"verbosity": "info"}, "verbosity='info'"),
    ({"verbose": -1}, "verbose=-1 must be"),
])
def test_bad_settings_are_refused_before_any_work(xy, settings, match):
    X, y = xy
    with pytest.raises(ValueError, match=match):
        DaskBoostClassifier(**settings).fit(X, y)
    if "verbose" not in settings:  # (cv's params["verbose"] is its verbose_eval)
        with pytest.raises(ValueError, match=match):
            daskboost.cv({"objective": "binary:logistic", **settings}, X, y)


def test_fit_verbose_bad_value(xy):
    X, y = xy
    with pytest.raises(ValueError, match="verbose='all'"):
        DaskBoostClassifier(**PARAMS).fit(X, y, verbose="all")


def test_xgboosts_module_names_run_a_script_as_it_is(xy):
    # import daskboost as xgb: xgb.XGBClassifier, xgb.callback.EarlyStopping, ...
    X, y = xy
    from daskboost.callback import EarlyStopping, TrainingCallback
    assert daskboost.XGBClassifier is DaskBoostClassifier
    assert daskboost.XGBRegressor is DaskBoostRegressor
    assert TrainingCallback is daskboost.TrainingCallback
    model = daskboost.XGBClassifier(n_estimators=30, callbacks=[EarlyStopping(rounds=2)])
    model.fit(X[:300], y[:300], eval_set=[(X[300:], y[300:])])
    assert model.best_iteration is not None
    # what daskboost does not do says so, and hasattr stays False
    assert daskboost.XGBRanker is daskboost.DaskBoostRanker
    assert daskboost.XGBRFClassifier is daskboost.DaskBoostRFClassifier
    for name, words in (("collective", "dask's scheduler"),
                        ("spark", "no Spark")):
        with pytest.raises(AttributeError, match=f"{name}.*{words}"):
            getattr(daskboost, name)
        assert not hasattr(daskboost, name)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'$"):
        daskboost.nonsense
    with pytest.raises(TypeError, match="xgb_model=booster"):
        model.get_booster().update(None, 0)
