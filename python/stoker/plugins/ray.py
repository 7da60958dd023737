"""stoker pipelines as Ray Data stages (`pip install stoker[ray]`).

from_pipeline(factory, num_shards, output_names): a ray.data.Dataset whose rows are the output
samples of `num_shards` pipelines, `factory(shard_id, num_shards)` each, one per Ray actor (placed
by Ray: CPU nodes of the cluster). Each iteration of the dataset is one epoch of the pipelines'
reader: every sample once across the shards, the pipelines going on from epoch to epoch as on one
host (the reader's shuffling and shard rotation, its seed), so epoch e of the dataset holds what
epoch e of the same pipelines on one host holds.

map_batches(ds, factory, output_names): a stoker pipeline as the map stage of an existing dataset:
its external sources, named after the dataset's columns, are fed each batch of those columns
(`fn.external_source(name="bytes")` gets the column `bytes` of ray.data.read_binary_files).

Rows hold numpy arrays: samples of different shapes become Ray's variable-shaped tensor columns.
GPU outputs are copied to the host (the CPU cluster's side; a training node finishes on its GPU).
"""

import os
import time

import numpy as np

from . import _ray_position as _position
from ._ray_position import POSITION, Position

__all__ = ["from_pipeline", "map_batches", "release", "Position", "POSITION"]


def _ray():
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError as e:  # pragma: no cover - stoker[ray] brings it
        raise ImportError("stoker.plugins.ray needs Ray Data: pip install 'stoker[ray]'") from e
    return ray


def _samples(batch):
    """A pipeline output (CPU or GPU) as a list of numpy arrays, one per sample."""
    if hasattr(batch, "as_cpu") and getattr(batch, "device", "cpu") == "gpu":
        batch = batch.as_cpu()
    return [np.array(batch.at(i)) for i in range(len(batch))]


def _block(rows, names):
    from ray.data.block import BlockAccessor
    return BlockAccessor.batch_to_block({n: [r[k] for r in rows] for k, n in enumerate(names)})


def _shard_sizes(total, shards):
    """Samples of shards 0..shards-1 (DALI's contiguous split, as the readers cut it)."""
    k = np.arange(shards, dtype=np.int64)
    return (k + 1) * total // shards - k * total // shards


class _Shard:
    """One shard's pipeline in a Ray actor. It runs on from epoch to epoch; samples of a batch
    that straddles two epochs wait for the next one, and a padded reader's padding is dropped,
    so every epoch gives exactly its shard's samples. At each epoch's start its state (the
    pipeline's checkpoint and the samples waiting) is kept outside the actor (_Boundaries), so
    that a read retried by Ray, or an actor restarted on another node, gives the epoch again
    from its start: the same samples, which Ray does not deliver twice."""

    def __init__(self, factory, shard_id, num_shards, output_names, reader_name, key=None):
        self._factory, self._reader = factory, reader_name
        self._key = key      # a resumable dataset's: rows carry (key, shard, epoch, index)
        self._shard, self._shards = shard_id, num_shards
        self._names = list(output_names)
        self._pipe = self._build()
        meta = self._pipe.reader_meta(reader_name)
        if not isinstance(meta, dict) or "epoch_size" not in meta:
            raise ValueError("from_pipeline: the pipeline has several readers; give reader_name")
        if meta["number_of_shards"] != num_shards or meta["shard_id"] != shard_id:
            raise ValueError(f"from_pipeline: factory({shard_id}, {num_shards}) built a reader "
                             f"for shard {meta['shard_id']} of {meta['number_of_shards']}: pass "
                             f"shard_id and num_shards to the reader")
        self._sizes = _shard_sizes(meta["epoch_size"], num_shards)
        # A padded reader gives every shard the same whole batches (shard_size) per epoch.
        self._padded = meta["shard_size"] if meta["pad_last_batch"] else 0
        self._stick = bool(meta["stick_to_shard"])
        self._epoch = 0      # the next epoch to start
        self._rows = []      # samples run but not yet given (the next epoch's)
        self._left = 0       # samples of the current epoch not yet given
        self._skip = 0       # padding still to drop after them
        self._index = 0      # the epoch's next sample (from its start: a row's place)
        self._consumed = frozenset()  # samples of the epoch a checkpoint says were consumed
        self._carried = False  # the epoch began with a straddling batch's samples
        self._started = False

    def _build(self, checkpoint=None):
        pipe = self._factory(self._shard, self._shards)
        if checkpoint is not None:
            pipe._restart_from(checkpoint)
        pipe.build()
        return pipe

    def batch_size(self):
        return self._pipe.batch_size

    def shard_size(self, epoch):
        shard = self._shard if self._stick else (self._shard + epoch) % self._shards
        return int(self._sizes[shard])

    def boundary(self, last=None):
        """Ends the current epoch (the rest of one read only in part, e.g. by Dataset.take, is
        run and dropped) and returns the state at the next one's start. `last`: the state of
        the latest epoch started; an actor behind it (restarted on another node) first runs
        that epoch from it."""
        if last is not None and self._epoch <= last["epoch"]:
            self.start(last)
        while self._started and self.next_block(self._pipe.batch_size) is not None:
            pass
        return {"epoch": self._epoch, "checkpoint": self._pipe.checkpoint(),
                "rows": list(self._rows)}

    def start(self, state):
        """Starts the epoch whose start `state` is, restoring it unless the actor stands there
        (a retried read, or a new actor); returns the epoch's number of samples. A state
        resumed from a training checkpoint (_ray_position.py) starts inside the epoch, at its sample
        `index`, and leaves out the samples `consumed` before it was taken."""
        index = state.get("index", 0)
        if self._started or self._epoch != state["epoch"] or index:
            self._pipe.close()
            self._pipe = self._build(state["checkpoint"])
            self._rows = list(state["rows"])
            self._epoch = state["epoch"]
        size = self.shard_size(self._epoch)
        self._left = size - index
        self._skip = self._padded - size if self._padded else 0
        self._index = index
        self._consumed = frozenset(state.get("consumed", ()))
        self._carried = bool(self._rows)
        self._epoch += 1
        self._started = True
        return self._left

    def skip(self, blocks, max_rows):
        """Runs past the epoch's first `blocks` blocks (a read resumed after a failure)."""
        while blocks:
            out = self.next_block(max_rows)
            if out is None:
                return
            blocks -= out[0] is not None

    def next_block(self, max_rows):
        """(block, mark): up to max_rows of this epoch's samples as a block (None where a
        resumed epoch's samples were all consumed already) and, for a resumable dataset, the
        place after it where a resumed shard may start (_ray_position.py); None at the epoch's end."""
        out = self._next_rows(max_rows)
        if out is None:
            return None
        first, rows = out
        if self._key is None:
            return _block(rows, self._names), None
        mark = None
        if not self._rows and self._left:  # no sample waits: a checkpoint restores this place
            mark = (self._epoch - 1, self._index, self._pipe.checkpoint())
        keep = [i for i in range(len(rows)) if first + i not in self._consumed]
        if not keep:
            return None, mark
        rows = [rows[i] + (np.array([self._key, self._shard, self._epoch - 1, first + i],
                                    np.int64),) for i in keep]
        return _block(rows, self._names + [POSITION]), mark

    def _next_rows(self, max_rows):
        """The epoch's next samples (up to max_rows) and the place of the first; None at the
        epoch's end."""
        if self._carried:  # a straddling batch's samples alone: later blocks end with batches
            self._carried = False
            return self._take(max_rows)
        while self._left and len(self._rows) < min(self._left, max_rows):
            outputs = self._pipe.run()
            if len(outputs) != len(self._names):
                raise ValueError(f"from_pipeline: output_names names {len(self._names)} "
                                 f"outputs, the pipeline has {len(outputs)}")
            self._rows.extend(zip(*[_samples(b) for b in outputs]))
        if not self._left:
            drop = min(self._skip, len(self._rows))
            self._rows, self._skip = self._rows[drop:], self._skip - drop
            while self._skip:  # padding of batches not run yet
                n = len(_samples(self._pipe.run()[0]))
                if n > self._skip:
                    raise RuntimeError("from_pipeline: the reader's padding ended inside a batch")
                self._skip -= n
            self._started = False
            return None
        return self._take(max_rows)

    def _take(self, max_rows):
        """Up to max_rows of the waiting samples, and the place of the first."""
        take = min(self._left, max_rows, len(self._rows))
        rows, self._rows = self._rows[:take], self._rows[take:]
        self._left -= take
        self._index += take
        return self._index - take, rows


class _Boundaries:
    """The epoch-start states of the shards: by the read that started each epoch (a retried
    read keeps its task id) and the latest per shard. Kept on the driver's node, away from the
    shards' actors. For a resumable dataset also the marks (_ray_position.py): per shard, the places
    of its current and previous epochs a checkpoint can restore, and what a resumed dataset
    starts from."""

    def __init__(self, name=None, resume=None, before=None):
        self._by_task, self._latest = {}, {}
        self._name = name
        self._marks = {}  # shard -> {epoch: {index: checkpoint}}
        self._resume = dict(resume or {})  # shard -> its first read's state
        self._before = dict(before or {})  # shard -> (epoch, consumed) by the run resumed from
        for shard, state in self._resume.items():  # (a later checkpoint may need them again)
            self.mark(shard, state["epoch"], state["index"], state["checkpoint"])

    def get(self, shard, task):
        return self._by_task.get((shard, task))

    def latest(self, shard):
        return self._latest.get(shard)

    def resume(self, shard):
        """A resumed dataset's state for the shard's first read (until that read has put the
        state it starts from: a retry of it finds the state again)."""
        return self._resume.get(shard)

    def put(self, shard, task, state):
        self._resume.pop(shard, None)
        # The last few per shard suffice: a retry follows its failed attempt.
        mine = [k for k in self._by_task if k[0] == shard]
        for k in mine[:-3]:
            del self._by_task[k]
        self._by_task[(shard, task)] = state
        self._latest[shard] = state
        if self._name is not None and not state["rows"]:  # (a start inside a batch: no mark)
            self.mark(shard, state["epoch"], state.get("index", 0), state["checkpoint"])

    def mark(self, shard, epoch, index, checkpoint):
        epochs = self._marks.setdefault(shard, {})
        epochs.setdefault(epoch, {})[index] = checkpoint
        # The current and previous epochs' marks, and the last of the newest epoch before them
        # (a shard smaller than a batch may have epochs without marks: a resume rolls from it).
        older = sorted(e for e in epochs if e < epoch - 1)
        for old in older[:-1]:
            del epochs[old]
        if older:
            last = max(epochs[older[-1]])
            epochs[older[-1]] = {last: epochs[older[-1]][last]}

    def position(self):
        """What Position.save writes for this dataset besides the samples consumed."""
        return {"name": self._name, "marks": self._marks, "before": self._before}


def from_pipeline(factory, num_shards=1, output_names=("data",), reader_name=None,
                  block_rows=None, max_restarts=3, restart_timeout=300, resumable=False,
                  resume_from=None, name="dataset", **ray_remote_args):
    """A ray.data.Dataset of the output samples of `num_shards` stoker pipelines.

    factory(shard_id, num_shards) builds shard shard_id's pipeline (its reader takes shard_id and
    num_shards; its seed makes it deterministic); it runs in a Ray actor created with
    `ray_remote_args` (num_cpus=... for the pipeline's threads, resources=... to place it), which
    Ray restarts up to max_restarts times when its node fails (a read waits up to
    restart_timeout seconds for it, then goes on from where it stood). output_names: one column per
    pipeline output. reader_name: the reader whose epoch the dataset iterates (needed when the
    pipeline has several). block_rows: samples per block (default: the pipeline's batch size).
    Each iteration of the dataset is the next epoch; columns hold numpy arrays per row.

    resumable=True: rows also carry their place (a column POSITION, which Position.track
    records and removes), so that a training checkpoint can hold what was consumed
    (Position.save); resume_from (a ray.train.Checkpoint or its directory) makes the dataset
    start where that checkpoint's training stood: the rest of its epoch, or the next epoch if
    every worker had finished it. name: the dataset's in a checkpoint holding several."""
    ray = _ray()
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    names = tuple(output_names)
    if not names or len(set(names)) != len(names):
        raise ValueError(f"output_names must name each output once, got {names}")
    options = {"num_cpus": 1, "max_restarts": max_restarts, "max_task_retries": 0,
               **ray_remote_args}
    resume, before = None, None
    if resume_from is not None:
        resume, before = _position.resume_states(resume_from, name, num_shards)
        resumable = True
    key = int.from_bytes(os.urandom(7), "little") if resumable else None
    shards = [ray.remote(_Shard).options(**options).remote(factory, k, num_shards, names,
                                                           reader_name, key)
              for k in range(num_shards)]
    # Construction errors now, not at the first read.
    rows = block_rows or ray.get(shards[0].batch_size.remote())
    here = ray.get_runtime_context().get_node_id()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    named = {"name": _position.actor_name(key)} if resumable else {}
    boundaries = ray.remote(_Boundaries).options(
        num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
        **named).remote(name if resumable else None, resume, before)

    def call(method, *args):
        """An actor call that waits out the actor's restart (its node failed) for up to
        restart_timeout seconds."""
        deadline = time.monotonic() + restart_timeout
        while True:
            try:
                return ray.get(method.remote(*args))
            except ray.exceptions.RayActorError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def read(k):
        shard = shards[k]
        task = ray.get_runtime_context().get_task_id()
        state = ray.get(boundaries.get.remote(k, task))
        if state is None:  # this read's epoch: the one after the latest started
            resume = ray.get(boundaries.resume.remote(k))  # a resumed dataset's first
            if resume is None:
                state = call(shard.boundary, ray.get(boundaries.latest.remote(k)))
            elif "roll" in resume:  # run on from the mark to the epoch's start
                state = resume
                for _ in range(resume["roll"]):
                    state = call(shard.boundary, state)
                state["consumed"] = resume["next_consumed"]
            else:
                state = resume
            ray.get(boundaries.put.remote(k, task, state))
        given = 0  # blocks this read has given: after a failure it resumes past them
        while True:
            try:
                ray.get(shard.start.remote(state))
                ray.get(shard.skip.remote(given, rows))
                while True:
                    out = ray.get(shard.next_block.remote(rows))
                    if out is None:
                        return
                    block, mark = out
                    if mark is not None:
                        boundaries.mark.remote(k, *mark)
                    if block is not None:
                        given += 1
                        yield block
            except ray.exceptions.RayActorError:
                call(shard.batch_size)  # until the actor is back

    class _Source(Datasource):
        def estimate_inmemory_data_size(self):
            return None

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            meta = BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None)
            return [ReadTask(lambda k=k: read(k), meta) for k in range(num_shards)]

    # A read relays blocks (no CPU of its own); it outlives its actor's restarts itself, and
    # Ray retries it when its own node fails.
    ds = ray.data.read_datasource(_Source(), override_num_blocks=num_shards, num_cpus=0,
                                  max_retries=3)
    ds._stoker_actors = (shards, boundaries)  # they live as long as the dataset
    return ds


def release(ds):
    """Ends the actors of a from_pipeline dataset now, freeing their CPUs and resources for
    another dataset (otherwise they end when the dataset is garbage-collected, which a
    reference cycle can put off: a second dataset asking for the same resources would wait)."""
    ray = _ray()
    shards, boundaries = getattr(ds, "_stoker_actors", (None, None))
    if shards is None:
        raise ValueError("release: not a dataset made by stoker.plugins.ray.from_pipeline")
    for actor in [*shards, *([boundaries] if boundaries is not None else [])]:
        ray.kill(actor, no_restart=True)
    ds._stoker_actors = ([], None)


class _Mapper:
    """A pipeline fed from a dataset's batches (Ray Data's map stage, in an actor)."""

    def __init__(self, factory, output_names, columns):
        self._pipe = factory()
        self._pipe.build()
        self._names = list(output_names)
        self._columns = columns

    def __call__(self, batch):
        n = len(next(iter(batch.values())))
        if n > self._pipe.batch_size:
            raise ValueError(f"map_batches: a batch of {n} rows, the pipeline's batch_size is "
                             f"{self._pipe.batch_size}: give map_batches batch_size <= it")
        # A short batch (the dataset's last) is filled up with its last row, cut off after.
        fill = self._pipe.batch_size - n
        for column in self._columns:
            values = [_as_array(v) for v in batch[column]]
            self._pipe.feed_input(column, values + values[-1:] * fill)
        outputs = self._pipe.run()
        if len(outputs) != len(self._names):
            raise ValueError(f"map_batches: output_names names {len(self._names)} outputs, the "
                             f"pipeline has {len(outputs)}")
        out = {}
        for name, b in zip(self._names, outputs):
            samples = _samples(b)[:n]
            shapes = {s.shape for s in samples}
            out[name] = np.stack(samples) if len(shapes) == 1 and samples else samples
        return out


def _as_array(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return np.frombuffer(value, dtype=np.uint8)
    if isinstance(value, str):
        return np.frombuffer(value.encode(), dtype=np.uint8)
    return np.asarray(value)


def map_batches(ds, factory, output_names=("data",), columns=None, batch_size=None,
                concurrency=1, **ray_remote_args):
    """`ds` mapped by a stoker pipeline: factory() builds it (in each of `concurrency` Ray
    actors); its external sources named after columns of `ds` (`columns`: all that it names)
    are fed each batch of those columns (bytes and strings as uint8 arrays), and the batch's
    rows become its outputs, one column per name in output_names. batch_size defaults to the
    pipeline's (a dataset batch may not be larger)."""
    _ray()
    names = tuple(output_names)
    probe = factory()
    probe.build()
    wanted = [c for c in ds.columns() if c in set(probe._native.external_source_names())] \
        if columns is None else list(columns)
    if not wanted:
        raise ValueError(f"map_batches: the pipeline has no external source named after a "
                         f"column of the dataset ({ds.columns()})")
    size = batch_size or probe.batch_size
    if size > probe.batch_size:
        raise ValueError(f"map_batches: batch_size {size} exceeds the pipeline's batch_size "
                         f"{probe.batch_size}")
    del probe
    return ds.map_batches(_Mapper, fn_constructor_args=(factory, names, wanted),
                          batch_size=size, batch_format="numpy", concurrency=concurrency,
                          **({"num_cpus": 1} | ray_remote_args))

