"""The framework iterators' common part (stoker.plugins.torch and .jax): epochs from the reader's
metadata or a size, the last-batch policies, reset, checkpoints. Subclasses turn each pipeline's
outputs into framework arrays (`_convert`) and assemble a step (`_step`)."""

import enum
import math
import warnings

__all__ = ["LastBatchPolicy", "BaseIterator"]


class LastBatchPolicy(enum.Enum):
    """What the last batch of an epoch holds when the epoch's samples do not fill it.

    FILL: a full batch; the rest comes from the next epoch's first samples (which that epoch then
    does not deliver again) or, with a padded reader (pad_last_batch), is padding (the shard's
    last sample repeated).
    DROP: not returned; every returned batch is full and holds only this epoch's samples.
    PARTIAL: only this epoch's remaining samples (a smaller batch); padding is removed."""

    FILL = 0
    DROP = 1
    PARTIAL = 2


def _flag(value, name):
    if value in (True, "yes"):
        return True
    if value in (False, "no"):
        return False
    raise ValueError(f"{name} must be True, False, 'yes' or 'no', got {value!r}")


class BaseIterator:
    """Iterates `pipelines` (one, or a list: one per GPU); each step gives, per pipeline, the
    outputs named by `output_map` (one name per pipeline output), as the subclass converts them.

    size: samples per epoch of each pipeline's shard (-1: until the pipeline ends its data, e.g.
    an exhausted external_source). reader_name: take the epoch from that reader instead (its
    shard sizes, shard rotation between epochs, and pad_last_batch); exclusive with size.
    last_batch_padded (with size): the pipeline pads every epoch to whole batches.
    auto_reset: start the next epoch when one ends (the loop still ends with StopIteration).
    prepare_first_batch: run the first batch at construction, so it is ready at once.

    Without a padded reader, batches of the pipeline straddle epochs: FILL delivers every sample
    once (an epoch's last batch completes with the next epoch's first samples); DROP and PARTIAL
    discard the next epoch's samples that share the straddling batch (a warning says so;
    pad_last_batch=True on the reader avoids it). With several pipelines their epochs must
    hold the same number of batches (pad_last_batch does that).
    """

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 last_batch_policy=LastBatchPolicy.FILL, last_batch_padded=False,
                 prepare_first_batch=True):
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
        self._size, self._reader = int(size), reader_name
        self._auto_reset = _flag(auto_reset, "auto_reset")
        self._policy = last_batch_policy
        for p in self._pipes:
            p.build()
        self._batch = self._pipes[0].batch_size
        if any(p.batch_size != self._batch for p in self._pipes):
            raise ValueError("all pipelines need the same batch_size")
        if reader_name is not None:
            self._meta = [p.reader_meta(reader_name) for p in self._pipes]
            self._padded = bool(self._meta[0]["pad_last_batch"])
        else:
            self._meta = None
            self._padded = bool(last_batch_padded)
        if self._size < 0 and self._reader is None and len(self._pipes) > 1:
            raise ValueError("with several pipelines give size or reader_name")
        self._epoch = 0
        self._start = 0        # where this epoch's stream began (samples the last one took)
        self._pos = 0          # samples of this epoch's stream taken from each pipeline so far
        self._ended = False    # the epoch is over; reset() starts the next
        self._pending = None   # a batch run ahead (prepare_first_batch) and its checkpoints
        self._warned = False
        if prepare_first_batch:
            self._pending = self._run()

    # -- the epoch's extent -------------------------------------------------------------------
    def _sizes(self, k=0, epoch=None):
        """(real samples, stream length) of pipeline k's current epoch; (-1, -1) if unknown."""
        epoch = self._epoch if epoch is None else epoch
        b = self._batch
        if self._meta is not None:
            m = self._meta[k]
            total, shards = m["epoch_size"], m["number_of_shards"]
            shard = m["shard_id"] if m["stick_to_shard"] else (m["shard_id"] + epoch) % shards
            real = total * (shard + 1) // shards - total * shard // shards
            return real, (m["shard_size"] if self._padded else real)
        if self._size < 0:
            return -1, -1
        real = self._size // len(self._pipes)
        return real, (math.ceil(real / b) * b if self._padded else real)

    def _epoch_sizes(self):
        sizes = {self._sizes(k) for k in range(len(self._pipes))}
        if len(sizes) > 1:
            counts = {math.ceil(L / self._batch) for _, L in sizes}
            if len(counts) > 1:
                raise ValueError(f"the pipelines' epochs differ ({sorted(sizes)} samples): use "
                                 f"pad_last_batch=True on the reader so they step together")
        return max(sizes)

    def __len__(self):
        real, length = self._epoch_sizes()
        if real < 0:
            raise TypeError("the iterator's length is unknown: give size or reader_name")
        start, b = self._start, self._batch
        if self._policy == LastBatchPolicy.FILL:
            return math.ceil((length - start) / b)
        if self._policy == LastBatchPolicy.PARTIAL:
            return math.ceil(max(0, real - start) / b)
        return max(0, real - start) // b

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
        return self

    def __next__(self):
        real, length = self._epoch_sizes()
        b = self._batch
        if self._ended:
            raise StopIteration
        if real >= 0:
            left = real - min(self._pos, real)
            over = {LastBatchPolicy.FILL: self._pos >= length,
                    LastBatchPolicy.PARTIAL: left <= 0,
                    LastBatchPolicy.DROP: left < b}[self._policy]
            if over:
                self._end_epoch(real, length)
                raise StopIteration
        try:
            batches = self._take()
        except StopIteration:  # the pipeline's data ended (external source): end of epoch
            self._ended = True
            self._pos = 0
            if self._auto_reset:
                self.reset()
            raise
        take = b
        if real >= 0 and self._policy == LastBatchPolicy.PARTIAL:
            take = min(b, real - min(self._pos, real))
        self._pos += b
        return self._step([self._named(k, out, take) for k, out in enumerate(batches)])

    def _named(self, k, outputs, take):
        if len(outputs) != len(self._output_map):
            raise ValueError(f"output_map names {len(self._output_map)} outputs, the pipeline "
                             f"has {len(outputs)}")
        result = {}
        for name, batch in zip(self._output_map, outputs):
            if not batch.is_uniform():
                raise ValueError(f"output '{name}' has samples of different shapes "
                                 f"({batch.shape[:3]}...): framework arrays need one shape per "
                                 f"batch (resize or pad them in the pipeline)")
            result[name] = self._convert(k, batch, take)
        return result

    # -- what subclasses provide ---------------------------------------------------------------
    def _convert(self, k, batch, take):
        """Pipeline k's output `batch` as a framework array of its first `take` samples."""
        raise NotImplementedError

    def _step(self, per_pipeline):
        """One step's result from the pipelines' {name: array} dicts."""
        return per_pipeline

    def _end_epoch(self, real, length):
        """Consumes what is left of this epoch's stream and moves to the next epoch."""
        b = self._batch
        if self._padded:
            while self._pos < length:  # padding-only batches (DROP/PARTIAL)
                self._take()
                self._pos += b
            carry = 0
        else:
            if self._pos < real:  # DROP: the batch straddling the epochs is not returned
                self._take()
                self._pos += b
            carry = self._pos - real
            if carry and self._policy != LastBatchPolicy.FILL and not self._warned:
                self._warned = True
                warnings.warn(f"last_batch_policy={self._policy.name} without a padded reader "
                              f"drops the next epoch's first {carry} samples (they share the "
                              f"last batch); pad_last_batch=True on the reader keeps them",
                              RuntimeWarning, stacklevel=3)
        self._epoch += 1
        self._pos = self._start = carry
        self._ended = True
        if self._auto_reset:
            self.reset()

    def reset(self):
        """Starts the next epoch: after the current one ended, or at once (what is left of the
        current epoch is skipped)."""
        if not self._ended:
            real, length = self._epoch_sizes()
            if real >= 0:
                if self._policy == LastBatchPolicy.FILL:
                    while self._pos < length:
                        self._take()
                        self._pos += self._batch
                self._end_epoch(real, length)
        self._ended = False

    # -- checkpoints --------------------------------------------------------------------------
    def state_dict(self):
        """Where the iterator is: the pipelines' checkpoints and the epoch position. A new
        iterator over the same pipeline definitions, with load_state_dict() before its first
        batch, yields the same batches from here on."""
        ckpt = self._pending[0] if self._pending is not None else [p.checkpoint()
                                                                   for p in self._pipes]
        return {"pipelines": ckpt, "epoch": self._epoch, "pos": self._pos,
                "start": self._start, "ended": self._ended}

    def load_state_dict(self, state):
        """Restores state_dict()'s position. The pipelines must not have run yet: build the
        iterator with prepare_first_batch=False."""
        if len(state["pipelines"]) != len(self._pipes):
            raise ValueError(f"the state has {len(state['pipelines'])} pipelines, this iterator "
                             f"{len(self._pipes)}")
        if self._pending is not None or any(p._ran for p in self._pipes):
            raise ValueError("load_state_dict needs pipelines that have not run yet: build the "
                             "iterator with prepare_first_batch=False and load the state first")
        for p, text in zip(self._pipes, state["pipelines"]):
            p._restart_from(text)
        self._epoch, self._pos, self._start = state["epoch"], state["pos"], state["start"]
        self._ended = state["ended"]
