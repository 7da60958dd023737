"""The framework iterators' common part (stoker.plugins.torch and .jax): epochs from the reader's
metadata or a size, the last-batch policies, reset, checkpoints. Subclasses turn each pipeline's
outputs into framework arrays (`_convert`) and assemble a step (`_step`).

The epoch accounting is DALI's (nvidia.dali.plugin.base_iterator), so that a training loop steps
as it does under DALI, and — what matters in distributed training — every shard's iterator takes
the same number of steps per epoch, whatever its own shard's size: with `reader_name` an epoch
is sized by the largest shard (a smaller shard's last batch then holds fewer samples, or none,
under PARTIAL). The parity suite checks the step counts and sizes against DALI's iterators."""

import enum
import math
import warnings

import numpy as np

__all__ = ["LastBatchPolicy", "BaseIterator"]


class LastBatchPolicy(enum.Enum):
    """What the last batch of an epoch holds when the epoch's samples do not fill it.

    FILL: a full batch; the rest comes from the next epoch's first samples (which that epoch then
    does not deliver again) or, with a padded reader (pad_last_batch), is padding (the last
    sample repeated).
    DROP: not returned; every returned batch is full.
    PARTIAL: only this epoch's remaining samples (a smaller batch, possibly empty on a shard
    smaller than the largest); padding is removed."""

    FILL = 0
    DROP = 1
    PARTIAL = 2


def _flag(value, name):
    if value in (True, "yes"):
        return True
    if value in (False, "no"):
        return False
    raise ValueError(f"{name} must be True, False, 'yes' or 'no', got {value!r}")


def _shard_sizes(total, shards):
    """Samples of shards 0..shards-1 (DALI's contiguous split)."""
    k = np.arange(shards, dtype=np.int64)
    return (k + 1) * total // shards - k * total // shards


class BaseIterator:
    """Iterates `pipelines` (one, or a list: one per GPU); each step gives, per pipeline, the
    outputs named by `output_map` (one name per pipeline output), as the subclass converts them.

    reader_name: the epoch comes from that reader's metadata: every shard steps
    ceil(ceil(N / num_shards) / batch) times per epoch (FILL and PARTIAL; DROP: until a batch
    would run past the end of any shard), shards rotate between epochs unless stick_to_shard,
    and a reader with pad_last_batch pads every epoch. size (exclusive with reader_name):
    samples per epoch, summed over the pipelines (-1: until the pipeline ends its data, e.g. an
    exhausted external_source). last_batch_padded (with size): the pipeline pads every epoch to
    whole batches. auto_reset: start the next epoch when one ends (the loop still ends with
    StopIteration). prepare_first_batch: run the first batch at construction. fill_last_batch
    (DALI's older argument, deprecated there too): True is FILL, False PARTIAL.

    Epochs as in DALI's loop: once the iterator has given batches, each new `for` loop over it
    starts the next epoch (calling reset() in between is not needed, and harmless).

    Without a padded reader, batches of the pipeline straddle epochs: FILL delivers every sample
    once (an epoch's last batch completes with the next epoch's first samples, which that epoch
    then skips); PARTIAL and DROP discard the next epoch's samples that share the straddling
    batch (a warning says so; pad_last_batch=True on the reader keeps them), as in DALI.
    reset() before an epoch ended is ignored with a warning, as in DALI.
    """

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        if fill_last_batch is not None:  # DALI's older argument, with DALI's warning
            warnings.warn("Please do not use `fill_last_batch` and use `last_batch_policy` "
                          "instead.", Warning, stacklevel=3)
            last_batch_policy = LastBatchPolicy.FILL if fill_last_batch else \
                LastBatchPolicy.PARTIAL
        self._pipes = list(pipelines) if isinstance(pipelines, (list, tuple)) else [pipelines]
        if not self._pipes:
            raise ValueError("GenericIterator: no pipelines given")
        self._output_map = list(output_map)
        if len(set(self._output_map)) != len(self._output_map):
            raise ValueError(f"output_map has repeated names: {self._output_map}")
        if size != -1 and reader_name is not None:
            raise ValueError("size and reader_name are mutually exclusive: give one")
        if not isinstance(last_batch_policy, LastBatchPolicy):
            raise ValueError(f"last_batch_policy must be a LastBatchPolicy, got "
                             f"{last_batch_policy!r}")
        if size == 0:
            raise ValueError("size cannot be 0")
        if size < 0 and reader_name is None and len(self._pipes) > 1:
            raise ValueError("with several pipelines give size or reader_name")
        self._size, self._reader = int(size), reader_name
        self._auto_reset = _flag(auto_reset, "auto_reset")
        self._policy = last_batch_policy
        self._padded = bool(last_batch_padded)
        for p in self._pipes:
            p.build()
        self._batch = self._pipes[0].batch_size
        if any(p.batch_size != self._batch for p in self._pipes):
            raise ValueError("all pipelines need the same batch_size")
        if self._size < 0 and reader_name is None:  # until the data ends: whole batches
            self._policy, self._padded = LastBatchPolicy.FILL, False
        self._counter = 0
        if reader_name is not None:
            self._init_from_reader([p.reader_meta(reader_name) for p in self._pipes])
        self._warned = False
        self._consumed = self._just_reset = False  # (what __iter__ needs for DALI's loop)
        self._pending = None   # a batch run ahead (prepare_first_batch) and its checkpoints
        if prepare_first_batch:
            self._pending = self._run()

    def _init_from_reader(self, metas):
        def same(key):
            values = {m[key] for m in metas}
            if len(values) > 1:
                raise ValueError(f"the pipelines' readers differ in {key}: {sorted(values)}")
            return values.pop()
        self._total = same("epoch_size")
        self._shards = same("number_of_shards")
        self._stick = bool(same("stick_to_shard"))
        self._padded = bool(same("pad_last_batch"))
        self._ids = np.array([m["shard_id"] for m in metas], dtype=np.int64)
        b = self._batch
        if self._policy == LastBatchPolicy.DROP:
            self._size = self._total // self._shards
        elif self._padded:
            self._size = metas[0]["epoch_size_padded"] // self._shards
        else:  # whole batches covering the largest shard
            self._size = math.ceil(math.ceil(self._total / self._shards) / b) * b
        # Where each shard's stream stands at the start of this epoch (FILL reads ahead into
        # the next), and the shard sizes as the epochs rotate them.
        self._counter_per_shard = np.zeros(self._shards, dtype=np.int64)
        self._sizes = _shard_sizes(self._total, self._shards)
        self._sizes_initial = self._sizes.copy()

    # -- the epoch's extent -------------------------------------------------------------------
    def __len__(self):
        if self._size < 0:
            raise TypeError("the iterator's length is unknown: give size or reader_name")
        step = self._batch * (1 if self._reader is not None else len(self._pipes))
        if self._policy == LastBatchPolicy.DROP:
            return self._size // step
        return math.ceil(self._size / step)

    @property
    def size(self):
        return self._size

    def _step_samples(self):
        return self._batch * (1 if self._reader is not None else len(self._pipes))

    def _would_overrun(self, counter):
        """DROP: whether a batch ending at `counter` runs past the end of a shard (reader) or of
        the epoch (size)."""
        if self._reader is not None:
            return bool(np.any(self._counter_per_shard + counter > self._sizes))
        return counter > self._size

    # -- running ------------------------------------------------------------------------------
    def _run(self):
        before = [p.checkpoint() for p in self._pipes]
        return before, [p.run() for p in self._pipes]

    def _take(self):
        if self._pending is not None:
            out, self._pending = self._pending[1], None
            return out
        return self._run()[1]

    def __iter__(self):
        # DALI's epoch loop: a `for` loop over an iterator that has given batches starts the
        # next epoch (reset()), so `for epoch ...: for batch in it:` trains on every epoch
        # without calling reset(). Right after a reset (auto_reset, or the user's own call) it
        # does not reset again; in the middle of an epoch reset() continues it with a warning.
        if self._counter != 0 and self._consumed and not self._just_reset:
            self.reset()
        return self

    def _end_iteration(self):
        if self._auto_reset:
            self.reset()
        raise StopIteration

    def __next__(self):
        self._consumed, self._just_reset = True, False
        if self._size > 0 and self._counter >= self._size:
            self._end_iteration()
        try:
            batches = self._take()
        except StopIteration:  # the pipeline's data ended (external source): end of epoch
            if self._size < 0 and self._auto_reset:
                self.reset()
            raise
        self._counter += self._step_samples()
        if self._policy == LastBatchPolicy.DROP and self._would_overrun(self._counter):
            self._warn_dropped()
            self._end_iteration()  # the batch that runs over is not returned
        takes = self._takes()
        if self._reader is None:  # (DALI returns only the pipelines that hold the epoch's end)
            while len(takes) > 1 and takes[-1] == 0:
                takes.pop()
        return self._step([self._named(k, batches[k], take) for k, take in enumerate(takes)])

    def _takes(self):
        """How many samples of each pipeline's batch this step returns."""
        b = self._batch
        takes = [b] * len(self._pipes)
        if self._policy != LastBatchPolicy.PARTIAL:
            return takes
        if self._reader is not None:
            left = b - (self._counter - self._sizes_initial[self._ids])
            if np.any(left < b) and not self._padded:
                self._warn_dropped()
            return [int(min(b, max(0, x))) for x in left]
        if self._size > 0 and self._counter > self._size:  # the epoch ends in this step
            wanted = len(self._pipes) * b - (self._counter - self._size)
            return [int(min(b, max(0, wanted - k * b))) for k in range(len(self._pipes))]
        return takes

    def _warn_dropped(self):
        if self._padded or self._warned:
            return
        self._warned = True
        warnings.warn(f"last_batch_policy={self._policy.name} without a padded reader drops the "
                      f"next epoch's first samples that share the epoch's last batch (as DALI "
                      f"does); pad_last_batch=True on the reader keeps them",
                      RuntimeWarning, stacklevel=3)

    def _named(self, k, outputs, take):
        if len(outputs) != len(self._output_map):
            raise ValueError(f"output_map names {len(self._output_map)} outputs, the pipeline "
                             f"has {len(outputs)}")
        return {name: self._output(k, j, batch, take)
                for j, (name, batch) in enumerate(zip(self._output_map, outputs))}

    def _output(self, k, j, batch, take):
        """Output j of pipeline k as the framework's array (one shape per batch)."""
        if not batch.is_uniform():
            raise ValueError(f"output '{self._output_map[j]}' has samples of different shapes "
                             f"({batch.shape()[:3]}...): framework arrays need one shape per "
                             f"batch (resize or pad them in the pipeline)")
        return self._convert(k, batch, take)

    # -- what subclasses provide ---------------------------------------------------------------
    def _convert(self, k, batch, take):
        """Pipeline k's output `batch` as a framework array of its first `take` samples."""
        raise NotImplementedError

    def _step(self, per_pipeline):
        """One step's result from the pipelines' {name: array} dicts."""
        return per_pipeline

    # -- epochs -------------------------------------------------------------------------------
    def reset(self):
        """Starts the next epoch once this one has ended; before that it is ignored (with a
        warning), as in DALI."""
        step = self._step_samples()
        if self._policy == LastBatchPolicy.DROP:
            # An epoch ended by counting batches (len()) still has its straddling batch in the
            # pipeline: take it out first.
            ended = self._size > 0 and self._counter >= self._size
            if self._would_overrun(self._counter + step) and not ended:
                self._take()
                self._counter += step
        if not (self._counter >= self._size or self._size < 0):
            warnings.warn("the iterator's epoch has not ended: reset() is ignored (as in DALI)",
                          RuntimeWarning, stacklevel=2)
            return
        fill = self._policy == LastBatchPolicy.FILL and not self._padded
        if fill and self._reader is not None:
            # How far each shard's stream ran into its next epoch.
            self._counter -= int(self._counter_per_shard.min())
            self._counter_per_shard = self._counter_per_shard + self._counter - self._sizes
            self._counter = int(self._counter_per_shard.min())
        elif fill and self._size > 0:
            self._counter %= self._size
        else:
            self._counter = 0
        if self._reader is not None:
            if not self._stick:
                self._ids = (self._ids + 1) % self._shards
            if fill:
                if not self._stick:
                    self._sizes = np.roll(self._sizes, 1)
                b = self._batch
                self._size = math.ceil(int((self._sizes - self._counter_per_shard).max()) / b) * b
                if self._size == 0:  # the read-ahead covered a whole epoch: skip it
                    self._counter_per_shard = np.zeros(self._shards, dtype=np.int64)
                    self._counter = 0
                    self._sizes = np.roll(self._sizes, 1)
                    self._size = math.ceil(int(self._sizes.max()) / b) * b
        for p in self._pipes:
            p.reset()
        self._just_reset = True

    # -- checkpoints --------------------------------------------------------------------------
    _STATE = ("_counter", "_size", "_counter_per_shard", "_sizes", "_ids")

    def state_dict(self):
        """Where the iterator is: the pipelines' checkpoints and the epoch accounting. A new
        iterator over the same pipeline definitions, with load_state_dict() before its first
        batch, yields the same batches from here on."""
        ckpt = self._pending[0] if self._pending is not None else [p.checkpoint()
                                                                   for p in self._pipes]
        state = {"pipelines": ckpt}
        for key in self._STATE:
            value = getattr(self, key, None)
            state[key.lstrip("_")] = value.tolist() if isinstance(value, np.ndarray) else value
        return state

    def load_state_dict(self, state):
        """Restores state_dict()'s position, on a new iterator before its first batch (the
        batch it prepared at construction is dropped and the pipelines restart from the
        state)."""
        if len(state["pipelines"]) != len(self._pipes):
            raise ValueError(f"the state has {len(state['pipelines'])} pipelines, this iterator "
                             f"{len(self._pipes)}")
        if self._pending is not None:  # prepared, never handed out: the readers rewind
            if any(p._external for p in self._pipes):
                raise ValueError("load_state_dict: the pipelines' external sources have already "
                                 "given the batch prepared at construction; build the iterator "
                                 "with prepare_first_batch=False and load the state first")
            self._pending = None
            for p in self._pipes:
                p._forget_runs()
        if any(p._ran for p in self._pipes):
            raise ValueError("load_state_dict needs an iterator that has not given a batch yet: "
                             "make a new one over new pipelines and load the state first")
        for p, text in zip(self._pipes, state["pipelines"]):
            p._restart_from(text)
        for key in self._STATE:
            value = state[key.lstrip("_")]
            if value is not None and isinstance(getattr(self, key, None), np.ndarray):
                value = np.array(value, dtype=np.int64)
            setattr(self, key, value)
