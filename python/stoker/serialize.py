"""Pipeline.serialize() / Pipeline.deserialize(): a pipeline's definition as versioned JSON
({"format": "stoker.pipeline", "version": 1}); C++ reads the same document
(stoker::Pipeline::from_json, src/pipeline/serialize.cpp)."""

import json

from stoker.pipeline import DataNode, _distributed_shard

SERIAL_VERSION = 1  # kSerialVersion in src/pipeline/serialize.cpp


def to_json(pipe, path=None):
    """Pipeline.serialize()."""
    if not pipe._outputs:
        raise ValueError("the pipeline has no outputs to serialize: call set_outputs() "
                         "(or return them from the @pipeline_def function) first")
    for name in pipe._external:
        raise ValueError(f"external_source '{name}' takes its data from a Python source, "
                         "which cannot be serialized; serialize a pipeline without it")
    nodes = [{"op": n["op"], "name": n["name"], "device": n["device"],
              "inputs": [list(r) for r in n["inputs"]],
              "args": {k: v for k, v in n["args"].items() if k not in n["auto_args"]},
              "arg_inputs": {k: list(r) for k, r in n["arg_inputs"].items()}}
             for n in pipe._nodes]
    doc = {"format": "stoker.pipeline", "version": SERIAL_VERSION,
           "batch_size": pipe.batch_size, "num_threads": pipe.num_threads,
           "cpu_budget": pipe.cpu_budget,
           "device_id": pipe.device_id, "seed": pipe._seed,
           "prefetch_queue_depth": "auto" if pipe._auto_prefetch else
           {"cpu_size": pipe._cpu_depth, "gpu_size": pipe._gpu_depth},
           "host_memory_budget": pipe.host_memory_budget,
           "device_memory_budget": pipe.device_memory_budget, "on_error": pipe.on_error,
           "pinned_outputs": pipe.pinned_outputs, "cpu_affinity": pipe.cpu_affinity or None,
           "nodes": nodes,
           "outputs": [[o._node, o._index] for o in pipe._outputs]}
    text = json.dumps(doc, indent=1)
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text


def from_json(cls, serialized, options):
    """Pipeline.deserialize(): a `cls` pipeline with the saved options, `options` on top."""
    text = serialized
    if not serialized.lstrip().startswith(("{", "[")):  # else a path
        with open(serialized) as f:
            text = f.read()
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"Pipeline.deserialize: not JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != "stoker.pipeline":
        raise ValueError("Pipeline.deserialize: not a serialized stoker pipeline (no "
                         "\"format\": \"stoker.pipeline\")")
    if doc.get("version") != SERIAL_VERSION:
        raise ValueError(f"Pipeline.deserialize: schema version {_short(doc.get('version'))}; "
                         f"this stoker reads version {SERIAL_VERSION}")
    _check_document(doc)
    saved = {k: doc[k] for k in ("batch_size", "num_threads", "device_id", "seed",
                                 "prefetch_queue_depth", "host_memory_budget",
                                 "device_memory_budget", "on_error", "pinned_outputs")}
    saved["cpu_budget"] = doc.get("cpu_budget")
    saved["cpu_affinity"] = doc.get("cpu_affinity")  # absent in files of older versions
    pipe = cls(**{**saved, **options})
    for i, n in enumerate(doc["nodes"]):
        n = {"inputs": [], "args": {}, "arg_inputs": {}, **n}  # the lists may be left out
        refs = [tuple(r) for r in n["inputs"]] + [tuple(r) for r in n["arg_inputs"].values()]
        for node, out in refs:
            if not (0 <= node < i and out >= 0):
                raise ValueError(f"Pipeline.deserialize: node {i} ('{n['name']}') reads "
                                 f"output {out} of node {node}, which does not come before it")
        if n["op"] == "external_source":
            raise ValueError(f"Pipeline.deserialize: node {i} is an external_source, which "
                             "needs a Python source")
        args = dict(n["args"])
        auto = []
        if n["op"].startswith("readers.") and not {"shard_id", "num_shards"} & set(args):
            auto = sorted(_distributed_shard())
            args.update(_distributed_shard())
        pipe._nodes.append({"op": n["op"], "name": n["name"], "device": n["device"],
                            "defined_at": f"serialized node {i}",
                            "inputs": [tuple(r) for r in n["inputs"]], "args": args,
                            "arg_inputs": {k: tuple(r) for k, r in n["arg_inputs"].items()},
                            "auto_args": auto})
    pipe._outputs = []
    for node, out in doc["outputs"]:
        if not 0 <= node < len(pipe._nodes):
            raise ValueError(f"Pipeline.deserialize: an output reads node {node}, which "
                             "does not exist")
        pipe._outputs.append(DataNode(pipe, node, out, f"{pipe._nodes[node]['name']}[{out}]"))
    return pipe


def _short(v):
    """`v` for a message: its JSON text, at most 200 characters."""
    try:
        text = json.dumps(v)
    except (ValueError, RecursionError):
        text = repr(v)
    return text if len(text) <= 200 else text[:200] + "..."


def _is_int(v, bits=31):
    """An integer (not a bool) that fits a signed `bits`+1-bit integer (the C++ option's)."""
    return isinstance(v, int) and not isinstance(v, bool) and -2**bits <= v < 2**bits


def _is_ref(v):
    return isinstance(v, list) and len(v) == 2 and all(_is_int(x) for x in v)


def _check_document(doc):
    """Every field's JSON type, so a damaged or hand-edited file gets a ValueError naming the
    field and its value (as src/pipeline/serialize.cpp does), not an error from deep inside."""
    def refuse(what, value, expected):
        raise ValueError(f"Pipeline.deserialize: {what} is {_short(value)} ({expected})")

    def option(key, ok, expected, required=True):
        if key not in doc:
            if required:
                raise ValueError(f"Pipeline.deserialize: option '{key}' is missing")
            return
        if not ok(doc[key]):
            refuse(f"option '{key}'", doc[key], expected)

    option("batch_size", _is_int, "an integer")
    option("num_threads", lambda v: _is_int(v) or v == "auto", "an integer or \"auto\"")
    option("cpu_budget", lambda v: v is None or _is_int(v), "an integer or null", False)
    option("device_id", lambda v: v is None or _is_int(v), "an integer or null")
    option("seed", lambda v: _is_int(v, 63), "a 64-bit integer")
    option("prefetch_queue_depth",
           lambda v: v == "auto" or _is_int(v) or (
               isinstance(v, dict) and set(v) <= {"cpu_size", "gpu_size"} and
               all(_is_int(x) for x in v.values())),
           "\"auto\", a depth, or {\"cpu_size\": N, \"gpu_size\": M}")
    for key in ("host_memory_budget", "device_memory_budget"):
        option(key, lambda v: _is_int(v, 64) and v >= 0, "a number of bytes, 0 for no limit")
    option("on_error", lambda v: isinstance(v, str), "a string")
    option("pinned_outputs", lambda v: isinstance(v, bool), "true or false")
    option("cpu_affinity", lambda v: v is None or (isinstance(v, list) and
                                                   all(_is_int(c) for c in v)),
           "a list of cores or null", False)
    for key in ("nodes", "outputs"):
        if not isinstance(doc.get(key), list):
            raise ValueError("Pipeline.deserialize: \"nodes\" and \"outputs\" must be lists")
    for i, n in enumerate(doc["nodes"]):
        if not isinstance(n, dict) or not isinstance(n.get("op"), str):
            raise ValueError(f"Pipeline.deserialize: node {i} has no \"op\"")
        where = f"node {i} ({n['op']})"
        for key in ("name", "device"):
            if not isinstance(n.get(key), str):
                refuse(f"{where} field '{key}'", n.get(key), "a string")
        if not isinstance(n.get("inputs", []), list) or not all(map(_is_ref, n.get("inputs", []))):
            refuse(f"{where} field 'inputs'", n.get("inputs"), "a list of [node, output]")
        for key in ("args", "arg_inputs"):
            if not isinstance(n.get(key, {}), dict):
                refuse(f"{where} field '{key}'", n.get(key), "an object")
        if not all(map(_is_ref, n.get("arg_inputs", {}).values())):
            refuse(f"{where} field 'arg_inputs'", n.get("arg_inputs"),
                   "an object of [node, output]")
    if not all(map(_is_ref, doc["outputs"])):
        refuse("field 'outputs'", doc["outputs"], "a list of [node, output]")
