"""scikit-learn's metadata routing (``set_fit_request`` and the others) for the estimators,
which do not inherit scikit-learn's ``BaseEstimator``.

With ``sklearn.set_config(enable_metadata_routing=True)``, a meta-estimator (a search, a
``Pipeline``, ``cross_validate``) passes metadata such as ``sample_weight`` to a step's
method only where the step has asked for it::

    DaskBoostClassifier().set_fit_request(sample_weight=True)

and reads what each step asks for from its ``get_metadata_routing()``.  A method's
requestable parameters are those of its signature other than X and y, as scikit-learn's
``BaseEstimator`` makes them (``fit``: ``sample_weight``, ``eval_set``, ``base_margin``,
...; ``score``: ``sample_weight``); each is unrequested, an error if a meta-estimator is
given it, until requested.  The requests live in ``_metadata_request`` (a
``MetadataRequest``), which ``sklearn.base.clone`` copies.  scikit-learn is imported only
when one of these methods is called.
"""

import inspect

# scikit-learn's methods that can request metadata (its ``SIMPLE_METHODS``: a
# ``MetadataRequest`` has one entry for each); the estimators define some of them
REQUESTING_METHODS = ("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba",
                      "decision_function", "score", "split", "transform", "inverse_transform")
_NOT_METADATA = ("self", "X", "y", "Y", "Xt", "yt")
UNCHANGED = "$UNCHANGED$"  # scikit-learn's marker: leave this parameter's request as it is


def requestable_params(cls, method):
    """The parameters of ``cls.method`` that metadata may be routed to (None: ``cls``
    has no such method)."""
    func = getattr(cls, method, None)
    if not callable(func):
        return None
    return tuple(name for name, p in inspect.signature(func).parameters.items()
                 if name not in _NOT_METADATA
                 and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))


class RoutingConsumer:
    """Mixin: ``get_metadata_routing()`` and a ``set_<method>_request(**requests)`` for
    each of the class's ``REQUESTING_METHODS`` that takes parameters besides X and y."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for method in REQUESTING_METHODS:
            params = requestable_params(cls, method)
            if params:
                setattr(cls, f"set_{method}_request", _RequestSetter(method, params))

    def get_metadata_routing(self):
        """The metadata each method requests: a scikit-learn ``MetadataRequest``."""
        from sklearn.utils.metadata_routing import MetadataRequest, get_routing_for_object
        if hasattr(self, "_metadata_request"):
            return get_routing_for_object(self._metadata_request)
        request = MetadataRequest(owner=self)
        for method in REQUESTING_METHODS:
            for name in requestable_params(type(self), method) or ():
                getattr(request, method).add_request(param=name, alias=None)
        return request


class _RequestSetter:
    """The descriptor behind ``set_<method>_request``: keyword-only arguments, one per
    requestable parameter, each True (requested), False (not), None (an error if
    given), a string (requested under that name) or ``UNCHANGED``; returns the
    estimator."""

    def __init__(self, method, params):
        self.method = method
        self.params = params

    def __get__(self, instance, owner):
        method, params = self.method, self.params

        def set_request(**requests):
            if instance is None:
                raise TypeError(f"set_{method}_request is called on an estimator, not on "
                                f"{owner.__name__} itself")
            import sklearn
            if not sklearn.get_config().get("enable_metadata_routing", False):
                raise RuntimeError(f"set_{method}_request is only available with metadata "
                                   "routing enabled: sklearn.set_config("
                                   "enable_metadata_routing=True)")
            unknown = sorted(set(requests) - set(params))
            if unknown:
                raise TypeError(f"set_{method}_request: unexpected arguments {unknown}; "
                                f"{owner.__name__}.{method} takes {list(params)}")
            routing = instance.get_metadata_routing()
            for name, alias in requests.items():
                if not (isinstance(alias, str) and alias == UNCHANGED):
                    getattr(routing, method).add_request(param=name, alias=alias)
            instance._metadata_request = routing
            return instance

        set_request.__name__ = f"set_{method}_request"
        set_request.__doc__ = (f"Request metadata for ``{method}`` (scikit-learn's metadata "
                               "routing; only with it enabled): for each parameter, True, "
                               "False, None, an alias or leave it unchanged.  Returns the "
                               "estimator.")
        set_request.__signature__ = inspect.Signature(
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=UNCHANGED)
             for name in params])
        return set_request
