"""pipe.serialize() / stoker.Pipeline.deserialize(): a versioned JSON schema; the rebuilt
pipeline gives identical batches; what cannot be serialized says so."""

import json
import os

import numpy as np
import pytest

import stoker
from stoker import fn, types


def _pipe(folder, seed=7, **kw):
    pipe = stoker.Pipeline(batch_size=4, seed=seed, **{"num_threads": 2, **kw})
    with pipe:
        jpegs, labels = fn.readers.file(file_root=folder, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, name="decode")
        images = fn.resize(images, size=(24, 32), name="resize")
        angle = fn.random.uniform(range=(-10.0, 10.0))
        images = fn.rotate(images, angle=angle, keep_size=True)
        out = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=[1, 2, 3],
                                       std=[2, 2, 2], dtype=types.FLOAT16, output_layout="CHW")
        pipe.set_outputs(out, labels * 2 + 1)
    return pipe


def _batches(pipe, n=3):
    out = []
    for _ in range(n):
        images, labels = pipe.run()
        out.append((images.as_array().copy(), labels.as_array().copy()))
    return out


def test_round_trip_gives_identical_batches(jpeg_folder, tmp_path):
    original = _pipe(jpeg_folder)
    text = original.serialize(tmp_path / "p.json")
    doc = json.loads(text)
    assert doc["format"] == "stoker.pipeline" and doc["version"] == 2
    assert [n["name"] for n in doc["nodes"]][:3] == ["reader", "decode", "resize"]
    assert any(n["op"] == "arithmetic" for n in doc["nodes"])  # labels * 2 + 1
    assert (tmp_path / "p.json").read_text() == text
    expected = _batches(original)
    for source in (text, str(tmp_path / "p.json")):
        again = stoker.Pipeline.deserialize(source)
        assert again.serialize() == text  # the same definition, serialized the same way
        for (a, b), (c, d) in zip(expected, _batches(again)):
            np.testing.assert_array_equal(a, c)
            np.testing.assert_array_equal(b, d)
        again.close()
    original.close()


def test_options_can_be_overridden_and_keep_their_meaning(jpeg_folder):
    text = _pipe(jpeg_folder, prefetch_queue_depth={"cpu_size": 3, "gpu_size": 1}).serialize()
    doc = json.loads(text)
    assert doc["options"]["prefetch_queue_depth"] == 3
    assert doc["options"]["gpu_queue_depth"] == 1
    more = stoker.Pipeline.deserialize(text, num_threads=1)
    assert more.num_threads == 1 and more.batch_size == 4
    # Outputs do not depend on the number of threads (same seed).
    for (a, b), (c, d) in zip(_batches(_pipe(jpeg_folder)), _batches(more)):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_external_sources_and_bad_documents_are_refused(jpeg_folder):
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=1)
    with pipe:
        pipe.set_outputs(fn.external_source(lambda: [np.zeros(3, np.uint8)] * 2, name="feed"))
    with pytest.raises(ValueError, match="external_source 'feed' takes its data from a Python "
                                         "source, which cannot be serialized"):
        pipe.serialize()
    with pytest.raises(ValueError, match="no outputs to serialize"):
        stoker.Pipeline(batch_size=2).serialize()
    good = json.loads(_pipe(jpeg_folder).serialize())
    with pytest.raises(ValueError, match="not JSON"):
        stoker.Pipeline.deserialize("{nope")
    with pytest.raises(ValueError, match="not JSON"):
        stoker.Pipeline.deserialize('{"version": 888e774}')
    with pytest.raises(ValueError, match="not a serialized stoker pipeline"):
        stoker.Pipeline.deserialize(json.dumps({"nodes": []}))
    with pytest.raises(ValueError, match="schema version 99; this stoker reads versions 1 and 2"):
        stoker.Pipeline.deserialize(json.dumps({**good, "version": 99}))
    bad = json.loads(json.dumps(good))
    bad["nodes"][1]["inputs"] = [[5, 0]]  # decode reading a later node
    with pytest.raises(ValueError, match="node 1 \\('decode', decoders.image_random_crop\\) reads "
                                         "output 0 of node 5, which does not come before it"):
        stoker.Pipeline.deserialize(json.dumps(bad))
    bad = json.loads(json.dumps(good))
    bad["nodes"][2]["args"]["size"] = "big"  # the native build names the operator
    with pytest.raises(Exception, match="resize"):
        stoker.Pipeline.deserialize(json.dumps(bad)).build()


def test_a_distributed_shard_is_not_serialized(jpeg_folder, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    pipe = _pipe(jpeg_folder)
    assert pipe._nodes[0]["args"]["shard_id"] == 1  # this process's shard, taken from the job
    doc = json.loads(pipe.serialize())
    reader = doc["nodes"][0]
    assert reader["op"] == "readers.file" and "shard_id" not in reader["args"]
    explicit = stoker.Pipeline(batch_size=2, seed=1)
    with explicit:
        jpegs, _ = fn.readers.file(file_root=jpeg_folder, shard_id=0, num_shards=3)
        explicit.set_outputs(jpegs)
    assert json.loads(explicit.serialize())["nodes"][0]["args"]["num_shards"] == 3


def _checksums(array_bytes):
    """What examples/cpp/run_serialized.cpp prints: the sums of the bytes and of byte x
    position, modulo 2**64."""
    b = np.frombuffer(array_bytes, np.uint8).astype(np.uint64)
    with np.errstate(over="ignore"):
        return int(b.sum()), int((b * np.arange(len(b), dtype=np.uint64)).sum())


def test_cpp_runs_what_python_serialized(jpeg_folder, tmp_path):
    """The C++ example (Pipeline::from_json, no Python) gives the batches Python gives."""
    import os
    import subprocess
    build = os.path.dirname(os.path.dirname(os.path.dirname(stoker.__file__)))
    exe = os.path.join(build, "examples", "stoker_example_run_serialized")
    if not os.path.exists(exe):
        pytest.skip(f"no C++ example binary at {exe} (an installed stoker, not a build tree)")
    pipe = _pipe(jpeg_folder)
    pipe.serialize(tmp_path / "p.json")
    r = subprocess.run([exe, str(tmp_path / "p.json"), "3"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 6
    for it, (images, labels) in enumerate(_batches(pipe)):
        for k, arr in enumerate((images, labels)):
            s, w = _checksums(arr.tobytes())
            assert lines[2 * it + k].endswith(f"checksum {s} {w}"), (it, k, lines[2 * it + k])
    assert "4 samples, (3, 24, 32) float16" in lines[0]


CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus", "pipeline_json")


@pytest.mark.parametrize("name", sorted(os.listdir(CORPUS)))
def test_damaged_documents_are_refused_by_name(name):
    """The C++ fuzz target's corpus through Pipeline.deserialize: the valid document builds;
    every damaged one is a ValueError (or the operator's TypeError) that names what is wrong,
    never an error from deep inside (std::bad_cast, an unpacking or recursion error)."""
    with open(os.path.join(CORPUS, name)) as f:
        text = f.read()
    if name == "valid.json":
        stoker.Pipeline.deserialize(text).build()
        return
    with pytest.raises((ValueError, TypeError)) as e:
        stoker.Pipeline.deserialize(text).build()
    message = str(e.value)
    assert "bad_cast" not in message and "build(" not in message, message
    assert e.type is TypeError and "unsupported argument value" in message or \
        e.type is ValueError, message


def test_deserialize_names_the_field_and_its_value():
    doc = json.loads(open(os.path.join(CORPUS, "valid.json")).read())
    doc["nodes"][0]["name"] = 5
    with pytest.raises(ValueError, match=r"node 0 \(random.coin_flip\) field 'name' is 5"):
        stoker.Pipeline.deserialize(json.dumps(doc))
    doc = json.loads(open(os.path.join(CORPUS, "valid.json")).read())
    doc["prefetch_queue_depth"] = 3  # one depth for both queues, as DALI takes it
    pipe = stoker.Pipeline.deserialize(json.dumps(doc))
    pipe.build()
    assert len(pipe.run()) == 3


def test_every_saved_option_round_trips_and_unknown_ones_are_refused(jpeg_folder):
    """The document's options are stoker.PipelineOptions' saved fields, by name, both ways."""
    pipe = _pipe(jpeg_folder, num_threads="auto", cpu_budget=3, host_memory_budget=1 << 30,
                 on_error="skip", pinned_outputs=True, cpu_affinity=[0], fusion=False)
    doc = json.loads(pipe.serialize())
    assert set(doc["options"]) == set(stoker.PipelineOptions.names(saved_only=True))
    assert doc["options"]["auto_threads"] and doc["options"]["num_threads"] == 3
    again = stoker.Pipeline.deserialize(json.dumps(doc))
    for name in stoker.PipelineOptions.names(saved_only=True):
        assert getattr(again.options, name) == getattr(pipe.options, name), name
    assert again.num_threads == "auto"
    doc["options"]["colour"] = "blue"
    with pytest.raises(ValueError, match="serialized pipeline: unknown option 'colour'"):
        stoker.Pipeline.deserialize(json.dumps(doc))
    doc["options"].pop("colour")
    doc["options"]["batch_size"] = 2.5
    with pytest.raises(ValueError, match="serialized pipeline: option 'batch_size' is 2.5"):
        stoker.Pipeline.deserialize(json.dumps(doc))
