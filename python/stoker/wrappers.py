"""fn functions written in Python (declared in stoker._schema.WRAPPERS, which fn and ops read):
over a native schema, where what a user passes is not what the native operator takes
(external_source's Python source, readers.tfrecord's features, random.choice's `a`), or a
composition of native operators (ssd_random_crop, DALI's SSDRandomCrop)."""

import numpy as np

from stoker import tfrecord as _tfrecord
from stoker._op import call, pipeline_for, plain
from stoker._schema import DALI_TUNING_ARGS
from stoker.external import ExternalSource, FedVideos
from stoker.node import DataNode


def external_source(source=None, num_outputs=None, *, batch=None, cycle=None, layout=None,
                    dtype=None, ndim=None, name=None, device="cpu", no_copy=None, parallel=None,
                    prefetch_queue_depth=None, bytes_per_sample_hint=None, batch_info=False,
                    cuda_stream=None, use_copy_kernel=None, blocking=None):
    """Data from Python. `source` is a callable returning a batch (called with the iteration
    number if it takes an argument, or a types.BatchInfo with batch_info=True), an iterable of
    batches, a generator function (called for each epoch), or with batch=False a callable
    taking a types.SampleInfo and returning one sample. Without a source, batches are given with
    `pipe.feed_input(node, batch)` before each run() (DALI's iter_setup does it). A batch is a
    list of arrays or one array whose first axis is the batch: numpy, torch, JAX, cupy, any
    DLPack producer or CUDA array interface object. With `num_outputs`, the source returns a
    tuple of that many batches (samples, with batch=False) and a tuple of outputs is returned;
    `layout`, `dtype` and `ndim` may then be lists (one per output). When the source raises
    StopIteration (or an iterable ends and cycle is False/"no"/"raise"), run() raises
    StopIteration; reset() starts the next epoch. cycle=True/"quiet" repeats an iterable.

    parallel=True: the pipeline's worker processes (Pipeline's py_num_workers, py_start_method)
    run the source, `prefetch_queue_depth` batches ahead (default 2; DALI's is 1), and hand the
    samples over
    through shared memory without copying (stoker.workers); batch defaults to False then.
    `bytes_per_sample_hint` sizes the first shared-memory chunks.

    device="cpu" takes host data; device="gpu" takes CUDA data (ordered after the producer's
    stream, without blocking the host) or host data (uploaded). no_copy=False (default): the
    batch is copied when fed, so the source may reuse its arrays at once. no_copy=True: the
    pipeline uses the arrays themselves, keeping a reference until it is done with them; they
    must stay unchanged until then (return new arrays each time, or a fixed list of arrays that
    never change). cuda_stream, use_copy_kernel and blocking are accepted for DALI's scripts
    (GPU data is ordered through DLPack; a missing batch is an error, never a wait)."""
    pipe = pipeline_for("fn.external_source")
    if device not in ("cpu", "gpu"):
        raise ValueError(f"fn.external_source: device must be 'cpu' or 'gpu', got {device!r}")
    if num_outputs is not None:
        if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 1:
            raise ValueError(f"fn.external_source: num_outputs must be a positive integer, got "
                             f"{num_outputs!r}")
        if name is not None:
            raise ValueError("fn.external_source: name cannot be given with num_outputs (each "
                             "output is a node of its own)")
    parallel = bool(parallel)
    if batch is None:
        batch = not parallel
    n = num_outputs or 1
    per_output = {}
    for key, value in (("layout", layout), ("dtype", dtype), ("ndim", ndim)):
        values = list(value) if isinstance(value, (list, tuple)) else [value] * n
        if len(values) != n:
            raise ValueError(f"fn.external_source: {key} has {len(values)} values for "
                             f"{n} outputs")
        per_output[key] = values
    index = len(pipe._nodes)
    base = name or f"external_source_{index}"
    names = [base] if num_outputs is None else [f"{base}[{k}]" for k in range(n)]
    layouts = [lay or "" for lay in per_output["layout"]]

    def node(k, feeder):
        args = {"layout": layouts[k]}
        if per_output["dtype"][k] is not None:
            args["dtype"] = plain(per_output["dtype"][k])
        if per_output["ndim"][k] is not None:
            args["ndim"] = int(per_output["ndim"][k])
        return pipe._add_node("external_source", [], args, {}, names[k], device, 1,
                              external=feeder)

    if source is None and num_outputs is not None:  # fed node by node with feed_input
        return tuple(node(k, ExternalSource([names[k]], None, batch, cycle, [layouts[k]],
                                            pipe.batch_size, device, no_copy))
                     for k in range(n))
    feeder = ExternalSource(names, source, batch, cycle, layouts, pipe.batch_size, device,
                            no_copy, num_outputs, batch_info, parallel, prefetch_queue_depth,
                            bytes_per_sample_hint, name=base)
    outs = tuple(node(k, feeder) for k in range(n))
    return outs if num_outputs is not None else outs[0]


def tfrecord(path, *, features, index_path=None, device="cpu", name=None, **kwargs):
    """Reads tf.train.Example records from TFRecord files. `features` maps keys to
    stoker.tfrecord.FixedLenFeature / VarLenFeature; returns a dict of outputs by key.
    Other keyword arguments: those of the native schema (check_crc, shard_id, num_shards,
    random_shuffle, shuffle, stick_to_shard, pad_last_batch, initial_fill, lazy_init)."""
    pipe = pipeline_for("fn.readers.tfrecord")
    if not features:
        raise ValueError("fn.readers.tfrecord needs `features`")
    paths = [path] if isinstance(path, str) else list(path)
    indexes = [] if index_path is None else ([index_path] if isinstance(index_path, str)
                                             else list(index_path))
    names = list(features)
    args = {
        "path": paths, "index_path": indexes, "feature_names": names,
        "feature_types": [features[k].dtype for k in names],
        "feature_var_len": [int(features[k].var_len) for k in names],
        "feature_shapes": [",".join(str(d) for d in features[k].shape) for k in names],
        "feature_defaults": [_tfrecord._default_text(features[k]) for k in names],
    }
    args.update({k: plain(v) for k, v in kwargs.items()})
    outs = pipe._add_node("readers.tfrecord", [], args, {}, name, device, len(names))
    outs = outs if isinstance(outs, tuple) else (outs,)
    return dict(zip(names, outs))


def choice(a, shape_like=None, *, p=None, shape=None, seed=None, device="cpu", name=None):
    """Draws from `a` (a list of values, an integer n for 0..n-1, or a DataNode holding a 1-D
    list per sample) with probabilities `p` (uniform when None), one tensor of `shape` (or of
    the `shape_like` input's shape) per sample. int32 output when the values are integers,
    float32 otherwise. `seed`: this operator's own random seed (as DALI's)."""
    pipe = pipeline_for("fn.random.choice")
    if shape_like is not None and not isinstance(shape_like, DataNode):
        raise TypeError(f"fn.random.choice: shape_like must be a DataNode (an operator's "
                        f"output), got {type(shape_like).__name__}")
    args, arg_inputs = {}, {}
    if isinstance(a, DataNode):
        arg_inputs["a"] = a
        args["a_is_list"] = True
    elif isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        args["a"], args["integer"] = [int(a)], True
    else:
        values = list(a)
        if not values:
            raise ValueError("fn.random.choice: `a` is empty")
        args["a"] = [float(v) for v in values]
        args["a_is_list"] = True
        args["integer"] = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                              for v in values)
    if isinstance(p, DataNode):
        arg_inputs["p"] = p
    elif p is not None:
        args["p"] = [float(v) for v in p]
    if shape is not None:
        args["shape"] = [int(shape)] if isinstance(shape, int) else [int(s) for s in shape]
    if seed is not None:
        args["seed"] = int(seed)
    inputs = [] if shape_like is None else [shape_like]
    return pipe._add_node("random.choice", inputs, args, arg_inputs, name, device, 1)


# DALI's SSDRandomCrop (dali/operators/ssd/random_crop.*): per sample, one of 7 options drawn
# uniformly: no crop, or a minimum IoU of every box with the window of -1 (any window), 0.1,
# 0.3, 0.5, 0.7 or 0.9; for it up to num_attempts windows of width and height drawn in
# [0.3, 1] (kept to w/h in [0.5, 2]) placed uniformly, then another option. A window is taken
# when every box reaches the IoU and at least one box's centre lies in it. That is
# random_bbox_crop's search with these arguments (IoU >= 0 is "any window").
_SSD_SEARCH = dict(thresholds=[0.0, 0.1, 0.3, 0.5, 0.7, 0.9], threshold_type="iou",
                   aspect_ratio=[0.5, 2.0], scaling=[0.3, 1.0], allow_no_crop=True,
                   all_boxes_above_threshold=True, ltrb=True)


def ssd_random_crop(images, boxes, labels, /, *, num_attempts=1, seed=None, device=None,
                    name=None):
    """DALI's (deprecated) SSD crop: a random crop of `images` (HWC) such that every box
    (ltrb, normalised) overlaps it with an IoU of at least a threshold drawn per sample (or no
    crop), as DALI's SSDRandomCrop. Returns (images, boxes, labels): the image cut to the
    window (its ends rounded to the nearest pixel), the boxes whose centre lies in it, clamped
    to it and in its coordinates, and their labels. A sample without boxes is not cropped (as
    DALI). `num_attempts`: windows tried per drawn threshold; `seed`: the operator's own seed.
    Made of random_bbox_crop and slice (use those: fn.random_bbox_crop is today's form)."""
    where = "fn.ssd_random_crop"
    if device not in (None, "cpu"):
        raise ValueError(f"{where}: device must be 'cpu' (DALI's SSDRandomCrop has only a CPU "
                         f"backend), got {device!r}")

    def part(what):  # the nodes' names: the user's name, a part each (else made unique)
        return None if name is None else f"{name}.{what}"

    anchor, shape, out_boxes, out_labels = call(
        "random_bbox_crop", boxes, labels, num_attempts=num_attempts, seed=seed,
        name=part("window"), **_SSD_SEARCH)
    # DALI's search never takes a window that keeps no box, so a sample without boxes ends in
    # its "no crop" option; random_bbox_crop would take a window there: the whole image instead.
    has_boxes = call("shapes", boxes, name=part("count"))[0] > 0
    anchor = anchor * has_boxes
    shape = shape * has_boxes + (1 - has_boxes)
    images = call("slice", images, anchor, shape, normalized_anchor=True,
                  normalized_shape=True, name=part("crop"))
    return images, out_boxes, out_labels


def fast_resize_crop_mirror(images, /, *, antialias=False, **kwargs):
    """DALI's deprecated FastResizeCropMirror: resize_crop_mirror (the same arguments and
    pixels) with antialiasing off unless asked for. Use fn.resize_crop_mirror."""
    return call("resize_crop_mirror", images, antialias=antialias, **kwargs)


def video_input(*, sequence_length, last_sequence_policy="partial", blocking=False,
                no_copy=False, name=None, device="cpu", **kwargs):
    """Videos fed with pipe.feed_input(name, [encoded_bytes]) (one video per call), returned
    as consecutive sequences of `sequence_length` frames, batch_size sequences a run (DALI's
    experimental.inputs.video); the last batch of a video holds what remains (its last
    sequence shorter, or zero-padded with last_sequence_policy='pad'), and the next run goes on
    with the next video fed. run() raises when the videos fed are used up, unless
    blocking=True (it then waits for a feed from another thread). no_copy=True keeps the fed
    array instead of a copy (unchanged until its last batch is returned). device: 'cpu'
    (FFmpeg) or 'mixed' (NVDEC, GPU output)."""
    pipe = pipeline_for("fn.experimental.inputs.video")
    name = name or f"experimental.inputs.video_{len(pipe._nodes)}"
    args = {"sequence_length": sequence_length, "last_sequence_policy": last_sequence_policy,
            **{k: v for k, v in kwargs.items() if k not in DALI_TUNING_ARGS}}
    feeder = FedVideos(name, pipe.batch_size, device, no_copy, blocking)
    return pipe._add_node("experimental.inputs.video", [], {k: plain(v) for k, v in args.items()},
                          {}, name, device, 1, external=feeder)
