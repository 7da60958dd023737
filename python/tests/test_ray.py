"""stoker.plugins.ray on a local Ray instance: from_pipeline's epochs (every sample once per
epoch across shards, epochs going on as the pipelines do on one host, batches that straddle
epochs and padded readers), a dataset read in part, map_batches over read_binary_files, and the
errors. The multi-node cases (a node killed mid-epoch) are in test_ray_cluster.py."""

import gc
import glob
import os
import sys

import numpy as np
import pytest

if any(s in os.environ.get("LD_PRELOAD", "") for s in ("libasan", "libtsan")):
    pytest.skip("Ray's own processes do not run with a sanitizer preloaded", allow_module_level=True)
ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'stoker[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'stoker[ray]')")

import stoker  # noqa: E402
from stoker import fn  # noqa: E402
from stoker.plugins.ray import (POSITION, Position, from_pipeline, map_batches,  # noqa: E402
                                release)
from stoker.plugins._ray_position import resume_states  # noqa: E402

FILES = 21  # with batches of 8: every epoch of a shard ends inside a batch


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    # The factories below are this module's functions: the actors get them by value (the
    # workers cannot import the test module).
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.execution_options.preserve_order = True
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def free_actors():
    """Each test's datasets (and their pipelines' actors, which hold CPUs) go when it ends."""
    yield
    gc.collect()


@pytest.fixture(scope="module")
def numbered_files(tmp_path_factory):
    """FILES files whose first byte is their number (readers.file does not decode them)."""
    root = tmp_path_factory.mktemp("numbered")
    for c in range(2):
        os.makedirs(root / f"c{c}")
    for i in range(FILES):
        (root / f"c{i % 2}" / f"{i:03d}.jpg").write_bytes(bytes([i]) * (i + 1))
    return str(root)


def _factory(root, pad=False, stick=False, seed=5):
    def make(shard_id, num_shards):
        p = stoker.Pipeline(batch_size=8, num_threads=1, seed=seed)
        with p:
            data, label = fn.readers.file(file_root=root, shard_id=shard_id,
                                          num_shards=num_shards, random_shuffle=True,
                                          pad_last_batch=pad, stick_to_shard=stick, name="r")
            p.set_outputs(data, label)
        return p
    return make


def _numbers(rows):
    return [int(r["data"][0]) for r in rows]


@pytest.mark.parametrize("pad,stick", [(False, False), (True, False), (False, True)])
def test_every_sample_once_per_epoch_across_shards(local_ray, numbered_files, pad, stick):
    ds = from_pipeline(_factory(numbered_files, pad, stick), num_shards=2,
                       output_names=("data", "label"))
    for _ in range(3):
        rows = ds.take_all()
        assert sorted(_numbers(rows)) == list(range(FILES))
        for r in rows:  # ragged bytes: variable-shaped tensors, one per row; labels as read
            n = int(r["data"][0])
            assert r["data"].shape == (n + 1,) and r["label"].tolist() == [n % 2]


def test_epochs_are_those_of_the_pipeline_on_one_host(local_ray, numbered_files):
    # One shard: the dataset's rows, epoch after epoch, are the pipeline's samples in order
    # (its shuffle going on across epochs, a straddling batch's rest opening the next epoch).
    make = _factory(numbered_files)
    host = make(0, 1)
    host.build()
    stream = []
    while len(stream) < 3 * FILES:
        data = host.run()[0]
        stream += [int(np.array(data.at(i))[0]) for i in range(len(data))]
    ds = from_pipeline(make, num_shards=1, output_names=("data", "label"))
    got = []
    for _ in range(3):
        got += _numbers(ds.take_all())
    assert got == stream[:3 * FILES]
    assert got[:FILES] != got[FILES:2 * FILES]  # the shuffle goes on


def test_a_dataset_read_in_part_ends_that_epoch(local_ray, numbered_files):
    ds = from_pipeline(_factory(numbered_files), num_shards=2, output_names=("data", "label"),
                       block_rows=2)
    assert len(ds.take(3)) == 3
    assert sorted(_numbers(ds.take_all())) == list(range(FILES))


def test_map_batches_decodes_read_binary_files(local_ray, shared_data):
    files = sorted(glob.glob(os.path.join(shared_data, "photos", "dali-imagenet-classes", "*",
                                          "*.jpg")))[:10]
    if len(files) < 10:
        pytest.skip("the shared photos are missing")

    def make():
        p = stoker.Pipeline(batch_size=4, num_threads=1, seed=1)
        with p:
            jpegs = fn.external_source(name="bytes", dtype=stoker.types.UINT8)
            p.set_outputs(fn.resize(fn.decoders.image(jpegs), size=(32, 48)))
        return p

    ds = ray.data.read_binary_files(files, include_paths=True)
    rows = map_batches(ds, make, output_names=("image",)).take_all()
    assert len(rows) == 10  # 4 + 4 + a short last batch of 2
    ref = make()
    ref.build()
    want = []
    for k in range(0, 10, 4):
        chunk = [np.fromfile(f, np.uint8) for f in files[k:k + 4]]
        ref.feed_input("bytes", chunk + chunk[-1:] * (4 - len(chunk)))
        out = ref.run()[0]
        want += [np.array(out.at(i)) for i in range(len(chunk))]
    for r, w in zip(rows, want):
        np.testing.assert_array_equal(r["image"], w)


def test_release_frees_the_shards_resources_at_once(local_ray, numbered_files):
    # Three shards of 1 CPU each on a 4-CPU Ray: a second such dataset could not place its
    # actors until the first's are gone; release() ends them without waiting for the GC.
    keep = []
    for _ in range(2):
        ds = from_pipeline(_factory(numbered_files), num_shards=3, output_names=("data", "label"))
        keep.append(ds)  # referenced: only release() frees the actors
        assert sorted(_numbers(ds.take_all())) == list(range(FILES))
        release(ds)
    release(keep[0])  # twice: nothing left to end
    with pytest.raises(ValueError, match="not a dataset made by"):
        release(ray.data.from_items([{"x": 1}]))


def test_errors_name_the_cause(local_ray, numbered_files, tmp_path):
    def unsharded(shard_id, num_shards):
        return _factory(numbered_files)(0, 1)
    with pytest.raises(Exception, match="built a reader for shard 0 of 1: pass shard_id"):
        from_pipeline(unsharded, num_shards=2, output_names=("data", "label"))
    with pytest.raises(ValueError, match="output_names must name each output once"):
        from_pipeline(_factory(numbered_files), num_shards=2, output_names=("a", "a"))
    ds = from_pipeline(_factory(numbered_files), num_shards=1, output_names=("data",))
    with pytest.raises(Exception, match="output_names names 1 outputs, the pipeline has 2"):
        ds.take_all()
    with pytest.raises(ValueError, match="the batches have no position column: make the "
                                         "dataset with from_pipeline\\(..., resumable=True\\)"):
        next(Position().track(iter([{"data": np.zeros(2)}])))
    with pytest.raises(ValueError, match="the position column was converted to float32: "
                                         "leave it int64"):
        next(Position().track(iter([{POSITION: np.zeros((1, 4), np.float32)}])))
    with pytest.raises(ValueError, match="holds no position of a dataset named 'train'"):
        from_pipeline(_factory(numbered_files), num_shards=1, output_names=("data", "label"),
                      resume_from=str(numbered_files), name="train")
    import pickle
    two = tmp_path / "two"
    two.mkdir()
    for key in (1, 2):  # two datasets saved under one name
        with open(two / f"stoker_position_train_{key}.pkl", "wb") as f:
            pickle.dump({"name": "train", "key": key, "marks": {}, "before": {},
                         "finished": None, "consumed": {}}, f)
    with pytest.raises(ValueError, match="several datasets named 'train': give each "
                                         "from_pipeline its own name"):
        from_pipeline(_factory(numbered_files), num_shards=1, output_names=("data", "label"),
                      resume_from=str(two), name="train")
    ds = ray.data.from_items([{"other": 1}])
    with pytest.raises(ValueError, match="no external source named after a column"):
        map_batches(ds, lambda: _factory(numbered_files)(0, 1), output_names=("x",))


def _float_factory(root):
    """The numbered files as float vectors of 24 (a sample's number first) and their labels."""
    def make(shard_id, num_shards):
        p = stoker.Pipeline(batch_size=8, num_threads=1, seed=5)
        with p:
            data, label = fn.readers.file(file_root=root, shard_id=shard_id,
                                          num_shards=num_shards, random_shuffle=True)
            x = fn.cast(fn.pad(data, axes=[0], shape=[24]), dtype=stoker.types.FLOAT)
            p.set_outputs(x, fn.cast(label, dtype=stoker.types.FLOAT))
        return p
    return make


def test_a_torch_trainer_trains_on_a_stoker_dataset(local_ray, numbered_files, tmp_path):
    pytest.importorskip("torch")
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer

    make = _float_factory(numbered_files)
    def loop(config):
        import json

        import torch

        import ray.train
        rank = ray.train.get_context().get_world_rank()
        shard = ray.train.get_dataset_shard("train")
        model = torch.nn.Linear(24, 1)
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)
        for epoch in range(2):
            seen = []
            for batch in shard.iter_torch_batches(batch_size=4):
                loss = torch.nn.functional.mse_loss(model(batch["x"]), batch["y"])
                opt.zero_grad()
                loss.backward()
                opt.step()
                seen += [int(v) for v in batch["x"][:, 0]]  # a sample's number is its 1st byte
            with open(os.path.join(config["out"], f"{rank}-{epoch}.json"), "w") as f:
                json.dump({"seen": seen, "loss": float(loss)}, f)

    ds = from_pipeline(make, num_shards=2, output_names=("x", "y"), num_cpus=0.5)
    TorchTrainer(loop, train_loop_config={"out": str(tmp_path)},
                 scaling_config=ScalingConfig(num_workers=2, resources_per_worker={"CPU": 0.5}),
                 datasets={"train": ds},
                 run_config=RunConfig(storage_path=str(tmp_path), name="run")).fit()
    import json
    for epoch in range(2):
        logs = [json.load(open(tmp_path / f"{w}-{epoch}.json")) for w in range(2)]
        seen = logs[0]["seen"] + logs[1]["seen"]
        # Ray Train gives its workers equal shares: of 21 samples one is left out (Ray's rule,
        # as DDP's drop_last); none is repeated.
        assert len(set(seen)) == len(seen) >= FILES - 1 and set(seen) <= set(range(FILES))
        assert all(np.isfinite(log["loss"]) for log in logs)


def _tagged(batches):
    """(shard, epoch, index, number) of each row of `batches` (a resumable dataset's)."""
    out = []
    for batch in batches:
        tags = np.asarray(batch[POSITION])
        out += [(int(t[1]), int(t[2]), int(t[3]), int(d[0])) for t, d in zip(tags, batch["data"])]
    return out


@pytest.mark.parametrize("pad,stick", [(False, False), (True, False), (False, True)])
def test_a_resumed_dataset_gives_the_rest_of_the_epoch_then_the_same_epochs(
        local_ray, numbered_files, tmp_path, pad, stick):
    """Part of epoch 1 consumed (through Position.track), saved, the dataset dropped; a new one
    resumed from the saved position gives the samples of epoch 1 not consumed, each once, the
    same samples at the same places as a run never stopped, and then epoch 2 as that run."""
    make = _factory(numbered_files, pad, stick)
    whole = from_pipeline(make, num_shards=2, output_names=("data", "label"), resumable=True)
    runs = [_tagged(whole.iter_batches(batch_size=4)) for _ in range(3)]
    release(whole)
    for stop in (0, 5, 13, FILES):
        ds = from_pipeline(make, num_shards=2, output_names=("data", "label"), resumable=True)
        position = Position()
        for _ in position.track(ds.iter_batches(batch_size=4)):  # epoch 0, whole
            pass
        it = position.track(ds.iter_batches(batch_size=1))
        consumed = [int(next(it)["data"][0][0]) for _ in range(stop)]
        if stop == FILES:
            assert next(it, None) is None  # the iteration ends: epoch 1 finished
        it.close()
        position.save(str(tmp_path / f"stop{stop}"))
        release(ds)
        if stop == 13 and not pad:  # the shards restart at a mark, not an epoch's start (the
            # last of epoch 0: epoch 1 of a shard of 10 samples begins inside a batch of 8)
            states, _ = resume_states(str(tmp_path / f"stop{stop}"), "dataset", 2)
            assert all(st["index"] > 0 for st in states.values()), states
        resumed = from_pipeline(make, num_shards=2, output_names=("data", "label"),
                                resume_from=str(tmp_path / f"stop{stop}"))
        rest = _tagged(resumed.iter_batches(batch_size=4))
        if stop < FILES:
            assert sorted(consumed + [r[3] for r in rest]) == list(range(FILES)), stop
            assert set(rest) <= set(runs[1])  # same sample, same shard, epoch and place
            after = _tagged(resumed.iter_batches(batch_size=4))
        else:
            after = rest  # epoch 1 was finished: the first iteration is epoch 2
        assert sorted(after) == sorted(runs[2]), stop
        release(resumed)


def test_a_torch_trainer_resumes_mid_epoch_from_its_checkpoint(local_ray, numbered_files,
                                                               tmp_path):
    """Two workers train through epoch 0 and stop 3 steps into epoch 1 with a checkpoint
    holding the model, the epoch and the dataset's position (every worker's file); a new
    TorchTrainer resumed from it finishes epoch 1 with the samples not consumed, none twice."""
    pytest.importorskip("torch")
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer

    make = _float_factory(numbered_files)
    def loop(config):
        import json
        import tempfile

        import torch

        import ray.train
        from stoker.plugins.ray import Position
        rank = ray.train.get_context().get_world_rank()
        model = torch.nn.Linear(24, 1)
        start = 0
        checkpoint = ray.train.get_checkpoint() or config["resume"]  # (Ray's own, or ours)
        if checkpoint:
            with checkpoint.as_directory() as d:
                model.load_state_dict(torch.load(os.path.join(d, "model.pt")))
                start = json.load(open(os.path.join(d, "epoch.json")))["epoch"]
        shard = ray.train.get_dataset_shard("train")
        position = Position()
        for epoch in range(start, 2):
            seen = []
            for step, batch in enumerate(position.track(shard.iter_torch_batches(batch_size=2))):
                model(batch["x"]).sum().backward()
                seen += [int(v) for v in batch["x"][:, 0]]
                stop = config["stop"] and epoch == 1 and step == 2
                if stop:
                    with tempfile.TemporaryDirectory() as d:
                        torch.save(model.state_dict(), os.path.join(d, "model.pt"))
                        with open(os.path.join(d, "epoch.json"), "w") as f:
                            json.dump({"epoch": epoch}, f)
                        position.save(d)
                        ray.train.report({"step": step},
                                         checkpoint=ray.train.Checkpoint.from_directory(d))
                    break
            with open(os.path.join(config["out"], f"{config['stop']}-{rank}-{epoch}.json"),
                      "w") as f:
                json.dump(seen, f)
            if config["stop"] and epoch == 1:
                return

    def fit(stop, checkpoint=None):
        ds = from_pipeline(make, num_shards=2, output_names=("x", "y"), num_cpus=0.5,
                           resume_from=checkpoint, resumable=True)
        result = TorchTrainer(
            loop, train_loop_config={"out": str(tmp_path), "stop": stop, "resume": checkpoint},
            scaling_config=ScalingConfig(num_workers=2, resources_per_worker={"CPU": 0.5}),
            datasets={"train": ds},
            run_config=RunConfig(storage_path=str(tmp_path), name=f"run{stop}")).fit()
        release(ds)
        return result

    first = fit(True)
    assert len(glob.glob(os.path.join(first.checkpoint.path, "stoker_position_*.pkl"))) == 2
    fit(False, first.checkpoint)
    import json

    def seen(stop, epoch):
        return sum((json.load(open(tmp_path / f"{stop}-{w}-{epoch}.json")) for w in range(2)), [])
    before, after = seen(True, 1), seen(False, 1)
    assert len(before) == 2 * 3 * 2  # 2 workers x 3 steps x 2 samples
    both = before + after
    # Ray Train's equal shares leave out up to one sample per epoch; none is repeated.
    assert len(set(both)) == len(both) >= FILES - 1 and set(both) <= set(range(FILES))


def test_a_dataset_resumed_twice_gives_each_sample_of_the_epoch_once(local_ray, numbered_files,
                                                                      tmp_path):
    """Stopped 5 samples into epoch 1, resumed, stopped 4 samples later, resumed again: the
    three runs' samples of epoch 1 are the epoch, each once (the second checkpoint carries the
    first one's consumed samples and the resume's place)."""
    make = _factory(numbered_files)

    def part(ds, count, saved):
        position = Position()
        it = position.track(ds.iter_batches(batch_size=1))
        got = [int(next(it)["data"][0][0]) for _ in range(count)]
        it.close()
        position.save(saved)
        release(ds)
        return got

    ds = from_pipeline(make, num_shards=2, output_names=("data", "label"), resumable=True)
    ds.take_all()  # epoch 0
    first = part(ds, 5, str(tmp_path / "a"))
    second = part(from_pipeline(make, num_shards=2, output_names=("data", "label"),
                                resume_from=str(tmp_path / "a")), 4, str(tmp_path / "b"))
    last = from_pipeline(make, num_shards=2, output_names=("data", "label"),
                         resume_from=str(tmp_path / "b"))
    rest = [int(r["data"][0]) for r in last.take_all()]
    release(last)
    assert sorted(first + second + rest) == list(range(FILES)), (first, second, rest)
