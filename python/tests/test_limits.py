"""Limits: every pipeline option and operator argument with a size meaning, at and beyond its
documented range (docs/design/pipeline.md, "Ranges"). At the limit the pipeline builds and runs,
or fails cheaply (an allocation the address-space cap refuses); beyond it, a ValueError names
the option or argument, at build or at the first run: never a hang, a crash or a multi-GB
allocation. The cases run in subprocesses with a timeout and RLIMIT_AS capped at 4 GiB. This
module holds the pipeline options' cases and the classification of the operators' arguments;
test_limits_cases.py holds the operators' size cases.

How the arguments are found: by walking the native schemas (stoker._schema.SCHEMAS, as
test_parity_arguments.py walks DALI's). Every numeric argument (int, float and lists of them) of
every public operator is classified below, by name or by (operator, name): a size (it sets how
large an output is, how many threads start, how long a search runs: it has a case in
test_limits_cases.py's CASES), bounded elsewhere (a reason), or a value (not a size). An
argument an operator gains that nobody classified fails
test_every_numeric_argument_is_classified, and a size without a case fails
test_limits_cases.py's test_every_size_argument_has_a_case; the pipeline options are walked the
same way (stoker.PipelineOptions.names())."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import stoker
from stoker import _schema, fn

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_AS is Linux's", allow_module_level=True)

CAP = 4 << 30  # RLIMIT_AS of the subprocesses

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


# Peak memory: VmHWM, this process's own (ru_maxrss keeps the forking parent's across exec: a
# test process of 2 GB would read as that).
PEAK_MB = """
def peak_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) >> 10
"""


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
# Classes: SIZE (has cases in test_limits_cases.py); a reason string starting with "bounded" (a
# size checked or bounded elsewhere); VALUE (not a size). By argument name, then (operator,
# name) overrides.
SIZE, VALUE = "size", "value"
BY_NAME = {
    # sizes of outputs, threads, queues and searches
    "shape": SIZE, "align": SIZE, "crop": SIZE, "crop_h": SIZE, "crop_w": SIZE,
    "resize_x": SIZE, "resize_y": SIZE, "resize_z": SIZE, "resize_shorter": SIZE,
    "resize_longer": SIZE, "crop_d": SIZE,
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
        "classes", "contrast", "contrast_center", "crop_pos_x", "crop_pos_y", "crop_pos_z", "criteria", "ddof",
        "depthwise", "element_map", "epsilon", "fdata", "fill_value", "fill_values", "flip_x", "flip_y",
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
    # They take images only, which have no depth: crop_d is ignored there (as DALI's).
    ("crop_mirror_normalize", "crop_d"): "bounded: ignored (images have no depth)",
    ("decoders.image_crop", "crop_d"): "bounded: ignored (images have no depth)",
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
    ("readers.video_resize", "resize_z"): "bounded: ignored, the frames being 2-D (as DALI's)",
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
    # the spectral and signal operators (test_spectral.py)
    **{("spectrogram", a): SIZE for a in ("nfft", "window_length")},
    ("power_spectrum", "nfft"): SIZE, ("mel_filter_bank", "nfilter"): SIZE,
    ("spectrogram", "window_step"): "bounded: where windows start; the output (nfft / 2 + 1) x "
                                    "windows is checked with nfft",
    ("spectrogram", "window_fn"): "bounded: must hold window_length values, checked",
    ("mfcc", "n_mfcc"): "bounded: at most the axis' length (as DALI); the DCT table n_mfcc x "
                        "length past 2^31 - 1 values refused",
    ("nonsilent_region", "window_length"): "bounded: at most the signal's length (as DALI); the "
                                           "work and scratch are the signal's",
    ("nonsilent_region", "reset_interval"): "bounded: -1 or positive, checked; how often the "
                                            "running sum restarts",
    **{(op, a): VALUE for op, names in (
        ("spectrogram", ("power",)), ("power_spectrum", ("power",)),
        ("mel_filter_bank", ("sample_rate", "freq_low", "freq_high")),
        ("to_decibels", ("multiplier", "reference", "cutoff_db")),
        ("mfcc", ("dct_type", "lifter")), ("nonsilent_region", ("cutoff_db", "reference_power")),
        ("preemphasis_filter", ("preemph_coeff",))) for a in names},
    # audio decoding and resampling (test_audio_decode.py, test_audio_resample.py): the ratio
    # sets the output's length
    **{("audio_resample", a): SIZE for a in ("in_rate", "out_rate", "scale", "out_length")},
    ("decoders.audio", "sample_rate"): SIZE,
    ("readers.nemo_asr", "sample_rate"): SIZE,
    **{("readers.nemo_asr", a): "value: utterances outside the limits are left out"
       for a in ("min_duration", "max_duration")},
    **{(op, "quality"): "bounded: 0 to 100, checked; a window table of at most 64 x 64 + 1 "
                        "values" for op in ("audio_resample", "decoders.audio", "readers.nemo_asr")},
}
NUMERIC = {"int", "float", "list of int", "list of float"}


def numeric_arguments():
    return sorted((op, a["name"]) for op, s in _schema.SCHEMAS.items() if _schema.public(op)
                  for a in s["args"] if a["type"] in NUMERIC)


def classify(op, arg):
    return BY_OP.get((op, arg), BY_NAME.get(arg))


def test_every_numeric_argument_is_classified():
    arguments = numeric_arguments()
    assert len(arguments) > 300, len(arguments)
    missing = [f"{op}: {arg}" for op, arg in arguments if classify(op, arg) is None]
    assert not missing, (f"numeric arguments nobody classified (a size with a case in CASES, "
                         f"bounded elsewhere, or a value): {missing}")
