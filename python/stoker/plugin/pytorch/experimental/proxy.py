"""DALI's ``nvidia.dali.plugin.pytorch.experimental.proxy``: one stoker pipeline, run in the main
process by the thread of a `DALIServer`, processes the samples that a torch Dataset's
``__getitem__`` hands to ``server.proxy`` in the DataLoader's worker processes.

The flow is DALI's. In a worker, ``server.proxy(x)`` records `x` as the next sample of the
worker's current batch and returns a `DALIOutputSampleRef` per pipeline output; torch's
``default_collate`` (the collate function registered below) turns a batch's refs into
`DALIOutputBatchRef`s and puts the batch's inputs on a multiprocessing queue. The server's
thread feeds each batch to the pipeline's external sources (up to ``prefetch_queue_depth``
batches ahead), runs it and queues the outputs as torch tensors (through DLPack, no copy);
``server.produce_data(obj)`` (which stoker's `DataLoader` calls on every batch) replaces the refs
anywhere in `obj` with those tensors. With ``deterministic=True`` a batch is queued for the
pipeline only when produce_data asks for it, so batches run in the DataLoader's order.

    @pipeline_def(batch_size=16, num_threads=4, device_id=None)
    def pipe():
        encoded = fn.external_source(name="images", no_copy=True)
        return fn.resize(fn.decoders.image(encoded), size=[224, 224])

    with DALIServer(pipe()) as server:
        dataset = MyDataset(transform=server.proxy)  # __getitem__: server.proxy(encoded), label
        for images, labels in DataLoader(server, dataset, batch_size=16, num_workers=4):
            ...

Differences from DALI (docs/dali_differences.md): DataLoader takes num_workers=0 (DALI's fails
its multiprocessing iterator's assertion); produce_data outside a running server raises
RuntimeError (DALI's waits forever); a batch smaller than the pipeline's batch_size (the
DataLoader's last without drop_last) runs padded with copies of its last sample, its outputs cut
back to its size (stoker's external sources take full batches only).
"""

__all__ = ["DALIServer", "DataLoader"]

import os
import queue
import threading
from collections import deque
from inspect import Parameter, Signature
from queue import Empty

import torch.multiprocessing as _mp
from torch.utils import data as _torchdata
from torch.utils.data._utils.collate import default_collate_fn_map as _default_collate_fn_map

from stoker.plugin.pytorch.torch_utils import to_torch_tensor
from stoker.runner import Pipeline as _Pipeline

# How often a thread blocked on a queue looks whether it should give up (the server stopping,
# its thread gone): short, so that stop_thread() returns at once (DALI's waits up to 5 s).
_POLL_S = 0.1


def _external_source_node_names(pipeline):
    """The names of the pipeline's external sources that its outputs depend on, in definition
    order (the proxy's parameters). Unused ones are left out, as DALI's graph leaves them."""
    pipeline._define()  # a subclass's define_graph runs here; pipeline_def's already ran
    nodes = pipeline._nodes
    used, stack = set(), [o._node for o in pipeline._outputs]
    while stack:
        n = stack.pop()
        if n not in used:
            used.add(n)
            stack.extend(i for i, _ in nodes[n]["inputs"])
            stack.extend(i for i, _ in nodes[n]["arg_inputs"].values())
    external = set(pipeline._external)
    return [nodes[n]["name"] for n in sorted(used) if nodes[n]["name"] in external]


class DALIOutputSampleRef:
    """Reference for a single sample output bound to a pipeline run."""

    def __init__(self, proxy, pipe_run_ref, output_idx, sample_idx):
        self.proxy = proxy
        self.pipe_run_ref = pipe_run_ref
        self.output_idx = output_idx
        self.sample_idx = sample_idx

    def __repr__(self):
        return (f"DALIOutputSampleRef({self.pipe_run_ref}, output_idx={self.output_idx}, "
                f"sample_idx={self.sample_idx})")


class DALIPipelineRunRef:
    """Reference for a pipeline run: batch_id is (worker id, the worker's batch index)."""

    def __init__(self, batch_id):
        self.batch_id = batch_id
        self.call_args = {}
        self.is_scheduled = False
        self.is_complete = False

    def __repr__(self):
        return (f"DALIPipelineRunRef(batch_id={self.batch_id}, call_args={self.call_args} "
                f"is_scheduled={self.is_scheduled}, is_complete={self.is_complete})")


class DALIOutputBatchRef:
    """Reference for a batched output bound to a pipeline run."""

    def __init__(self, pipe_run_ref, output_idx):
        self.pipe_run_ref = pipe_run_ref
        self.output_idx = output_idx

    def __repr__(self):
        return f"DALIOutputBatchRef(pipe_run_ref={self.pipe_run_ref}, output_idx={self.output_idx})"


def _collate_dali_output_sample_ref_fn(samples, *, collate_fn_map=None):
    """torch's default_collate of a batch of sample refs: the batch is complete, and (unless
    the server is deterministic) it is queued for the pipeline now, from the worker."""
    assert len(samples) > 0
    pipe_run_ref = samples[0].pipe_run_ref
    output_idx = samples[0].output_idx
    proxy = samples[0].proxy
    for i, sample in enumerate(samples):
        if (sample.proxy is not proxy or sample.pipe_run_ref is not pipe_run_ref
                or sample.output_idx != output_idx):
            raise RuntimeError("All samples should belong to the same batch")
        if sample.sample_idx != i:
            raise RuntimeError("Unexpected sample order")
    pipe_run_ref.is_complete = True
    if not proxy._deterministic and not pipe_run_ref.is_scheduled:
        pipe_run_ref = proxy._schedule_batch(pipe_run_ref)
    return DALIOutputBatchRef(pipe_run_ref, output_idx)


# As DALI: importing the module teaches torch's default_collate (and so every DataLoader that
# uses it) to collate sample refs.
_default_collate_fn_map.update({DALIOutputSampleRef: _collate_dali_output_sample_ref_fn})


class _DALIProxy:
    """The per-process half of the proxy: gathers a worker's samples into batches."""

    class _WorkerData:
        def __init__(self, worker_id):
            self.worker_id = worker_id
            self.pid = os.getpid()
            self.pipe_run_ref = None
            self.next_worker_batch_idx = 0
            self.batch_sample_idx = 0

    def __init__(self, signature, dali_input_q, deterministic):
        self._deterministic = deterministic
        self._dali_input_q = dali_input_q  # shared with the server (a multiprocessing queue)
        self._worker_data = None
        self._signature = signature
        self._num_outputs = len(signature.return_annotation)

    def _get_worker_id(self):
        """The DataLoader worker's id, or the thread's in a process without workers."""
        worker_info = _torchdata.get_worker_info()
        return worker_info.id if worker_info else threading.get_ident()

    def _get_worker_data(self):
        # Made again in a process forked after the main process used the proxy (DALI keeps the
        # copy, and its batch ids, the main thread's, would then be the same in every worker).
        if self._worker_data is None or self._worker_data.pid != os.getpid():
            self._worker_data = _DALIProxy._WorkerData(self._get_worker_id())
        return self._worker_data

    def _add_sample(self, inputs):
        """Adds a sample to the worker's current batch; after collate completed that batch, a
        new one starts."""
        worker_data = self._get_worker_data()
        if worker_data.pipe_run_ref is None or worker_data.pipe_run_ref.is_complete:
            worker_data.pipe_run_ref = DALIPipelineRunRef(
                batch_id=(worker_data.worker_id, worker_data.next_worker_batch_idx))
            worker_data.next_worker_batch_idx += 1
            worker_data.batch_sample_idx = 0
        for name, value in inputs.items():
            worker_data.pipe_run_ref.call_args.setdefault(name, []).append(value)
        ret = tuple(DALIOutputSampleRef(self, pipe_run_ref=worker_data.pipe_run_ref,
                                        output_idx=i, sample_idx=worker_data.batch_sample_idx)
                    for i in range(self._num_outputs))
        worker_data.batch_sample_idx += 1
        return ret[0] if len(ret) == 1 else ret

    def _schedule_batch(self, pipe_run_ref):
        """Queues a complete batch for the server; the ref keeps its id, not its inputs."""
        if not pipe_run_ref.call_args:
            raise RuntimeError("No inputs for the pipeline to run (was it already scheduled?)")
        if not pipe_run_ref.is_complete:
            raise RuntimeError("Batch is not marked as complete")
        item = DALIPipelineRunRef(pipe_run_ref.batch_id)
        item.call_args = pipe_run_ref.call_args
        item.is_complete = item.is_scheduled = True
        self._dali_input_q.put(item)
        pipe_run_ref.call_args = {}
        pipe_run_ref.is_scheduled = True
        return pipe_run_ref


class _DALIProxyCallable(_DALIProxy):
    """`DALIServer.proxy`: called with one sample of each pipeline input (by name; positional
    too when there is one input). A class of the module (DALI's is local to a method), so that
    a Dataset holding it can be pickled for spawned workers."""

    def __init__(self, signature, dali_input_q, deterministic):
        super().__init__(signature, dali_input_q, deterministic)
        # inspect.signature(proxy) shows the inputs (DALI's is the method's, with self)
        self.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])

    def __call__(self, *args, **kwargs):
        try:
            bound = self._signature.bind(self, *args, **kwargs)
        except TypeError as err:  # DALI's message and type
            args_str = ", ".join(f"{type(a)}" for a in (self,) + args)
            kwargs_str = ", ".join(f"{k}={type(v)}" for k, v in kwargs.items())
            raise ValueError(f"Expected signature is: {self._signature}. Got: args=({args_str}), "
                             f"kwargs={kwargs_str}, error: {err}") from None
        return self._add_sample({k: v for k, v in bound.arguments.items() if k != "self"})

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_worker_data"] = None  # a spawned worker starts its own batches
        return state


class DALIServer:
    """Runs `pipeline` (a stoker Pipeline whose inputs are external sources without a
    `source`) on the batches that `proxy` gathers, in a thread of this process (started and
    stopped by `with DALIServer(pipe) as server:`, or start_thread()/stop_thread()).

    `deterministic`: if True, batches run in the order produce_data asks for them (the
    DataLoader's), which a pipeline with state (random operators) needs for reproducible
    results; slower, since a batch starts only once the DataLoader returned it, not as soon as
    a worker collated it.

    `proxy` is the callable the Dataset calls (its transform); `produce_data(obj)` replaces the
    output refs in `obj` (any nesting of lists, tuples, dicts and objects) with torch tensors
    (one per pipeline output, the batch as one tensor: outputs must have uniform shapes).
    Use stoker's `DataLoader` (which calls produce_data) or torch's with produce_data on each
    batch."""

    def __init__(self, pipeline, deterministic=False):
        self._thread = None
        self._thread_stop_event = None
        if not isinstance(pipeline, _Pipeline):
            raise TypeError(f"Expected an NVIDIA DALI pipeline, got: {pipeline}")
        self._pipe = pipeline
        self._dali_input_names = _external_source_node_names(self._pipe)
        num_inputs = len(self._dali_input_names)
        if num_inputs == 0:
            raise RuntimeError("The provided pipeline doesn't have any inputs")
        kind = Parameter.POSITIONAL_OR_KEYWORD if num_inputs == 1 else Parameter.KEYWORD_ONLY
        parameters = [Parameter("self", Parameter.POSITIONAL_OR_KEYWORD)]
        parameters += [Parameter(name, kind) for name in self._dali_input_names]
        pipe_outputs = len(self._pipe._outputs)
        self._signature = Signature(parameters, return_annotation=tuple(
            DALIOutputSampleRef for _ in range(pipe_outputs)))
        self._dali_input_q = _mp.Queue()  # batches from the workers (and produce_data)
        self._dali_output_q = queue.Queue()  # (batch_id, outputs, error) from the thread
        self._cache_outputs = {}  # outputs that came before the batch produce_data waited on
        self._deterministic = deterministic
        self._proxy = None

    def __del__(self):
        self.stop_thread()

    @property
    def proxy(self):
        if self._proxy is None:
            self._proxy = _DALIProxyCallable(self._signature, self._dali_input_q,
                                             self._deterministic)
        return self._proxy

    def _get_outputs(self, pipe_run_ref):
        """The outputs of one batch: read from the thread until they come, keeping the ones of
        other batches for later calls."""
        req_batch_id = pipe_run_ref.batch_id
        if req_batch_id in self._cache_outputs:
            return self._cache_outputs.pop(req_batch_id)
        thread = self._thread
        if thread is None:
            raise RuntimeError(
                "the DALIServer is not running, so no pipeline produces the proxy's batches: "
                "use it as `with DALIServer(pipe) as server:` (or call server.start_thread()); "
                "stoker's proxy.DataLoader starts it itself")
        if not pipe_run_ref.is_scheduled:  # deterministic: the batch is queued now
            self._dali_input_q.put(pipe_run_ref)
            pipe_run_ref.is_scheduled = True
        while True:
            try:
                batch_id, outputs, err = self._dali_output_q.get(timeout=_POLL_S)
            except Empty:
                if not thread.is_alive():
                    raise RuntimeError(f"the DALIServer stopped before the batch "
                                       f"{req_batch_id} was produced") from None
                continue
            if err is not None:
                raise err
            if batch_id == req_batch_id:
                return outputs
            self._cache_outputs[batch_id] = outputs

    @staticmethod
    def _need_conversion(obj, need_conversion_cache):
        """True if `obj` or anything in it is a DALIOutputBatchRef."""
        obj_id = id(obj)
        if obj_id in need_conversion_cache:
            return need_conversion_cache[obj_id]
        if isinstance(obj, DALIOutputBatchRef):
            need_conversion_cache[obj_id] = True
            return True
        need_conversion_cache[obj_id] = False  # a cycle leads back here: no recursion
        items = (obj if isinstance(obj, (list, tuple)) else obj.values()
                 if isinstance(obj, dict) else getattr(obj, "__dict__", {}).values())
        for item in items:
            if DALIServer._need_conversion(item, need_conversion_cache):
                need_conversion_cache[obj_id] = True
                return True
        return False

    def _produce_data_impl(self, obj, cache, need_conversion_cache):
        """One pass over `obj`: lists, dicts and objects are changed in place, tuples (named
        ones too) made anew; `cache` (by id) ends cycles and shares results."""
        obj_id = id(obj)
        if obj_id in cache:
            return cache[obj_id]
        if not DALIServer._need_conversion(obj, need_conversion_cache):
            cache[obj_id] = obj
            return obj
        convert = lambda x: self._produce_data_impl(x, cache, need_conversion_cache)  # noqa
        if isinstance(obj, DALIOutputBatchRef):
            run_id = id(obj.pipe_run_ref)
            if run_id not in cache:
                cache[run_id] = self._get_outputs(obj.pipe_run_ref)
            result = cache[obj_id] = cache[run_id][obj.output_idx]
            return result
        if isinstance(obj, list):
            cache[obj_id] = obj
            for i in range(len(obj)):
                obj[i] = convert(obj[i])
            return obj
        if isinstance(obj, tuple):
            if hasattr(obj, "_replace") and hasattr(obj, "_fields"):
                result = obj._replace(**{f: convert(getattr(obj, f)) for f in obj._fields})
            else:
                result = type(obj)(convert(item) for item in obj)
            cache[obj_id] = result
            return result
        if isinstance(obj, dict):
            cache[obj_id] = obj
            for key in list(obj.keys()):
                obj[key] = convert(obj[key])
            return obj
        if hasattr(obj, "__dict__"):
            cache[obj_id] = obj
            for name, value in list(obj.__dict__.items()):
                setattr(obj, name, convert(value))
            return obj
        cache[obj_id] = obj
        return obj

    def produce_data(self, obj):
        """`obj` with every DALIOutputBatchRef in it (at any depth) replaced by the pipeline
        output it refers to, a torch tensor; waits for the batches to be processed. Raises
        RuntimeError when the server is not running, and a batch's pipeline error."""
        return self._produce_data_impl(obj, {}, {})

    def _get_input_batches(self, max_num_batches, timeout):
        """Up to max_num_batches queued batches: waiting up to `timeout` for the first (None:
        not waiting), then those already there."""
        batches = []
        if timeout is not None and max_num_batches > 0:
            try:
                batches.append(self._dali_input_q.get(timeout=timeout))
            except Empty:
                return batches
        while len(batches) < max_num_batches:
            try:
                batches.append(self._dali_input_q.get_nowait())
            except Empty:
                break
        return batches

    def _feed(self, call_args):
        """Feeds one batch to the pipeline's external sources; returns its sample count."""
        batch_size = self._pipe.batch_size
        count = None
        for name in self._dali_input_names:
            if name not in call_args:
                raise ValueError(f"the batch has no samples for the pipeline input '{name}'")
            samples = list(call_args[name])
            count = len(samples)
            if count < batch_size:  # stoker's external sources take full batches: pad
                samples += [samples[-1]] * (batch_size - count)
            self._pipe.feed_input(name, samples)
        return count

    def _thread_fn(self, stop):
        """The server: feeds up to prefetch_queue_depth batches ahead, runs the oldest and
        queues its outputs (or its error), until `stop` is set."""
        depth = self._pipe._options.prefetch_queue_depth
        fed = deque()  # (batch_id, sample count) of the batches fed and not yet run
        try:
            while not stop.is_set():
                batches = self._get_input_batches(max(1, depth) - len(fed),
                                                  timeout=None if fed else _POLL_S)
                for ref in batches:
                    try:
                        count = self._feed(ref.call_args)
                    except Exception as err:  # noqa: BLE001 - the consumer gets it
                        self._dali_output_q.put((ref.batch_id, None, err))
                        continue
                    fed.append((ref.batch_id, count))
                if not fed:
                    continue
                batch_id, count = fed.popleft()
                outputs, err = None, None
                try:
                    outputs = tuple(self._to_torch(b, count) for b in self._pipe.run())
                except Exception as exception:  # noqa: BLE001 - the consumer gets it
                    err = exception
                self._dali_output_q.put((batch_id, outputs, err))
        finally:
            # Batches fed but not run are run and dropped, so that after a restart the
            # pipeline's next batch is the next one fed.
            for _ in fed:
                try:
                    self._pipe.run()
                except Exception:  # noqa: BLE001 - the pipeline failed; nothing to keep
                    break

    @staticmethod
    def _to_torch(batch, count):
        """One output as a torch tensor (a DLPack view: stoker's memory lives while it does),
        cut to the batch's samples when it was padded."""
        try:
            dense = batch.as_tensor()
        except ValueError as err:  # DALI's proxy raises RuntimeError here (its as_tensor's)
            raise RuntimeError(f"The batch must be representable as a tensor - it must have "
                               f"uniform shape: {err}") from err
        tensor = to_torch_tensor(dense, False)
        return tensor[:count] if count < tensor.shape[0] else tensor

    def start_thread(self):
        """Starts the server's thread (`with DALIServer(...)` is the preferred form)."""
        if self._thread is not None:
            return
        self._thread_stop_event = threading.Event()
        self._thread = threading.Thread(target=self._thread_fn, args=(self._thread_stop_event,),
                                        name="stoker-dali-proxy-server", daemon=True)
        self._thread.start()

    def stop_thread(self):
        """Stops the server's thread (`with DALIServer(...)` is the preferred form)."""
        if getattr(self, "_thread_stop_event", None) is None:  # (__del__ of a failed __init__)
            return
        self._thread_stop_event.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        self._thread = None
        self._thread_stop_event = None

    def _is_thread_running(self):
        return self._thread is not None

    def __enter__(self):
        self.start_thread()
        return self

    def __exit__(self, exc_type, exc_value, tb):
        self.stop_thread()
        return False


class DataLoader(_torchdata.dataloader.DataLoader):
    """torch's DataLoader with a DALIServer as first argument: it starts the server if it is
    not running and yields the batches with the proxy's refs replaced by the pipeline's
    outputs (`server.produce_data`). See DALIServer."""

    class _Iter(_torchdata.dataloader._MultiProcessingDataLoaderIter):
        """The iterator with worker processes."""

        def __init__(self, loader):
            super().__init__(loader)
            self.loader = loader

        def _next_data(self):
            self.loader.ensure_server_listening()
            return self.loader.dali_server.produce_data(super()._next_data())

    class _SingleIter(_torchdata.dataloader._SingleProcessDataLoaderIter):
        """num_workers=0: the Dataset and the proxy run in this process (DALI's loader has
        only the multiprocessing iterator, which refuses 0 workers)."""

        def __init__(self, loader):
            super().__init__(loader)
            self.loader = loader

        def _next_data(self):
            self.loader.ensure_server_listening()
            return self.loader.dali_server.produce_data(super()._next_data())

    def __init__(self, dali_server, *args, **kwargs):
        """Same interface as PyTorch's DataLoader except for the extra DALIServer argument."""
        super().__init__(*args, **kwargs)
        self.dali_server = dali_server
        self.server_started_by_loader = False

    def __del__(self):
        server = getattr(self, "dali_server", None)
        if getattr(self, "server_started_by_loader", False) and server._is_thread_running():
            server.stop_thread()

    def ensure_server_listening(self):
        if not self.dali_server._is_thread_running():
            self.dali_server.start_thread()
            self.server_started_by_loader = True

    def _get_iterator(self):
        if self.num_workers == 0:
            return DataLoader._SingleIter(self)
        return DataLoader._Iter(self)
