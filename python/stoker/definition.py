"""``pipeline_def``: a function that calls ``fn.*`` operators becomes a factory of Pipelines;
with ``enable_conditionals=True`` its ``if`` statements on pipeline values become per-sample
branches (stoker.conditionals)."""

import functools
import inspect

from stoker import _stoker, rewrite
from stoker.node import DataNode
from stoker.options import DALI_PIPELINE_ARGS
from stoker.pipeline import Pipeline
from stoker.rewrite import do_not_convert  # noqa: F401 (DALI's nvidia.dali.pipeline name)


def _returned(outputs, who):
    """What a pipeline function (or define_graph) returned, as a tuple of DataNodes."""
    if isinstance(outputs, DataNode):
        return (outputs,)
    if not isinstance(outputs, (tuple, list)):
        raise TypeError(f"{who} must return DataNodes (operator outputs), got "
                        f"{type(outputs).__name__}")
    return tuple(outputs)


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
        pipe_params = (set(inspect.signature(Pipeline.__init__).parameters) - {"self", "options"}
                       ) | set(_stoker.PipelineOptions.names()) | DALI_PIPELINE_ARGS | {"debug"}

        @functools.wraps(func)
        def factory(*args, **kwargs):
            own = {k: kwargs.pop(k) for k in list(kwargs) if k in pipe_params}
            options = {"enable_conditionals": enable_conditionals, **pipeline_kwargs, **own}
            if options.pop("debug", False):  # operators run as the function calls them
                from stoker.debug import DebugPipeline
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
