"""Limits: every pipeline option and operator argument with a size meaning, at and beyond its
documented range (docs/design/pipeline.md, "Ranges"). At the limit the pipeline builds and runs,
or fails cheaply (an allocation the address-space cap refuses); beyond it, a ValueError names
the option or argument, at build or at the first run: never a hang, a crash or a multi-GB
allocation. The cases run in subprocesses with a timeout and RLIMIT_AS capped at 4 GiB.

How the arguments are found: by walking the native schemas (stoker._schema.SCHEMAS, as
test_parity_arguments.py walks DALI's). Every numeric argument (int, float and lists of them) of
every public operator is classified below, by name or by (operator, name): a size (it sets how
large an output is, how many threads start, how long a search runs: it has a case in CASES),
bounded elsewhere (a reason), or a value (not a size). An argument an operator gains that nobody
classified fails test_every_numeric_argument_is_classified, and a size without a case fails
test_every_size_argument_has_a_case; the pipeline options are walked the same way
(stoker.PipelineOptions.names())."""

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest

import stoker
from stoker import _schema, fn

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_AS is Linux's", allow_module_level=True)

CAP = 4 << 30  # RLIMIT_AS of the subprocesses
LIMIT = 2**31 - 1  # elements (pixels for image sizes) an argument may ask for per sample
SIDE = 46340  # the largest square side within LIMIT (46341^2 > LIMIT)

# -- the pipeline options -------------------------------------------------------------------
# (option, at the limit, beyond, message); checked at construction in Python and by the C++
# builder (serialised pipelines).
OPTIONS = [
    ("batch_size", 2**20, 2**20 + 1,
     "batch_size must be at most 1048576, got 1048577 (its range is [1, 1048576])"),
    ("num_threads", 1024, 100000,
     "num_threads must be at most 1024, got 100000 (its range is [1, 1024])"),
    ("prefetch_queue_depth", 64, 10**9,
     "prefetch_queue_depth must be at most 64, got 1000000000 (its range is [1, 64])"),
]
OPTION_CLASSES = {
    "batch_size": "size", "num_threads": "size", "prefetch_queue_depth": "size",
    "gpu_queue_depth": "size (prefetch_queue_depth's gpu_size)",
    "auto_threads": "a flag", "auto_prefetch": "a flag (grows the queue up to 6)",
    "device_id": "a device", "seed": "a value", "on_error": "a choice",
    "pinned_outputs": "a flag", "fusion": "a flag", "cpu_lanes": "0, 1 or 2 (checked)",
    "cpu_affinity": "cores (checked against the machine)", "checkpoint": "a text",
    "trace": "a path", "host_memory_budget": "a cap on memory (0: none)",
    "device_memory_budget": "a cap on memory (0: none)",
}


def _run(code, timeout=60, cap=CAP):
    """Runs `code` in a fresh interpreter under an address-space cap: (exit code, output)."""
    prelude = ""
    if cap:
        prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))\n"
    env = dict(os.environ)
    env.pop("STOKER_TRACE", None)
    r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=timeout, env=env)
    return r.returncode, r.stdout + r.stderr


def _tiny():
    return fn.random.uniform(shape=[2])


def test_every_pipeline_option_is_classified():
    names = set(stoker.PipelineOptions.names())
    unclassified = names - set(OPTION_CLASSES)
    assert not unclassified, f"options nobody classified: {unclassified}"
    sizes = {k for k, v in OPTION_CLASSES.items() if v.startswith("size")}
    assert sizes - {"gpu_queue_depth"} == {o for o, *_ in OPTIONS}


@pytest.mark.parametrize("name, at, beyond, message", OPTIONS, ids=[o[0] for o in OPTIONS])
def test_options_beyond_their_ranges_are_refused_naming_them(name, at, beyond, message):
    with pytest.raises(ValueError) as e:
        stoker.Pipeline(**{"batch_size": 2, "num_threads": 1, name: beyond})
    assert message in str(e.value)
    # Far beyond a C++ int: the same words, not a conversion error.
    with pytest.raises(ValueError, match=f"{name} must be at most"):
        stoker.Pipeline(**{"batch_size": 2, "num_threads": 1, name: 10**30})


def test_queue_depths_are_whole_numbers_as_in_dali():
    # DALI 2.4 refuses a float depth (TypeError); 1e9 was accepted and the first run fed the
    # queue 10^9 times.
    for depth in (1e9, 2.0, {"cpu_size": 2.5, "gpu_size": 2}):
        with pytest.raises(TypeError, match=r"must be a whole number of batches in \[1, 64\]"):
            stoker.Pipeline(batch_size=2, prefetch_queue_depth=depth)
    with pytest.raises(ValueError,
                       match="prefetch_queue_depth's gpu_size must be at most 64, got 65"):
        stoker.Pipeline(batch_size=2, prefetch_queue_depth={"cpu_size": 2, "gpu_size": 65})
    with pytest.raises(ValueError, match=r"cpu_budget must be at most 1024, got 5000"):
        stoker.Pipeline(batch_size=2, num_threads="auto", cpu_budget=5000)


def test_serialised_options_beyond_their_ranges_are_refused_by_the_builder():
    # Pipeline.deserialize takes the saved options as they are: the C++ builder checks them.
    @stoker.pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        return _tiny()

    text = pipe().serialize()
    cases = [({"num_threads": 100000}, "num_threads must be at most 1024, got 100000"),
             ({"prefetch_queue_depth": 10**9},
              "prefetch_queue_depth must be at most 64, got 1000000000 (its range is [1, 64])"),
             ({"gpu_queue_depth": 100}, "gpu_queue_depth (prefetch_queue_depth's gpu_size) must "
                                        "be at most 64, got 100"),
             ({"batch_size": 2**21}, "batch_size must be at most 1048576, got 2097152"),
             ({"auto_threads": True, "num_threads": 4096}, "cpu_budget must be at most 1024")]
    for changes, message in cases:
        doc = json.loads(text)
        doc["options"].update(changes)
        p = stoker.Pipeline.deserialize(json.dumps(doc))
        with pytest.raises(ValueError) as e:
            p.build()
        assert message in str(e.value), (changes, str(e.value))


def test_options_at_their_limits_build_and_run():
    # 1024 threads reserve 8 GiB of stacks (address space, not memory): no cap here.
    rc, out = _run(PEAK_MB + textwrap.dedent("""
        import time, resource, stoker
        from stoker import fn
        t = time.time()
        for kw in [dict(num_threads=1024), dict(prefetch_queue_depth=64),
                   dict(prefetch_queue_depth={"cpu_size": 64, "gpu_size": 64}),
                   dict(num_threads="auto", cpu_budget=1024), dict(batch_size=2**20)]:
            args = dict(batch_size=2, num_threads=2, device_id=None)
            args.update(kw)
            p = stoker.Pipeline(**args)
            with p:
                p.set_outputs(fn.random.uniform(shape=[1]))
            p.build()
            (out,) = p.run()
            print(sorted(kw), len(out), flush=True)
            del p
        print("seconds", time.time() - t)
        print("MB", peak_mb())
    """), cap=None)
    assert rc == 0, out
    assert out.count("\n") >= 7 and "['batch_size'] 1048576" in out, out
    assert float(re.search(r"seconds (\S+)", out).group(1)) < 10, out
    assert int(re.search(r"MB (\d+)", out).group(1)) < 2000, out


# -- operator arguments ---------------------------------------------------------------------
# Classes: SIZE (has cases below); a reason string starting with "bounded" (a size checked or
# bounded elsewhere); VALUE (not a size). By argument name, then (operator, name) overrides.
SIZE, VALUE = "size", "value"
BY_NAME = {
    # sizes of outputs, threads, queues and searches
    "shape": SIZE, "align": SIZE, "crop": SIZE, "crop_h": SIZE, "crop_w": SIZE,
    "resize_x": SIZE, "resize_y": SIZE, "resize_shorter": SIZE, "resize_longer": SIZE,
    "size": SIZE, "output_size": SIZE, "min_canvas_size": SIZE, "num_classes": SIZE,
    "num_labels": SIZE, "prefetch_queue_depth": SIZE, "num_io_threads": SIZE,
    "initial_fill": SIZE, "num_attempts": SIZE, "total_num_attempts": SIZE,
    "start": SIZE, "end": SIZE, "rel_start": SIZE, "rel_end": SIZE, "rel_shape": SIZE,
    "roi_start": SIZE, "roi_end": SIZE, "roi_shape": SIZE, "rel_roi_start": SIZE,
    "rel_roi_end": SIZE, "rel_roi_shape": SIZE, "sequence_length": SIZE, "end_frame": SIZE,
    "sizes": SIZE, "scales": SIZE,
    # bounded elsewhere
    "max_pixels": "bounded: itself the decoders' limit on the data's pixels",
    "max_size": "bounded: a cap on resize's output, never an enlargement",
    "window_size": "bounded: a filter's window; cost per pixel, scratch past memory fails as "
                   "'out of memory' naming the operator and sample",
    "sigma": "bounded: sets the filter's window (as window_size)",
    "frames": "bounded: the output has as many frames as the list given holds",
    "new_order": "bounded: the output has as many frames as the list given holds",
    "step": "bounded: where sequences start, not their size",
    "stride": "bounded: a stride; readers.video refuses one no sequence fits, decoders.video "
              "bounds the output through sequence_length/end_frame",
    "start_frame": "bounded: a position in the video (past its end: refused)",
    "num_shards": "bounded: a shard left empty is refused at build",
    "shard_id": "bounded: must be below num_shards",
    "k_largest": "bounded: at most the objects found are returned",
    "nDegree": "bounded: a displacement, clipped to the image",
    "ndim": "bounded: metadata (transforms: 1 to 6, checked)",
    "channels": "bounded: readers.video takes 3 only",
    "src_dims": "bounded: reshape keeps the input's elements",
    "additional_decode_surfaces": "bounded: NVDEC's surfaces (GPU only)",
    "hint_grid": "bounded: optical flow's grid (GPU only)",
    "output_grid": "bounded: optical flow's grid (GPU only)",
    "downscale_hint": "bounded: a hint, never a size",
    "hybrid_huffman_threshold": "bounded: a threshold, never a size",
    "size_threshold": "bounded: a threshold on boxes",
    "in_anchors": "bounded: a region inside an input",
    "shapes": "bounded: a region inside an input",
    "out_anchors": "bounded: a region inside the canvas",
    "in_anchors_rel": "bounded: a region inside an input",
    "shapes_rel": "bounded: a region inside an input",
    "out_anchors_rel": "bounded: a region inside the canvas",
    "crop_shape": "bounded: numbers out (the window), nothing allocated from it",
    "in_shape": "bounded: numbers out (the window), nothing allocated from it",
    "input_shape": "bounded: numbers out (boxes), nothing allocated from it",
    "feature_var_len": "bounded: flags per feature",
    "chunk_offsets": "bounded: positions in the input",
    "chunk_sizes": "bounded: sizes within the input",
    # values: coefficients, probabilities, positions, indices, seeds, axes
    **{n: VALUE for n in (
        "M", "MT", "T", "a", "alignment", "alpha", "beta", "anchor", "anchors", "angle", "angles",
        "aspect_ratio", "axes", "axis", "background", "bbox_prune_threshold", "brightness",
        "brightness_shift", "center", "center_x", "center_y", "center_z", "class_weights",
        "classes", "contrast", "contrast_center", "crop_pos_x", "crop_pos_y", "criteria", "ddof",
        "element_map", "epsilon", "fdata", "fill_value", "fill_values", "flip_x", "flip_y",
        "flip_z", "foreground", "foreground_prob", "from_end", "from_start", "function_id",
        "horizontal", "hue", "idata", "in_ids", "indices", "label_type", "labels", "mask",
        "matrix", "mean", "means", "mirror", "off_value", "offset", "on_value", "p", "paste_x",
        "paste_y", "perm", "preset", "probability", "random_area", "random_aspect_ratio", "range",
        "remove_threshold", "roi_axes", "saturation", "scale", "scaling", "seed", "shear",
        "shift", "shuffle_after_epoch_seed", "std", "stddev", "stds", "threshold", "thresholds",
        "to_end", "to_start", "value", "values", "vertical")},
}
BY_OP = {
    ("erase", "shape"): "bounded: the erased region, clipped to the image",
    ("reshape", "shape"): "bounded: reshape keeps the input's elements",
    ("reinterpret", "shape"): "bounded: reshape keeps the input's elements",
    ("reshape", "rel_shape"): "bounded: reshape keeps the input's elements",
    ("reinterpret", "rel_shape"): "bounded: reshape keeps the input's elements",
    ("bbox_rotate", "size"): "bounded: numbers out (boxes), nothing allocated from it",
    **{(op, roi): "bounded: a region of the input"
       for op in ("resize", "experimental.resize", "resize_crop_mirror", "tensor_resize")
       for roi in ("roi_start", "roi_end")},
    ("roi_random_crop", "roi_start"): "bounded: numbers out (the window)",
    ("roi_random_crop", "roi_end"): "bounded: numbers out (the window)",
    ("roi_random_crop", "roi_shape"): "bounded: numbers out (the window)",
    ("readers.video", "sequence_length"): "bounded: refused at build when no sequence fits the "
                                          "files",
    ("readers.sequence", "sequence_length"): "bounded: refused at build when no sequence fits "
                                             "the files",
    ("experimental.readers.fits", "hdu_indices"): "bounded: positions of HDUs in the files (past "
                                                  "the last refused), one output per entry given",
    ("readers.video_resize", "sequence_length"): "bounded: as readers.video's (with "
                                                 "pad_sequences: sequence_length x the frame "
                                                 "checked at build)",
    ("experimental.inputs.video", "sequence_length"): "bounded: 'partial' sequences hold the fed "
                                                      "video's frames; 'pad' checks "
                                                      "sequence_length x the frame when a video "
                                                      "is fed (test_video_readers_extra.py)",
    **{("readers.video_resize", roi): "bounded: a region of the input"
       for roi in ("roi_start", "roi_end")},
    ("bbox_paste", "ratio"): VALUE, ("paste", "ratio"): SIZE,
    ("laplacian", "smoothing_size"): "bounded: odd, 1 to 31 (as window_size), checked",
    **{(op, "mask_size"): "bounded: 1 to 255 per axis, checked; a cost per pixel, no scratch"
       for op in ("experimental.dilate", "experimental.erode")},
    **{(op, "iterations"): "bounded: 1 to 255, checked; one second buffer whatever the count"
       for op in ("experimental.dilate", "experimental.erode")},
    **{("clahe", a): "bounded: at most the image's extent (more tiles refused), tables per tile"
       for a in ("tiles_x", "tiles_y")},
    ("clahe", "bins"): "bounded: a power of 2, checked; histograms of 256 bins whatever it says",
    ("clahe", "clip_limit"): VALUE, ("debayer", "blue_position"): VALUE,
    ("jpeg_compression_distortion", "quality"): VALUE,
    ("lookup_table", "keys"): "bounded: 0 to 65535, checked; a table of at most 65,536 entries",
    ("lookup_table", "default_value"): VALUE,
    **{("noise.salt_and_pepper", a): VALUE
       for a in ("pepper_val", "prob", "salt_val", "salt_vs_pepper")},
    ("noise.shot", "factor"): VALUE,
    **{("water", f"{a}_{x}"): VALUE for a in ("ampl", "freq", "phase") for x in "xy"},
    **{("grid_mask", a): VALUE for a in ("ratio", "shift_x", "shift_y")},
    ("grid_mask", "tile"): "bounded: positive, checked; a cost per pixel, no scratch",
}
NUMERIC = {"int", "float", "list of int", "list of float"}


def _numeric_arguments():
    return sorted((op, a["name"]) for op, s in _schema.SCHEMAS.items() if _schema.public(op)
                  for a in s["args"] if a["type"] in NUMERIC)


def _class(op, arg):
    return BY_OP.get((op, arg), BY_NAME.get(arg))


# -- cases ----------------------------------------------------------------------------------
# Each case covers (operator, arguments): `at` is a pipeline output at the argument's limit,
# `beyond` one past it, refused with a ValueError matching `refused` (None: the value is
# accepted and the pipeline ends quickly). Expressions see fn, types, np, IMG() (an 8x8x3 uint8
# HWC image), JPEG (a file of a 16x16 JPEG), FILES, NPY (a folder of one 4x4 float32 .npy) and
# VIDEO (a 4-frame 16x16 mp4, when PyAV is there).
@dataclass
class Case:
    op: str
    args: tuple
    at: str
    beyond: str
    refused: str = None
    needs: str = ""  # "video": skipped without PyAV


def _random(op, call):
    return [Case(op, ("shape",), call.format(f"shape=[{LIMIT}]"),
                 call.format("shape=[2**40, 2**40]"),
                 rf"{re.escape(op)}: shape would make an output of 1099511627776x1099511627776"),
            Case(op, ("shape",), call.format("shape=[8]"), call.format(f"shape=[{LIMIT + 1}]"),
                 rf"{re.escape(op)}: shape would make an output of 2147483648 \(2147483648 "
                 rf"elements")]


WINDOW = r"would make an output of 46341x46341 \(2147488281 elements"
CASES = [
    *_random("random.uniform", "fn.random.uniform({})"),
    *_random("random.normal", "fn.random.normal({})"),
    *_random("random.coin_flip", "fn.random.coin_flip({})"),
    *_random("random.choice", "fn.random.choice(5, {})"),
    *_random("random.beta", "fn.random.beta({})"),
    *_random("constant", "fn.constant(fdata=[1.0], {})"),
    *_random("zeros", "fn.zeros({})"),
    *_random("ones", "fn.ones({})"),
    *_random("full", "fn.full(fn.constant(fdata=[1.0]), {})"),
    Case("decoders.inflate", ("shape",),
         f"fn.decoders.inflate(fn.constant(idata=[1, 2, 3], dtype=types.UINT8), shape=[{LIMIT}])",
         "fn.decoders.inflate(fn.constant(idata=[1, 2, 3], dtype=types.UINT8), "
         "shape=[2**40, 2**40])", r"decoders.inflate: shape would make an output of "),
    Case("pad", ("shape",), f"fn.pad(IMG(), axes=[0], shape=[{LIMIT // 24}])",
         f"fn.pad(IMG(), axes=[0], shape=[{LIMIT // 24 + 1}])",
         r"pad: shape and align would make an output of 89478486x8x3"),
    Case("pad", ("shape",), "fn.pad(IMG(), axes=[0, 1], shape=[8, 8])",
         "fn.pad(IMG(), axes=[0, 1], shape=[2**40, 2**40])",
         r"pad: shape would make an output of 1099511627776 "),
    Case("pad", ("align",), f"fn.pad(IMG(), axes=[0], align=[{LIMIT // 24}])",
         "fn.pad(IMG(), axes=[0], align=[2**62])", r"pad: align would make an output of "),
    *[Case("slice", (arg,), f"fn.slice(IMG(), axes=[0, 1], {val.format(26754)}, "
                            "out_of_bounds_policy='pad')",
           f"fn.slice(IMG(), axes=[0, 1], {val.format(46341)}, out_of_bounds_policy='pad')",
           r"slice: the window arguments would make an output of ")
      for arg, val in [("shape", "shape=[{0}, {0}]"), ("end", "end=[{0}, {0}]"),
                       ("start", "start=[-{0}, -{0}], end=[0, 0]"),
                       ("rel_shape", "rel_shape=[{0} / 8, {0} / 8]"),
                       ("rel_end", "rel_end=[{0} / 8, {0} / 8]"),
                       ("rel_start", "rel_start=[-{0} / 8, -{0} / 8], rel_end=[0, 0]")]],
    # crop pads a window larger than the image; crop_mirror_normalize refuses it, after the
    # window's size (the same code reads both).
    *[Case(op, ("crop",), f"{call}(IMG(), crop=({SIDE}, {SIDE}){pad})",
           f"{call}(IMG(), crop=({SIDE + 1}, {SIDE + 1}){pad})",
           rf"{op}: crop \(crop_h, crop_w\) {WINDOW}")
      for op, call, pad in [("crop", "fn.crop", ", out_of_bounds_policy='pad'"),
                            ("crop_mirror_normalize", "fn.crop_mirror_normalize", "")]],
    *[Case(op, ("crop_h", "crop_w"), f"{call}(IMG(), crop_h={SIDE}, crop_w={SIDE}{pad})",
           f"{call}(IMG(), crop_h=1e30, crop_w=1e30{pad})",
           rf"{op}: crop \(crop_h, crop_w\) would make an output of 1e\+30x1e\+30")
      for op, call, pad in [("crop", "fn.crop", ", out_of_bounds_policy='pad'"),
                            ("crop_mirror_normalize", "fn.crop_mirror_normalize", "")]],
    Case("decoders.image_crop", ("crop", "crop_h", "crop_w"),
         f"fn.decoders.image_crop(JPEG, crop=({SIDE}, {SIDE}))",
         f"fn.decoders.image_crop(JPEG, crop=({SIDE + 1}, {SIDE + 1}))",
         rf"decoders.image_crop: crop \(crop_h, crop_w\) {WINDOW}"),
    *[Case(op, args, f"fn.{op}(IMG(), {val.format(SIDE)})",
           f"fn.{op}(IMG(), {val.format(SIDE + 1)})",
           rf"{op}: resize_x, resize_y, size, resize_shorter and resize_longer {WINDOW}")
      for op in ("resize", "experimental.resize", "resize_crop_mirror")
      for args, val in [(("resize_x", "resize_y"), "resize_x={0}, resize_y={0}"),
                        (("size",), "size=[{0}, {0}]"), (("resize_shorter",), "resize_shorter={0}"),
                        (("resize_longer",), "resize_longer={0}")]],
    *[Case(op, ("resize_x",), f"fn.{op}(IMG(), resize_x=8)", f"fn.{op}(IMG(), resize_x=1e30)",
           rf"{op}: .* would make an output of 1e\+30x1e\+30")
      for op in ("resize", "experimental.resize", "resize_crop_mirror")],
    # resize_crop_mirror's window is its output: a window larger than the resized image repeats
    # its edges.
    Case("resize_crop_mirror", ("crop",), f"fn.resize_crop_mirror(IMG(), size=8, crop=({SIDE}, {SIDE}))",
         f"fn.resize_crop_mirror(IMG(), size=8, crop=({SIDE + 1}, {SIDE + 1}))",
         rf"resize_crop_mirror: crop \(crop_h, crop_w\) {WINDOW}"),
    Case("resize_crop_mirror", ("crop_h", "crop_w"),
         f"fn.resize_crop_mirror(IMG(), size=8, crop_h={SIDE}, crop_w={SIDE})",
         "fn.resize_crop_mirror(IMG(), size=8, crop_h=1e30, crop_w=1e30)",
         r"resize_crop_mirror: crop \(crop_h, crop_w\) would make an output of 1e\+30x1e\+30"),
    # tensor_resize counts every element of the sample (the channels too): 26754^2 x 3 fits.
    *[Case("tensor_resize", (arg,), f"fn.tensor_resize(IMG(), axes=[0, 1], {val.format(26754)})",
           f"fn.tensor_resize(IMG(), axes=[0, 1], {val.format(26755)})",
           r"tensor_resize: sizes \(scales\) would make an output of 26755x26755x3 "
           r"\(2147490075 elements in sample 0\)")
      for arg, val in [("sizes", "sizes=[{0}, {0}]"), ("scales", "scales=[{0} / 8, {0} / 8]")]],
    Case("tensor_resize", ("sizes",), "fn.tensor_resize(IMG(), sizes=[8], axes=[0])",
         "fn.tensor_resize(IMG(), sizes=[1e30], axes=[0])",
         r"tensor_resize: sizes \(scales\) would make an output of 1\.0\d*e\+30x8x3"),
    *[Case(op, ("size",), f"{call}(IMG(), {extra}size=[{SIDE}, {SIDE}])",
           f"{call}(IMG(), {extra}size=[{SIDE + 1}, {SIDE + 1}])", rf"{op}: size {WINDOW}")
      for op, call, extra in [("rotate", "fn.rotate", "angle=10, "),
                              ("warp_affine", "fn.warp_affine", "matrix=[1, 0, 0, 0, 1, 0], "),
                              ("experimental.warp_perspective", "fn.experimental.warp_perspective",
                               "matrix=[1, 0, 0, 0, 1, 0, 0, 0, 1], "),
                              ("random_resized_crop", "fn.random_resized_crop", "")]],
    Case("paste", ("ratio",), "fn.paste(IMG(), ratio=5792)", "fn.paste(IMG(), ratio=5793)",
         r"paste: ratio and min_canvas_size would make an output of 46344x46344"),
    Case("paste", ("min_canvas_size",), f"fn.paste(IMG(), ratio=1, min_canvas_size={SIDE})",
         f"fn.paste(IMG(), ratio=1, min_canvas_size={SIDE + 1})",
         rf"paste: ratio and min_canvas_size {WINDOW}"),
    Case("multi_paste", ("output_size",),
         f"fn.multi_paste(IMG(), in_ids=[0, 1], output_size=[{SIDE}, {SIDE}])",
         f"fn.multi_paste(IMG(), in_ids=[0, 1], output_size=[{SIDE + 1}, {SIDE + 1}])",
         rf"multi_paste: output_size {WINDOW}"),
    Case("one_hot", ("num_classes",), f"fn.one_hot(fn.constant(idata=[1]), num_classes={LIMIT})",
         f"fn.one_hot(fn.constant(idata=[1]), num_classes={LIMIT + 1})",
         r"one_hot: num_classes would make an output of 2147483648 "),
    Case("one_hot", ("num_classes",),
         "fn.one_hot(fn.constant(idata=[1, 2], shape=[2]), num_classes=2**30 - 1, axis=0)",
         "fn.one_hot(fn.constant(idata=[1, 2], shape=[2]), num_classes=2**30, axis=0)",
         r"one_hot: num_classes would make an output of 1073741824x2 "),
    *[Case("readers.numpy", (arg,),
           f"fn.readers.numpy(file_root=NPY, {val.format(SIDE)}, out_of_bounds_policy='pad')",
           f"fn.readers.numpy(file_root=NPY, {val.format(SIDE + 1)}, out_of_bounds_policy='pad')",
           rf"readers.numpy: the ROI arguments {WINDOW}")
      for arg, val in [("roi_shape", "roi_start=[0, 0], roi_shape=[{0}, {0}]"),
                       ("roi_end", "roi_end=[{0}, {0}]"),
                       ("roi_start", "roi_start=[-{0} + 4, -{0} + 4], roi_end=[4, 4]"),
                       ("rel_roi_shape", "rel_roi_start=[0, 0], rel_roi_shape=[{0} / 4, {0} / 4]"),
                       ("rel_roi_end", "rel_roi_end=[{0} / 4, {0} / 4]"),
                       ("rel_roi_start", "rel_roi_start=[-{0} / 4 + 1, -{0} / 4 + 1], "
                                         "rel_roi_end=[1, 1]")]],
    Case("readers.caffe2", ("num_labels",),
         f"fn.readers.caffe2(path='/nonexistent', label_type=1, num_labels={LIMIT})[0]",
         f"fn.readers.caffe2(path='/nonexistent', label_type=1, num_labels={LIMIT + 1})[0]",
         r"readers.caffe2: num_labels would make an output of 2147483648 "),
    Case("decoders.video", ("sequence_length",),
         f"fn.decoders.video(VIDEO, sequence_length={LIMIT // 768}, pad_mode='constant')",
         f"fn.decoders.video(VIDEO, sequence_length={LIMIT // 768 + 1}, pad_mode='constant')",
         r"decoders.video: sequence_length and end_frame would make an output of 2796203x16x16x3",
         needs="video"),
    Case("decoders.video", ("end_frame",),
         f"fn.decoders.video(VIDEO, start_frame=0, end_frame={LIMIT // 768}, pad_mode='constant')",
         "fn.decoders.video(VIDEO, start_frame=0, end_frame=10**12, pad_mode='constant')",
         r"decoders.video: sequence_length and end_frame would make an output of 1e\+12x16x16x3",
         needs="video"),
    # Searches: more than 100000 tries act as 100000 (an impossible request ends with the
    # fallback window instead of spinning 10^9 times).
    *[Case(op, ("num_attempts",), call.format(100000), call.format(10**9))
      for op, call in [
          ("random_resized_crop", "fn.random_resized_crop(IMG(), size=[4, 4], num_attempts={}, "
                                  "random_area=[0.99, 1.0], random_aspect_ratio=[5, 6])"),
          ("random_crop_generator", "fn.random_crop_generator(fn.constant(idata=[8, 8]), "
                                    "num_attempts={}, random_area=[0.99, 1.0], "
                                    "random_aspect_ratio=[5, 6])[0]"),
          ("decoders.image_random_crop", "fn.decoders.image_random_crop(JPEG, num_attempts={}, "
                                         "random_area=[0.99, 1.0], random_aspect_ratio=[5, 6])"),
          ("random_bbox_crop", "fn.random_bbox_crop(fn.constant(fdata=[0.1, 0.1, 0.2, 0.2], "
                               "shape=[1, 4]), fn.constant(idata=[1], shape=[1]), "
                               "num_attempts={}, thresholds=[0.99], scaling=[0.9, 1.0])[0]")]],
    Case("random_bbox_crop", ("total_num_attempts",),
         "fn.random_bbox_crop(fn.constant(fdata=[0.1, 0.1, 0.2, 0.2], shape=[1, 4]), "
         "fn.constant(idata=[1], shape=[1]), total_num_attempts=100000, thresholds=[0.99], "
         "scaling=[0.9, 1.0])[0]",
         "fn.random_bbox_crop(fn.constant(fdata=[0.1, 0.1, 0.2, 0.2], shape=[1, 4]), "
         "fn.constant(idata=[1], shape=[1]), total_num_attempts=10**9, thresholds=[0.99], "
         "scaling=[0.9, 1.0])[0]"),
]
# The video readers' sizes (the 4-frame 16x16 video): padding makes a clip sequence_length
# frames whatever the file holds; the resize arguments size each frame.
CASES += [
    Case("experimental.readers.video", ("sequence_length",),
         "fn.experimental.readers.video(filenames=[paths['video']], sequence_length=6, "
         "pad_mode='constant')",
         "fn.experimental.readers.video(filenames=[paths['video']], sequence_length=10**8, "
         "pad_mode='constant')",
         r"experimental.readers.video: sequence_length would make an output of 1e\+08x16x16x3",
         needs="video"),
    *[Case("readers.video_resize", args,
           f"fn.readers.video_resize(filenames=[paths['video']], sequence_length=2, "
           f"{val.format(8)})",
           f"fn.readers.video_resize(filenames=[paths['video']], sequence_length=2, "
           f"{val.format(SIDE + 1)})",
           rf"readers.video_resize: resize_x, resize_y, size, resize_shorter and resize_longer "
           rf"{WINDOW}", needs="video")
      for args, val in [(("resize_x", "resize_y"), "resize_x={0}, resize_y={0}"),
                        (("size",), "size=[{0}, {0}]"), (("resize_shorter",), "resize_shorter={0}"),
                        (("resize_longer",), "resize_longer={0}")]],
]
# The readers' own sizes, on every reader (readers.file stands for the rest: the checks are
# their shared base's, src/ops/readers/reader_base.cpp).
READER_SIZES = [
    ("prefetch_queue_depth", 64, 65, "prefetch_queue_depth must be at most 64, got 65"),
    ("num_io_threads", 64, 65, r"num_io_threads must be in \[1, 64\], got 65"),
    ("initial_fill", 2**20, 2**20 + 1, r"initial_fill must be in \[1, 1048576\], got 1048577"),
]
CASES += [Case("readers.file", (arg,), f"fn.readers.file(file_root=FILES, {arg}={at}, "
                                       "random_shuffle=True)[0]",
               f"fn.readers.file(file_root=FILES, {arg}={beyond})[0]", rf"readers.file: {msg}")
          for arg, at, beyond, msg in READER_SIZES]
# 2^32 + 2 is refused, not narrowed to an int's 2 first.
CASES += [Case("readers.file", (arg,), f"fn.readers.file(file_root=FILES, {arg}=2)[0]",
               f"fn.readers.file(file_root=FILES, {arg}=2**32 + 2)[0]",
               rf"readers.file: {arg} must be .*got 4294967298")
          for arg, *_ in READER_SIZES]
READERS = sorted(op for op in _schema.SCHEMAS if _schema.is_reader(op))


def _covered():
    covered = {(c.op, a) for c in CASES for a in c.args}
    covered |= {(op, arg) for op in READERS for arg, *_ in READER_SIZES}
    return covered


def test_every_numeric_argument_is_classified():
    arguments = _numeric_arguments()
    assert len(arguments) > 300, len(arguments)
    missing = [f"{op}: {arg}" for op, arg in arguments if _class(op, arg) is None]
    assert not missing, (f"numeric arguments nobody classified (a size with a case in CASES, "
                         f"bounded elsewhere, or a value): {missing}")


def test_every_size_argument_has_a_case():
    sizes = {(op, arg) for op, arg in _numeric_arguments() if _class(op, arg) == SIZE}
    missing = sorted(f"{op}: {arg}" for op, arg in sizes - _covered())
    assert not missing, f"size arguments without a case: {missing}"
    stale = sorted(f"{op}: {arg}" for op, arg in _covered() if (op, arg) not in sizes)
    assert not stale, f"cases for arguments that are not classified as sizes: {stale}"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The files the cases read: a JPEG, a folder of files, a .npy and (with PyAV) a video."""
    import numpy as np
    from PIL import Image

    root = tmp_path_factory.mktemp("limits")
    paths = {}
    img = root / "jpeg" / "c0"
    img.mkdir(parents=True)
    Image.fromarray(np.full((16, 16, 3), 90, np.uint8)).save(img / "a.jpg")
    paths["jpeg"] = str(root / "jpeg")
    npy = root / "npy"
    npy.mkdir()
    np.save(npy / "a.npy", np.zeros((4, 4), np.float32))
    paths["npy"] = str(npy)
    try:
        from stoker.datasets import make_video_folder
        paths["video"] = make_video_folder(str(root / "video"), num_videos=1, num_classes=1,
                                           frames=4, size=(16, 16))[0]
    except ImportError:
        paths["video"] = None
    return paths


# Peak memory: VmHWM, this process's own (ru_maxrss keeps the forking parent's across exec: a
# test process of 2 GB would read as that).
PEAK_MB = """
def peak_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) >> 10
"""

RUNNER = """
import json, re, resource, sys, time
import numpy as np
import stoker
from stoker import fn, types
""" + PEAK_MB + """

paths = json.loads(sys.argv[1])
JPEG_ROOT, FILES, NPY = paths["jpeg"], paths["jpeg"], paths["npy"]

def IMG():
    return fn.constant(idata=[7], shape=[8, 8, 3], layout="HWC", dtype=types.UINT8)

for key, expr in json.loads(sys.argv[2]):
    t = time.time()
    p = stoker.Pipeline(batch_size=2, num_threads=2, device_id=None, prefetch_queue_depth=1)
    try:
        with p:
            JPEG = fn.readers.file(file_root=JPEG_ROOT)[0]
            VIDEO = fn.readers.file(files=[paths["video"]])[0] if paths["video"] else None
            p.set_outputs(eval(expr))
        p.build()
        p.run()
        result = {"outcome": "ok"}
    except Exception as e:
        result = {"outcome": type(e).__name__, "message": str(e)}
    del p
    result.update(key=key, seconds=time.time() - t,
                  mb=peak_mb())
    print(json.dumps(result), flush=True)
"""


def _groups():
    ops = []
    for c in CASES:
        if c.op not in ops:
            ops.append(c.op)
    return ops


@pytest.mark.parametrize("op", _groups())
def test_arguments_at_and_beyond_their_limits(op, data, address_space_cap):
    cases = [c for c in CASES if c.op == op and (c.needs != "video" or data["video"])]
    if not cases:
        pytest.skip("needs PyAV for its video")
    runs = [(f"{k} at", c.at) for k, c in enumerate(cases)]
    runs += [(f"{k} beyond", c.beyond) for k, c in enumerate(cases)]
    r = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(data), json.dumps(runs)],
                       capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: __import__("resource").setrlimit(
                           __import__("resource").RLIMIT_AS, (CAP, CAP)))
    results = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            res = json.loads(line)
            results[res["key"]] = res
    assert r.returncode == 0, f"exit {r.returncode} after {sorted(results)}:\n{r.stderr[-3000:]}"
    for k, c in enumerate(cases):
        at, beyond = results[f"{k} at"], results[f"{k} beyond"]
        where = f"{op} {c.args}"
        # At the limit: runs, or fails without the range error (an allocation the 4 GiB cap
        # refuses is cheap).
        assert at["outcome"] == "ok" or "would make an output" not in at["message"] \
            and "must be" not in at["message"], (where, c.at, at)
        if c.refused:
            assert beyond["outcome"] == "ValueError", (where, c.beyond, beyond)
            assert re.search(c.refused, beyond["message"]), (where, c.refused, beyond["message"])
        else:
            assert beyond["outcome"] == "ok", (where, c.beyond, beyond)
        for res in (at, beyond):
            assert res["seconds"] < 10, (where, res)
            assert res["mb"] < 1500, (where, res)  # no multi-GB allocation was filled
