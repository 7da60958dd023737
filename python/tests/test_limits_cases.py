"""Limits of the operators' size arguments (test_limits.py classifies every numeric argument and
says why the others need no case): each size has a case here, run at its limit and one past it
in a subprocess with a timeout and RLIMIT_AS capped at 4 GiB. At the limit the pipeline builds
and runs, or fails cheaply (an allocation the cap refuses); beyond it, a ValueError names the
argument, at build or at the first run: never a hang, a crash or a multi-GB allocation."""

import json
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

from stoker import _schema

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_AS is Linux's", allow_module_level=True)

from test_limits import CAP, PEAK_MB, SIZE, classify, numeric_arguments

LIMIT = 2**31 - 1  # elements (pixels for image sizes) an argument may ask for per sample
SIDE = 46340  # the largest square side within LIMIT (46341^2 > LIMIT)


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
VOL = "fn.constant(idata=[7], shape=[8, 8, 8, 3], layout='DHWC', dtype=types.UINT8)"
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
    Case("crop", ("crop_d",),
         f"fn.crop({VOL}, crop_d=1290, crop_h=1290, crop_w=1290, out_of_bounds_policy='pad')",
         f"fn.crop({VOL}, crop_d=1291, crop_h=1291, crop_w=1291, out_of_bounds_policy='pad')",
         r"crop: crop \(crop_d, crop_h, crop_w\) would make an output of 1291x1291x1291"),
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
    # Volumes (an 8x8x8x3 DHWC constant): resize_z scales the 3 extents, the limit counts voxels.
    *[Case(op, ("resize_z",), f"fn.{op}({VOL}, resize_z=1290)", f"fn.{op}({VOL}, resize_z=1291)",
           rf"{op}: resize_x, resize_y, resize_z, size, resize_shorter and resize_longer would "
           rf"make an output of 1291x1291x1291 \(2151685171 elements")
      for op in ("resize", "experimental.resize", "resize_crop_mirror")],
    Case("resize_crop_mirror", ("crop_d",),
         f"fn.resize_crop_mirror({VOL}, size=8, crop_d=1290, crop_h=1290, crop_w=1290)",
         f"fn.resize_crop_mirror({VOL}, size=8, crop_d=1291, crop_h=1291, crop_w=1291)",
         r"resize_crop_mirror: crop \(crop_d, crop_h, crop_w\) would make an output of "
         r"1291x1291x1291"),
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
# The spectral operators: FFTs of at most 2^20 points; spectrogram's output (nfft / 2 + 1) x
# windows and mel_filter_bank's nfilter x frames checked as any output.
SIGNAL = "fn.constant(fdata=[1.0] * 8)"
CASES += [
    Case("spectrogram", ("nfft",),
         f"fn.spectrogram({SIGNAL}, nfft=2**20, window_length=4, window_step=16)",
         f"fn.spectrogram({SIGNAL}, nfft=2**20 + 1, window_length=4, window_step=16)",
         r"spectrogram: nfft must be at most 1048576, got 1048577"),
    Case("spectrogram", ("nfft",),
         "fn.spectrogram(fn.constant(fdata=[1.0] * 4094), nfft=2**20, window_length=4, "
         "window_step=1)",
         "fn.spectrogram(fn.constant(fdata=[1.0] * 4096), nfft=2**20, window_length=4, "
         "window_step=1)",
         r"spectrogram: nfft, window_length and window_step would make an output of 524289x4097"),
    Case("spectrogram", ("window_length",),
         f"fn.spectrogram({SIGNAL}, window_length=2**20, window_step=16)",
         f"fn.spectrogram({SIGNAL}, window_length=2**40, window_step=16)",
         r"spectrogram: window_length \(the FFT's size when nfft is not given\) must be at most "
         r"1048576"),
    Case("power_spectrum", ("nfft",), f"fn.power_spectrum({SIGNAL}, nfft=2**20)",
         f"fn.power_spectrum({SIGNAL}, nfft=2**20 + 1)",
         r"power_spectrum: nfft must be at most 1048576, got 1048577"),
    Case("mel_filter_bank", ("nfilter",),
         f"fn.mel_filter_bank(fn.constant(fdata=[1.0, 1.0], shape=[2, 1], layout='ft'), "
         f"nfilter={LIMIT})",
         f"fn.mel_filter_bank(fn.constant(fdata=[1.0, 1.0], shape=[2, 1], layout='ft'), "
         f"nfilter={LIMIT + 1})",
         r"mel_filter_bank: nfilter would make an output of 2147483648x1 "),
]
# Audio: the resampling ratio sets the output's length (8 input samples here; a WAV of 8
# frames at 8 kHz for decoders.audio).
WAV = ("fn.constant(idata=list(b'RIFF4\\0\\0\\0WAVEfmt \\x10\\0\\0\\0\\x01\\0\\x01\\0"
       "@\\x1f\\0\\0\\x80>\\0\\0\\x02\\0\\x10\\0data\\x10\\0\\0\\0' + bytes(16)), "
       "dtype=types.UINT8)")
CASES += [
    Case("audio_resample", ("scale",), f"fn.audio_resample({SIGNAL}, scale=2**20)",
         f"fn.audio_resample({SIGNAL}, scale=2**40)",
         r"audio_resample: scale would make an output of 8796093022208 "),
    Case("audio_resample", ("in_rate", "out_rate"),
         f"fn.audio_resample({SIGNAL}, in_rate=1.0, out_rate=2**20)",
         f"fn.audio_resample({SIGNAL}, in_rate=2**-20, out_rate=2**20)",
         r"audio_resample: in_rate and out_rate would make an output of 8796093022208 "),
    Case("audio_resample", ("out_length",), f"fn.audio_resample({SIGNAL}, out_length=2**20)",
         f"fn.audio_resample({SIGNAL}, out_length={LIMIT + 1})",
         r"audio_resample: out_length would make an output of 2147483648 "),
    Case("decoders.audio", ("sample_rate",),
         f"fn.decoders.audio({WAV}, sample_rate=8000 * 2**20)[0]",
         f"fn.decoders.audio({WAV}, sample_rate=2**44)[0]",
         r"decoders.audio: sample_rate would make an output of 17592186045x1 "),
    Case("readers.nemo_asr", ("sample_rate",),
         "fn.readers.nemo_asr(manifest_filepaths=[paths['nemo']], sample_rate=8000 * 2**20)[0]",
         "fn.readers.nemo_asr(manifest_filepaths=[paths['nemo']], sample_rate=2**44)[0]",
         r"readers.nemo_asr: sample_rate would make an output of 17592186045x1 "),
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


def test_every_size_argument_has_a_case():
    sizes = {(op, arg) for op, arg in numeric_arguments() if classify(op, arg) == SIZE}
    missing = sorted(f"{op}: {arg}" for op, arg in sizes - _covered())
    assert not missing, f"size arguments without a case: {missing}"
    stale = sorted(f"{op}: {arg}" for op, arg in _covered() if (op, arg) not in sizes)
    assert not stale, f"cases for arguments that are not classified as sizes: {stale}"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The files the cases read: a JPEG, a folder of files, a .npy, a NeMo manifest of a WAV and
    (with PyAV) a video."""
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
    # An utterance of 8 frames at 8 kHz (WAV's bytes above) and its NeMo manifest.
    (root / "a.wav").write_bytes(b"RIFF4\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0@\x1f\0\0\x80>\0\0"
                                 b"\x02\0\x10\0data\x10\0\0\0" + bytes(16))
    (root / "m.json").write_text('{"audio_filepath": "%s", "duration": 0.001}\n'
                                 % (root / "a.wav"))
    paths["nemo"] = str(root / "m.json")
    try:
        from stoker.datasets import make_video_folder
        paths["video"] = make_video_folder(str(root / "video"), num_videos=1, num_classes=1,
                                           frames=4, size=(16, 16))[0]
    except ImportError:
        paths["video"] = None
    return paths


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
