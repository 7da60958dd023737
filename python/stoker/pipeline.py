"""DALI's ``nvidia.dali.pipeline``: ``Pipeline`` and ``pipeline_def``.

A pipeline is defined by tracing: ``fn.*`` calls inside ``with pipe:`` (or a function decorated
with ``@pipeline_def``) record operator nodes (stoker.definition); ``build()`` hands the graph to
the native core and ``run()`` returns batches (stoker.runner); ``stats()`` holds what it
measures (stoker.stats). ``pipeline_def`` lives here, above all three and the debug mode it
switches to, so that none of them imports it back."""

import functools
import inspect
import sys
import types as _pytypes

from stoker import _stoker, rewrite
from stoker.debug import DebugPipeline
from stoker.definition import _returned, current_pipeline as _current_pipeline  # noqa: F401
from stoker.node import DataNode  # noqa: F401 (DALI's nvidia.dali.pipeline.DataNode)
from stoker.options import DALI_PIPELINE_ARGS
from stoker.output_descs import OperatorConcurrency, StreamPolicy  # noqa: F401 (DALI's names)
from stoker.rewrite import do_not_convert  # noqa: F401 (DALI's nvidia.dali.pipeline name)
from stoker.runner import Pipeline

# What a pipeline_def factory takes as the Pipeline's (the rest go to the function).
_PIPELINE_PARAMS = ((set(inspect.signature(Pipeline.__init__).parameters) - {"self", "options"})
                    | set(_stoker.PipelineOptions.names()) | DALI_PIPELINE_ARGS | {"debug"})


def pipeline_def(fn=None, *, enable_conditionals=False, **pipeline_kwargs):
    """Decorator: turns a function that calls ``fn.*`` operators and returns the pipeline's
    outputs into a factory of Pipelines. Pipeline arguments (batch_size, num_threads, seed,
    …) may be given to the decorator and overridden when calling the factory; other keyword
    arguments go to the function. debug=True: the function runs at every run(), its operators
    as it calls them, so values can be printed (stoker.debug). enable_conditionals=True (here
    or when calling the factory): ``if``/``else``, ``and``, ``or``, ``not`` on pipeline values
    run per sample (stoker.conditionals)."""

    def decorate(func):
        if getattr(func, "_stoker_do_not_convert", False):
            raise ValueError(f"{func.__name__}: a pipeline definition cannot be @do_not_convert")

        @functools.wraps(func)
        def factory(*args, **kwargs):
            own = {k: kwargs.pop(k) for k in list(kwargs) if k in _PIPELINE_PARAMS}
            options = {"enable_conditionals": enable_conditionals, **pipeline_kwargs, **own}
            if options.pop("debug", False):  # operators run as the function calls them
                return DebugPipeline(func, args, kwargs, **options)
            pipe = Pipeline(**options)
            body = func
            if pipe._conditions is not None:
                body = rewrite.convert(func, strict=True)
            with pipe:
                pipe.set_outputs(*_returned(body(*args, **kwargs), func.__name__))
            return pipe

        factory._stoker_pipeline_def = True
        return factory

    return decorate(fn) if fn is not None else decorate


def _pipeline_def_experimental(fn=None, *, enable_conditionals=False, **pipeline_kwargs):
    """DALI's ``nvidia.dali.pipeline.experimental.pipeline_def``: the variant of
    ``pipeline_def`` that takes ``debug=`` (the pipeline's function then runs at every run(),
    its operators as it calls them: stoker.debug). stoker's ``pipeline_def`` takes ``debug``
    itself, so both are the same decorator."""
    return pipeline_def(fn, enable_conditionals=enable_conditionals, **pipeline_kwargs)


def _experimental_module():
    """``stoker.pipeline.experimental``, importable as DALI's (which inserts it into
    sys.modules the same way: ``pipeline`` is a module, not a package)."""
    module = _pytypes.ModuleType(f"{__name__}.experimental",
                                 "DALI's nvidia.dali.pipeline.experimental: pipeline_def with "
                                 "debug= (stoker's pipeline_def takes it too).")
    _pipeline_def_experimental.__name__ = _pipeline_def_experimental.__qualname__ = "pipeline_def"
    _pipeline_def_experimental.__module__ = module.__name__
    module.pipeline_def = _pipeline_def_experimental
    sys.modules[module.__name__] = module
    return module


experimental = _experimental_module()
