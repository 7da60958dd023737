"""Pipeline.serialize() / Pipeline.deserialize(): the definition as versioned JSON, written
and read by the one implementation in C++ (stoker::PipelineDefinition,
src/pipeline/serialize.cpp), which also checks every field of a document it reads."""

from stoker import _schema, _stoker, output_descs
from stoker.options import configure
from stoker.distributed import _distributed_shard
from stoker.node import DataNode


def to_json(pipe, path=None):
    """Pipeline.serialize()."""
    if not pipe._outputs:
        raise ValueError("the pipeline has no outputs to serialize: call set_outputs() "
                         "(or return them from the @pipeline_def function) first")
    for node in pipe._nodes:
        why = _schema.PYTHON_FED.get(node["op"])
        if why is not None:
            raise ValueError(f"{node['op']} '{node['name']}' {why}, which cannot be "
                             "serialized; serialize a pipeline without it")
    # The shard a reader took from a distributed job's environment is the process's, not the
    # definition's.
    nodes = [{**n, "args": {k: v for k, v in n["args"].items() if k not in n["auto_args"]}}
             for n in pipe._nodes]
    text = _stoker.serialize_pipeline(nodes, [(o._node, o._index) for o in pipe._outputs],
                                      pipe._options)
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
    saved, nodes, outputs = _stoker.parse_pipeline(text)
    pipe = cls.__new__(cls)
    pipe._setup(saved)
    # Pipeline's own keyword arguments, as its constructor takes them.
    pipe._output_descs = output_descs.declared(*(options.pop(k, None) for k in (
        "output_dtype", "output_ndim", "output_layout")))
    output_descs.check_executor_args(options.pop("stream_policy", None),
                                     options.pop("concurrency", None))
    pipe._exec_pipelined = options.get("exec_pipelined", True)
    configure(pipe._options, options)
    for n in nodes:
        auto = []
        if _schema.is_reader(n["op"]) and not _schema.SHARD_ARGS & set(n["args"]):
            auto = sorted(_distributed_shard())  # each process of a job reads its shard
            n["args"].update(_distributed_shard())
        pipe._nodes.append({**n, "auto_args": auto})
    pipe._outputs = [DataNode(pipe, node, out, f"{pipe._nodes[node]['name']}[{out}]")
                     for node, out in outputs]
    return pipe
