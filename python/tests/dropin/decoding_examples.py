# DALI's examples of image decoding and of the operators that follow it, each with the arguments
# of its example, on the same photos:
# - "Image Decoder examples" (docs/examples/image_processing/decoder_examples.ipynb):
#   decoders.image, decoders.image_crop, decoders.image_slice, decoders.image_random_crop, with
#   peek_image_shape (the shapes the decoders start from);
# - "Color Space Conversion" (docs/examples/image_processing/color_space_conversion.ipynb) and
#   the colour operators of the augmentation gallery (hue, saturation, brightness, contrast),
#   with "Normalize" (docs/examples/general/normalize.ipynb);
# - sequences (docs/examples/sequence_processing): element_extract, sequence_rearrange and
#   per_frame arguments ("Using per-frame operator to specify arguments to video processing
#   operators": gaussian_blur, rotate), on clips panned across the photos;
# - "Python Operator" (docs/examples/custom_operations/python_operator.ipynb): its edit_images;
# - filter (its documentation's kernels), dump_image, and decoders.inflate (its documentation's
#   sequence example: GPU only in DALI, so only in the GPU branch).
# Written for nvidia.dali; the data folder and device come from the environment.
import glob
import os
import tempfile

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 4
RESULTS, COMPARE = {}, {}


def collect(prefix, names, outputs):
    for name, batch in zip(names, outputs):
        batch = batch.as_cpu() if hasattr(batch, "as_cpu") else batch
        samples = RESULTS.setdefault(prefix + name, [])  # (the iterations one after another)
        samples += [np.array(batch.at(i)) for i in range(len(batch))]
        RESULTS[prefix + name + "_layout"] = batch.layout()


# -- Image Decoder examples -------------------------------------------------------------------
# The notebook defines each pipeline with a `device` argument ("cpu" or "mixed"); here one
# pipeline holds all its decoders.

@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12)
def image_decoder_pipeline(device="cpu"):
    jpegs, labels = fn.readers.file(file_root=image_dir)
    images = fn.decoders.image(jpegs, device=device, output_type=types.RGB)
    crop = fn.decoders.image_crop(jpegs, device=device, crop=(224, 224), crop_pos_x=0.3,
                                  crop_pos_y=0.6)
    crop_gray = fn.decoders.image_crop(jpegs, device=device, output_type=types.GRAY,
                                       crop_w=160, crop_h=96)
    # The slice window given as fractions of the image (the defaults normalized_anchor and
    # normalized_shape), and in pixels.
    rel_slice = fn.decoders.image_slice(jpegs, types.Constant(np.array([0.1, 0.25], np.float32)),
                                        types.Constant(np.array([0.5, 0.4], np.float32)),
                                        device=device)
    abs_slice = fn.decoders.image_slice(jpegs, types.Constant(np.array([40, 16], np.int32)),
                                        types.Constant(np.array([200, 120], np.int32)),
                                        normalized_anchor=False, normalized_shape=False,
                                        device=device)
    # The notebook's random window: anchors and shapes drawn per sample.
    anchor = fn.random.uniform(range=[0.05, 0.15], shape=(2,))
    shape = fn.random.uniform(range=[0.5, 0.7], shape=(2,))
    random_slice = fn.decoders.image_slice(jpegs, anchor, shape, device=device)
    random_crop = fn.decoders.image_random_crop(jpegs, device=device, random_area=[0.1, 1.0],
                                                random_aspect_ratio=[0.8, 1.25],
                                                num_attempts=100)
    return (images, crop, crop_gray, rel_slice, abs_slice, random_slice, random_crop,
            fn.peek_image_shape(jpegs), labels)


DECODER_NAMES = ["image", "image_crop", "image_crop_gray", "image_slice", "image_slice_pixels",
                 "image_slice_random", "image_random_crop", "peek_image_shape", "labels"]
pipe = image_decoder_pipeline(device="cpu")
pipe.build()
for _ in range(2):  # 8 photos
    collect("", DECODER_NAMES, pipe.run())
# Random windows: the random streams differ by design (docs/dali_differences.md).
COMPARE["image_slice_random"] = COMPARE["image_random_crop"] = "kind"

if device_id is not None:  # the notebook's device="mixed" cells
    pipe = image_decoder_pipeline(device="mixed")
    pipe.build()
    for _ in range(2):
        collect("mixed_", DECODER_NAMES, pipe.run())
    for name in ("image", "image_crop", "image_crop_gray", "image_slice", "image_slice_pixels"):
        # nvJPEG's IDCT (hardware and CUDA decoders, split each its own way) against
        # libjpeg-turbo: within 1.5 levels on average (test_parity_decoders.py).
        COMPARE["mixed_" + name] = ("mean_abs", 1.5)
    COMPARE["mixed_image_slice_random"] = COMPARE["mixed_image_random_crop"] = "kind"


# -- Colour: Color Space Conversion, hue, saturation, brightness, contrast, normalize ---------

conversions = [
    ("rgb_to_bgr", types.RGB, types.BGR),
    ("rgb_to_ycbcr", types.RGB, types.YCbCr),
    ("rgb_to_gray", types.RGB, types.GRAY),
]


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12)
def color_pipeline(on_gpu=False):
    files, labels = fn.readers.file(file_root=image_dir)
    images = fn.decoders.image_crop(files, crop=(128, 160), crop_pos_x=0.5, crop_pos_y=0.5)
    images = images.gpu() if on_gpu else images
    converted = [fn.color_space_conversion(images, image_type=inp_t, output_type=out_t)
                 for _, inp_t, out_t in conversions]
    floats = fn.cast(images, dtype=types.FLOAT)
    return tuple(converted) + (
        fn.hue(images, hue=-45.0),
        fn.saturation(images, saturation=0.4),
        fn.brightness(images, brightness=1.4),
        fn.brightness(images, brightness=0.8, brightness_shift=0.1),
        fn.contrast(images, contrast=1.6),
        fn.contrast(images, contrast=0.5, contrast_center=64),
        # Normalize: each image by its own mean and deviation over H and W; the batch's
        # statistics over every axis; given mean and stddev with scale, shift and an integer type.
        fn.normalize(floats, axes=[0, 1]),
        fn.normalize(floats, batch=True),
        fn.normalize(floats, mean=128.0, stddev=64.0, scale=32.0, shift=128.0,
                     dtype=types.UINT8),
    )


COLOR_NAMES = [c[0] for c in conversions] + [
    "hue", "saturation", "brightness", "brightness_shift", "contrast", "contrast_center",
    "normalize_per_image", "normalize_batch", "normalize_uint8"]
# (test_parity_image_ops.py) YCbCr and gray: fixed-point against float matrices; hue and
# saturation: the same YIQ-space matrix, rounded apart; contrast: float rounding of the same
# formula. Normalize's floats: the sums added in another order.
COLOR_TOLERANCE = {"rgb_to_ycbcr": 1, "rgb_to_gray": 1, "hue": 1, "saturation": 1,
                   "contrast": 1, "contrast_center": 1, "normalize_per_image": 1e-4,
                   "normalize_batch": 1e-4, "normalize_uint8": 1}

pipe = color_pipeline()
pipe.build()
collect("", COLOR_NAMES, pipe.run())
for name, atol in COLOR_TOLERANCE.items():
    COMPARE[name] = ("tolerance", atol)

if device_id is not None:  # the notebook's GPU conversions, and the other operators on the GPU
    pipe = color_pipeline(on_gpu=True)
    pipe.build()
    collect("gpu_", COLOR_NAMES, pipe.run())
    for name in COLOR_NAMES:
        # DALI's GPU backends round apart from its CPU ones (brightness: 2% of values a level
        # apart, docs/dali_differences.md); stoker's GPU equals its CPU.
        atol = COLOR_TOLERANCE.get(name, 1)
        COMPARE["gpu_" + name] = ("tolerance", 1e-3 if atol < 1 else atol)


# -- Sequences: element_extract, sequence_rearrange, per-frame arguments ----------------------
# A clip of 4 frames panned across each photo (FHWC), as the video examples' sequences.

frames = 4
blur_sigmas = np.linspace(0.5, 2.0, frames, dtype=np.float32)
angles = np.linspace(-12.0, 12.0, frames, dtype=np.float32)
gains = np.array([0.6, 0.9, 1.2, 1.5], np.float32)


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12)
def sequence_pipeline(on_gpu=False):
    jpegs, _ = fn.readers.file(file_root=image_dir)
    clip = fn.stack(*[fn.decoders.image_crop(jpegs, crop=(96, 128), crop_pos_x=0.2 + 0.15 * k,
                                             crop_pos_y=0.5) for k in range(frames)],
                    axis=0, axis_name="F")
    clip = clip.gpu() if on_gpu else clip
    first, last = fn.element_extract(clip, element_map=[0, frames - 1])
    reversed_clip = fn.sequence_rearrange(clip, new_order=[3, 2, 1, 0, 0])
    sigma = fn.external_source(source=lambda: [blur_sigmas] * batch_size, batch=True)
    angle = fn.external_source(source=lambda: [angles] * batch_size, batch=True)
    gain = fn.external_source(source=lambda: [gains] * batch_size, batch=True)
    return (first, last, reversed_clip,
            fn.brightness(clip, brightness=fn.per_frame(gain)),
            fn.gaussian_blur(clip, sigma=fn.per_frame(sigma)),
            fn.rotate(clip, angle=fn.per_frame(angle), keep_size=True, fill_value=0))


SEQ_NAMES = ["element_extract_first", "element_extract_last", "sequence_rearrange",
             "per_frame_brightness", "per_frame_gaussian_blur", "per_frame_rotate"]
pipe = sequence_pipeline()
pipe.build()
collect("", SEQ_NAMES, pipe.run())
# Each frame is an image to both (test_parity_sequences.py): separable float convolution
# rounds a level apart; bilinear rotation maps in float32 in DALI, double in stoker.
COMPARE["per_frame_gaussian_blur"] = COMPARE["per_frame_rotate"] = ("tolerance", 1)

if device_id is not None:
    pipe = sequence_pipeline(on_gpu=True)
    pipe.build()
    collect("gpu_", SEQ_NAMES, pipe.run())
    COMPARE["gpu_per_frame_brightness"] = ("tolerance", 1)
    COMPARE["gpu_per_frame_gaussian_blur"] = ("tolerance", 1)
    # (test_parity_image_ops.py: bilinear rotation within 1 level but for 1% of values)
    COMPARE["gpu_per_frame_rotate"] = ("mean_abs", 0.05)


# -- Python Operator: edit_images swaps a circle between two images ---------------------------

def edit_images(image1, image2):
    assert image1.shape == image2.shape
    h, w, c = image1.shape
    y, x = np.ogrid[0:h, 0:w]
    mask = (x - w / 2) ** 2 + (y - h / 2) ** 2 > h * w / 9
    result1 = np.copy(image1)
    result1[mask] = image2[mask]
    result2 = np.copy(image2)
    result2[mask] = image1[mask]
    return result1, result2


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=99,
              exec_async=False, exec_pipelined=False)
def python_function_pipeline():
    # The notebook's two readers shuffle, and it resizes both images to 300x300; here the
    # second reader reads the other half of the list (shuffled orders differ by design between
    # the libraries), and a 256x256 crop gives both images one shape, so that the function's
    # inputs are DALI's exactly (an antialiased downscale's outermost rows and columns differ:
    # DALI repeats the edge pixels under the filter, stoker renormalises the taps inside).
    jpegs1, _ = fn.readers.file(file_root=image_dir)
    jpegs2, _ = fn.readers.file(file_root=image_dir, shard_id=1, num_shards=2)
    im1 = fn.decoders.image_crop(jpegs1, crop=(256, 256))
    im2 = fn.decoders.image_crop(jpegs2, crop=(256, 256))
    res1, res2 = fn.python_function(im1, im2, function=edit_images, num_outputs=2)
    return im1, im2, res1, res2


pipe = python_function_pipeline()
pipe.build()
collect("python_function_", ["input1", "input2", "res1", "res2"], pipe.run())
# The function ran on each pair of samples, as in DALI.
RESULTS["python_function_swapped"] = [
    np.array_equal(r1, edit_images(a, b)[0]) and np.array_equal(r2, edit_images(a, b)[1])
    for a, b, r1, r2 in zip(*(RESULTS["python_function_" + n]
                              for n in ("input1", "input2", "res1", "res2")))]


# -- filter: convolution with the documentation's kernels -------------------------------------

sharpen = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
box_blur = np.full((5, 5), 1 / 25, np.float32)
edges = np.array([[-1, -1, -1], [-1, 8, -1], [-1, -1, -1]], np.float32)


def cpu_constant(value, **kwargs):
    # Filters and fill values given on the host, for the GPU operator too (a numpy array given
    # as an input would become a constant on the operator's device).
    return types.Constant(value, device="cpu", **kwargs)


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12)
def filter_pipeline(on_gpu=False):
    jpegs, _ = fn.readers.file(file_root=image_dir)
    images = fn.decoders.image_crop(jpegs, crop=(120, 150), crop_pos_x=0.4, crop_pos_y=0.4)
    images = images.gpu() if on_gpu else images
    sharpen_k, blur_k, edges_k = (cpu_constant(k) for k in (sharpen, box_blur, edges))
    return (fn.filter(images, sharpen_k),
            fn.filter(images, blur_k, border="reflect_1001"),
            fn.filter(images, edges_k, cpu_constant(255, dtype=types.UINT8), border="constant",
                      dtype=types.FLOAT),
            fn.filter(images, blur_k, mode="valid"),
            fn.filter(images, sharpen_k, border="wrap", anchor=[0, 0]))


FILTER_NAMES = ["filter_sharpen", "filter_blur_reflect", "filter_edges_float",
                "filter_blur_valid", "filter_wrap_anchor"]
pipe = filter_pipeline()
pipe.build()
collect("", FILTER_NAMES, pipe.run())

if device_id is not None:
    pipe = filter_pipeline(on_gpu=True)
    pipe.build()
    collect("gpu_", FILTER_NAMES, pipe.run())
    for name in FILTER_NAMES:
        # DALI's GPU filter (its own kernel) against stoker's, which equals DALI's CPU one.
        COMPARE["gpu_" + name] = ("tolerance", 1e-3 if name == "filter_edges_float" else 1)


# -- dump_image: the PPM files it writes, named <iteration>-<suffix>-<sample>.ppm -------------

# Every iteration overwrites the files of the last, and how many iterations run ahead of run()
# depends on timing: an epoch of exactly one batch makes every iteration write the same files.
dump_files = sorted(glob.glob(os.path.join(image_dir, "*", "*.jpg")))[:batch_size]


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12,
              prefetch_queue_depth=1)
def dump_pipeline(on_gpu=False):
    jpegs, _ = fn.readers.file(files=dump_files)
    images = fn.decoders.image_crop(jpegs, crop=(32, 48), crop_pos_x=0.7, crop_pos_y=0.2)
    gray = fn.decoders.image_crop(jpegs, crop=(20, 30), output_type=types.GRAY)
    if on_gpu:
        images, gray = images.gpu(), gray.gpu()
    return (fn.dump_image(images, suffix="gpu_rgb" if on_gpu else "rgb"),
            fn.dump_image(gray, suffix="gpu_gray" if on_gpu else "gray"))


cwd = os.getcwd()
dump_dir = tempfile.mkdtemp(prefix="dump_image_")
os.chdir(dump_dir)  # dump_image writes into the working folder
try:
    for on_gpu in ([False, True] if device_id is not None else [False]):
        pipe = dump_pipeline(on_gpu=on_gpu)
        pipe.build()
        collect("gpu_dump_image_" if on_gpu else "dump_image_", ["rgb", "gray"], pipe.run())
        del pipe  # (iterations run ahead may still be writing: they finish in this folder)
    RESULTS["dump_image_files"] = {
        f: np.fromfile(f, np.uint8) for f in sorted(os.listdir(dump_dir))}
finally:
    os.chdir(cwd)
    for f in os.listdir(dump_dir):
        os.remove(os.path.join(dump_dir, f))
    os.rmdir(dump_dir)


# -- decoders.inflate: DALI's documented sequence example (GPU only in DALI) ------------------
# Each frame of a sequence compressed on its own (LZ4 blocks), the frames of a sample
# concatenated; chunk_sizes, shape and layout give back the sequences. The frames: the panned
# clips above (the same in both libraries), of 3, 1, 2 and 4 frames.

if device_id is not None:
    try:
        import lz4.block
    except ImportError:  # (the same in both runs: no inflate results then)
        lz4 = None
    if lz4 is not None:
        seqs = [clip[:n] for clip, n in zip(RESULTS["sequence_rearrange"], (3, 1, 2, 4))]
        blocks = [[lz4.block.compress(f.tobytes(), store_size=False) for f in s] for s in seqs]

        @pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id)
        def inflate_sequence_pipeline():
            compres_seq = fn.external_source(
                lambda: [np.frombuffer(b"".join(b), np.uint8) for b in blocks], batch=True)
            uncompres_hwc_shape = fn.external_source(
                lambda: [np.array(s.shape[1:], np.int32) for s in seqs], batch=True)
            compres_chunk_sizes = fn.external_source(
                lambda: [np.array([len(x) for x in b], np.int32) for b in blocks], batch=True)
            return fn.decoders.inflate(compres_seq.gpu(), chunk_sizes=compres_chunk_sizes,
                                       shape=uncompres_hwc_shape, layout="HWC",
                                       sequence_axis_name="F")

        pipe = inflate_sequence_pipeline()
        pipe.build()
        collect("gpu_", ["inflate"], pipe.run())
        RESULTS["gpu_inflate_is_input"] = [np.array_equal(a, s) for a, s in
                                           zip(RESULTS["gpu_inflate"], seqs)]
