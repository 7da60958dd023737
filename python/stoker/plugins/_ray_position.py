"""Where training stood in a resumable from_pipeline dataset, for Ray Train's checkpoints.

Rows of a resumable dataset carry their place, (dataset key, shard, epoch, index in the shard's
epoch), in the column POSITION. A training worker iterates through Position.track, which
records the places of the batches it handed on and removes the column; Position.save writes
them into the directory the worker reports as its checkpoint. Ray Train's workers each get
their own rows in an order no one fixes (Ray Data streams blocks to whichever worker asks), so
what was consumed is a set per shard, not a count, and rows the workers had fetched but not
consumed at the checkpoint are given again after a resume.

A shard's actor records marks: after a block that leaves no sample waiting, the pipeline's
checkpoint there and the place (epoch, index). A resumed shard restores the last mark at or
before its first sample not consumed, runs on from there and leaves out the samples consumed
after it; so a resume reruns only the samples fetched ahead at the checkpoint, not the epoch.
A mark's checkpoint is a few KB (the reader's state and the random operators').
"""

import glob
import os
import pickle
import uuid

import numpy as np

POSITION = "_stoker_position"


def actor_name(key):
    """The Ray name of the actor that keeps a resumable dataset's marks."""
    return f"stoker_position_{key:x}"


class Position:
    """What one training worker consumed of resumable from_pipeline datasets:

        position = Position()
        for batch in position.track(shard.iter_torch_batches(batch_size=64)):
            ...
            with tempfile.TemporaryDirectory() as d:
                torch.save(model.state_dict(), os.path.join(d, "model.pt"))
                position.save(d)          # every worker, into the checkpoint it reports
                ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(d))

    and on the driver, `from_pipeline(..., resume_from=result.checkpoint)` starts where they
    stood."""

    def __init__(self):
        self._consumed = {}  # key -> {shard: {epoch: [index arrays]}}
        self._finished = {}  # key -> the latest epoch of an iteration this worker finished

    def track(self, batches):
        """Yields the batches of `batches` (one epoch's iteration: dicts of numpy arrays or
        torch tensors) without the POSITION column, recording each batch's places as it is
        handed on; an iteration that runs to its end marks its epoch finished."""
        seen = {}
        try:
            for batch in batches:
                if POSITION not in batch:
                    raise ValueError("Position.track: the batches have no position column: "
                                     "make the dataset with from_pipeline(..., resumable=True)")
                tags = batch.pop(POSITION)
                tags = np.asarray(tags.cpu() if hasattr(tags, "cpu") else tags)
                if tags.dtype.kind not in "iu":  # (a float cast garbles the 56-bit keys)
                    raise ValueError(f"Position.track: the position column was converted to "
                                     f"{tags.dtype}: leave it int64 (dtypes per column)")
                tags = tags.astype(np.int64)
                self._record(tags.reshape(-1, 4), seen)
                yield batch
        finally:  # closed early: end the dataset's iteration now (docs/scale_out.md)
            close = getattr(batches, "close", None)
            if close is not None:
                close()
        for key, epoch in seen.items():
            self._finished[key] = max(epoch, self._finished.get(key, -1))

    def _record(self, tags, seen):
        groups, which = np.unique(tags[:, :3], axis=0, return_inverse=True)
        for g, (key, shard, epoch) in enumerate(groups.tolist()):
            epochs = self._consumed.setdefault(key, {}).setdefault(shard, {})
            epochs.setdefault(epoch, []).append(tags[which.ravel() == g, 3])
            seen[key] = max(epoch, seen.get(key, -1))
            for old in [e for e in epochs if e < max(epochs) - 1]:  # only the last two matter
                del epochs[old]

    def save(self, directory):
        """Writes this worker's part of the position into `directory` (each worker its own
        file; Ray Train gathers the workers' files of one report in one checkpoint)."""
        import ray
        os.makedirs(directory, exist_ok=True)
        for key, shards in self._consumed.items():
            info = ray.get(ray.get_actor(actor_name(key)).position.remote())
            part = {"name": info["name"], "key": key, "marks": info["marks"],
                    "before": info["before"],
                    "finished": self._finished.get(key),
                    "consumed": {s: {e: np.unique(np.concatenate(a)) for e, a in ep.items()}
                                 for s, ep in shards.items()}}
            path = os.path.join(directory,
                                f"stoker_position_{info['name']}_{uuid.uuid4().hex}.pkl")
            with open(path, "wb") as f:
                pickle.dump(part, f)


def _files(checkpoint, name):
    if hasattr(checkpoint, "as_directory"):  # a ray.train.Checkpoint
        with checkpoint.as_directory() as d:
            return _files(d, name)
    directory = os.fspath(checkpoint)
    parts = []
    for path in sorted(glob.glob(os.path.join(directory, "stoker_position_*.pkl"))):
        with open(path, "rb") as f:
            part = pickle.load(f)
        if part["name"] == name:
            parts.append(part)
    if not parts:
        raise ValueError(f"from_pipeline: the checkpoint {directory} holds no position of a "
                         f"dataset named {name!r} (Position.save writes it)")
    if len({p["key"] for p in parts}) > 1:
        raise ValueError(f"from_pipeline: the checkpoint {directory} holds the positions of "
                         f"several datasets named {name!r}: give each from_pipeline its own name")
    return parts


def resume_states(checkpoint, name, num_shards):
    """({shard: its first read's state}, {shard: (epoch, consumed)}) from the workers' files."""
    parts = _files(checkpoint, name)
    consumed, marks = {}, {}
    for part in parts:
        for shard, epochs in part["consumed"].items():
            for epoch, idx in epochs.items():
                consumed.setdefault((shard, epoch), []).append(idx)
        for shard, (epoch, idx) in part["before"].items():
            consumed.setdefault((shard, epoch), []).append(np.asarray(idx, np.int64))
        for shard, epochs in part["marks"].items():
            for epoch, places in epochs.items():
                marks.setdefault(shard, {}).setdefault(epoch, {}).update(places)
    if not consumed:
        return None, {}
    if max(s for s, _ in consumed) >= num_shards:
        raise ValueError(f"from_pipeline: the checkpoint's dataset {name!r} had more shards "
                         f"than {num_shards}")
    latest = max(e for _, e in consumed)
    # Every worker that consumed some of the latest epoch finished it: start the next. (A worker
    # given none of it cannot say which epoch its empty iteration was.)
    readers = [p for p in parts
               if any(latest in epochs for epochs in p["consumed"].values())]
    finished = all(p["finished"] is not None and p["finished"] >= latest for p in readers)
    states, before = {}, {}
    for shard in range(num_shards):
        done = np.unique(np.concatenate(consumed.get((shard, latest), [np.zeros(0, np.int64)])))
        target = latest + 1 if finished else latest  # the epoch the first iteration gives
        if finished:
            done = np.zeros(0, np.int64)
        first_gap = _first_gap(done)
        # The last mark at or before the first sample not consumed, in the target epoch or
        # (epochs whose start was inside a straddling batch, or not reached) before it.
        for epoch in range(target, -1, -1):
            places = marks.get(shard, {}).get(epoch, {})
            usable = [i for i in places if epoch < target or i <= first_gap]
            if usable:
                break
        else:
            raise ValueError(f"from_pipeline: the checkpoint holds no place to resume shard "
                             f"{shard} of dataset {name!r} from")
        index = max(usable)
        state = {"epoch": epoch, "index": index, "checkpoint": places[index], "rows": []}
        if epoch == target:
            state["consumed"] = done[done >= index].tolist()
        else:  # run on to the target epoch's start, then leave out what was consumed of it
            state["roll"] = target - epoch
            state["next_consumed"] = done.tolist()
        states[shard] = state
        if done.size:
            before[shard] = (target, done.tolist())
    return states, before


def _first_gap(indices):
    """The smallest index >= 0 not in the sorted unique `indices`."""
    n = int(np.searchsorted(indices - np.arange(len(indices)), 1))
    return n
