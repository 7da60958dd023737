"""The native operator schemas (``_stoker.schemas()``, from src/ops/) and every Python special
case over them, each declared once here.

The schemas drive ``fn`` (a function per operator), ``ops`` (a class per operator),
``tools.reference`` (docs/operators.md and the stubs), the pipeline's reader sharding and
serialize()'s checks, so a new native operator needs nothing in Python. What Python adds is
declared below, and read by those modules:

* ``WRAPPERS``: fn functions written in Python (over a native schema, as external_source, or a
  composition of native operators, as ssd_random_crop), with the ops class and deprecation
  they imply;
* ``CLASS_NAMES``: ops class names that are not the CamelCase of the fn name;
* ``LEGACY_NAMES``: DALI's old ops class names, each with its operator and default device
  (DALI 2.4's deprecated names come from the schemas' ``deprecated_names``);
* ``TRANSLATIONS``: arguments of DALI's first releases and DALI 2.4's deprecated spellings,
  rewritten into today's (by ``fn`` and ``ops``);
* ``PYTHON_FED``: operators that take Python data or run Python code (not serializable);
* ``DALI_TUNING_ARGS``: arguments accepted for DALI's scripts and ignored.

This module imports nothing of stoker's but the native module, so that every other module may
read it (it is the bottom of the Python layer's imports)."""

import importlib
import inspect
from dataclasses import dataclass

from stoker import _stoker

# name -> schema, in registry order. Loaded once: the registry is fixed when the module loads.
SCHEMAS = {s["name"]: s for s in _stoker.schemas()}


def public(name):
    """Whether users call the operator (not `_conditional.*` and the like, which Python's own
    features insert: `if` statements on pipeline values, subscripts)."""
    return not name.startswith("_")


def arg_names(name):
    """The native schema's argument names of operator `name`."""
    return {a["name"] for a in SCHEMAS[name]["args"]}


def accepted_args(name):
    """Every argument fn.<name> takes: its schema's or its Python wrapper's, the old spellings
    it rewrites (TRANSLATIONS) and DALI's tuning arguments it ignores."""
    known = WRAPPERS[name].accepts() if name in WRAPPERS else arg_names(name)
    old = {a for t in TRANSLATIONS if t.applies(name, known) for a in t.args}
    return known | old | DALI_TUNING_ARGS


# -- readers ------------------------------------------------------------------------------
SHARD_ARGS = frozenset({"shard_id", "num_shards"})


def is_reader(name):
    """Whether operator `name` reads a sharded dataset: it takes shard_id and num_shards (so a
    distributed job's process gives it its shard when the user did not)."""
    return name in SCHEMAS and SHARD_ARGS <= arg_names(name)


# -- DALI's tuning arguments ----------------------------------------------------------------
# Arguments that tune DALI's own machinery (its memory pre-allocation, thread pinning, stage
# splitting, output size hints) and have nothing to tune here: accepted, so that DALI scripts
# run unchanged, and ignored where the operator does not take them (docs/dali_differences.md).
DALI_TUNING_ARGS = frozenset({
    "bytes_per_sample_hint", "preserve", "device_memory_padding", "host_memory_padding",
    "device_memory_padding_jpeg2k", "host_memory_padding_jpeg2k", "preallocate_width_hint",
    "preallocate_height_hint", "affine", "split_stages", "use_chunk_allocator",
    "use_fast_idct", "memory_stats", "use_batched_decode", "minibatch_size",
    "skip_cached_images", "cache_size", "cache_threshold", "cache_type", "cache_debug",
    "cache_batch_copy", "prefetch_queue_depth_hint", "tensor_init_bytes", "temp_buffer_hint",
    "use_o_direct", "register_buffers", "cache_header_information",
    "quiet",  # random_bbox_crop's: stoker prints no warnings there to silence
    "seed",  # on operators that draw nothing
})


# -- GPU backends by copy -------------------------------------------------------------------
# Operators DALI also runs on the GPU that stoker runs on the CPU only: device="gpu" runs them
# on the CPU and copies each output to the GPU (one asynchronous copy per batch), so that DALI
# scripts asking for GPU random numbers, constants, .npy or FITS data run unchanged. They take no
# GPU data (DALI's take none either, but for shape_like).
GPU_BY_COPY = frozenset({"constant", "random.uniform", "random.coin_flip",
                         "readers.numpy", "experimental.readers.fits"})


# -- fn functions written in Python ----------------------------------------------------------
@dataclass(frozen=True)
class Wrapper:
    """fn.<name> is the Python function `impl` ("module:function"), not one generated from a
    schema.

    schema: the native schema it adds nodes of (its docs and stub types); None when it is a
    composition of other operators. deprecated: the fn name DALI tells users to take instead
    (fn.<name> then warns as DALI does; its ops class too). fed: a source fed from Python
    (its ops class takes no inputs and names the source). filled: the schema's
    arguments the function computes from its own (not given by users, not in its help)."""

    name: str
    impl: str
    schema: str | None = None
    deprecated: str | None = None
    fed: bool = False
    filled: tuple = ()

    def function(self):
        """The implementing function (its module imported on first use)."""
        module, attr = self.impl.split(":")
        return getattr(importlib.import_module(module), attr)

    def accepts(self):
        """The keyword arguments the function takes (with **kwargs: its schema's too)."""
        params = inspect.signature(self.function()).parameters.values()
        names = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        if any(p.kind is p.VAR_KEYWORD for p in params) and self.schema is not None:
            names |= arg_names(self.schema) - set(self.filled)
        return names - {"device", "name"}


WRAPPERS = {w.name: w for w in [
    # A Python source (callable, iterable, generator, worker processes) or feed_input.
    Wrapper("external_source", "stoker.wrappers:external_source", "external_source", fed=True),
    # Videos fed with feed_input, each making several batches (external.FedVideos).
    Wrapper("experimental.inputs.video", "stoker.wrappers:video_input",
            "experimental.inputs.video", fed=True),
    # `features` (a dict of tfrecord.Feature) instead of the schema's per-feature lists.
    Wrapper("readers.tfrecord", "stoker.wrappers:tfrecord", "readers.tfrecord",
            filled=("feature_names", "feature_types", "feature_var_len", "feature_shapes",
                    "feature_defaults")),
    # `a` as a list, a count or a DataNode; the schema's a_is_list/integer follow from it.
    Wrapper("random.choice", "stoker.wrappers:choice", "random.choice"),
    # A Python callable registered with the function server (stoker.python_function).
    Wrapper("python_function", "stoker.python_function:python_function", "python_function"),
    Wrapper("torch_python_function", "stoker.python_function:torch_python_function",
            "python_function"),
    # DLPack capsules in and out, batch_processing=True by default (DALI's DLTensorPythonFunction).
    Wrapper("dl_tensor_python_function", "stoker.dl_tensor_function:dl_tensor_python_function",
            "python_function"),
    # DALI's SSDRandomCrop: random_bbox_crop + slice, (images, boxes, labels) in and out.
    Wrapper("ssd_random_crop", "stoker.wrappers:ssd_random_crop",
            deprecated="random_bbox_crop"),
    # DALI's FastResizeCropMirror: resize_crop_mirror with antialias=False by default.
    Wrapper("fast_resize_crop_mirror", "stoker.wrappers:fast_resize_crop_mirror",
            "resize_crop_mirror", deprecated="resize_crop_mirror"),
]}

# Operators whose nodes take Python data or run Python code: a pipeline with them cannot be
# serialized (the reason names what cannot be written down).
PYTHON_FED = {
    "external_source": "takes its data from a Python source",
    "experimental.inputs.video": "takes its videos from feed_input",
    "python_function": "runs a Python function",
}


# -- stoker.ops: DALI's class-based API ---------------------------------------------------------
# fn names whose class names are not the CamelCase of their last part (DALI's spelling).
CLASS_NAMES = {
    "bbox_paste": "BBoxPaste", "bbox_rotate": "BBoxRotate", "random_bbox_crop": "RandomBBoxCrop",
    "readers.coco": "readers.COCO", "readers.mxnet": "readers.MXNet",
    "roi_random_crop": "ROIRandomCrop",
    "segmentation.random_object_bbox": "segmentation.RandomObjectBBox",
    "readers.tfrecord": "readers.TFRecord", "external_source": "ExternalSource",
    "mxnet_reader": "MXNetReader", "coco_reader": "COCOReader",
    "tfrecord_reader": "TFRecordReader", "ssd_random_crop": "SSDRandomCrop",
    "dl_tensor_python_function": "DLTensorPythonFunction",
    "reductions.rms": "reductions.RMS",
    "mfcc": "MFCC",  # for the audio family when it lands (every other DALI fn name fits)
}


def class_name(name):
    """The ops class name of fn name `name` ("readers.file" -> "readers.File")."""
    if name in CLASS_NAMES:
        return CLASS_NAMES[name]
    parts = name.split(".")
    return ".".join(parts[:-1] + ["".join(w[:1].upper() + w[1:] for w in parts[-1].split("_"))])


# The ops names of DALI's first releases: name -> (fn name, default device). DALI 2.4's
# deprecated names come from the schemas' deprecated_names (and WRAPPERS' deprecated); these
# are older, and some imply a device.
LEGACY_NAMES = {
    "VideoReader": ("readers.video", "gpu"),
    "HostDecoder": ("decoders.image", "cpu"), "HostDecoderCrop": ("decoders.image_crop", "cpu"),
    "HostDecoderRandomCrop": ("decoders.image_random_crop", "cpu"),
    "HostDecoderSlice": ("decoders.image_slice", "cpu"),
    "nvJPEGDecoder": ("decoders.image", "mixed"),
    "nvJPEGDecoderCrop": ("decoders.image_crop", "mixed"),
    "nvJPEGDecoderRandomCrop": ("decoders.image_random_crop", "mixed"),
    "nvJPEGDecoderSlice": ("decoders.image_slice", "mixed"),
    "HybridDecode": ("decoders.image", "mixed"),
}


def deprecated_names():
    """DALI 2.4's deprecated fn names -> today's (the schemas' deprecated_names)."""
    return {old: s["name"] for s in SCHEMAS.values() for old in s["deprecated_names"]}


# -- arguments of DALI's first releases (stoker.ops) ----------------------------------------------
class Deferred:
    """An argument that becomes a node when the operator is called (in define_graph): the
    random draws that old arguments stood for. `draw(fn)` adds it with stoker.fn."""

    def __init__(self, draw):
        self.draw = draw


def _output_dtype(op, args, known):
    args.setdefault("dtype", args.pop("output_dtype"))
    return "output_dtype", "dtype"


# The colour operators whose `image_type` DALI 2.4 still takes: the input's colour space.
COLOUR_SPACE_IMAGE_TYPE = ("hue", "saturation", "color_twist")


def _image_type(op, args, known):
    v = args.pop("image_type")
    if op in COLOUR_SPACE_IMAGE_TYPE:
        # Today's argument there, naming the input's colour space: stoker's take RGB.
        if getattr(v, "name", str(v)).rsplit(".", 1)[-1] != "RGB":
            raise TypeError(f"image_type={v}: stoker's {op} takes RGB images only (convert "
                            f"with fn.color_space_conversion first)")
        return None
    return "image_type", "nothing (the operator takes the image as it is)"


def _renamed(old, new):
    """A DALI argument renamed, its meaning unchanged: the old spelling becomes `new`."""
    def rewrite(op, args, known):
        args.setdefault(new, args.pop(old))
        return old, new
    return rewrite


# DALI 2.4's deprecated spellings of today's arguments: operator -> {old: new}.
_RENAMES = {
    "shapes": {"type": "dtype"},
    "lookup_table": {"output_dtype": "dtype"},
    "optical_flow": {"output_format": "output_grid"},
    "readers.coco": {"save_img_ids": "image_ids"},
}


def _uniform_sides(a, b):
    # A whole number of pixels in [a, b], each equally likely (as DALI drew them): a draw in
    # [a - 0.5, b + 0.5) rounded to an integer (not a list of every value: b can be 10**8).
    lo, hi = int(a) - 0.5, int(b) + 0.5
    return Deferred(lambda fn: fn.random.uniform(range=[lo, hi], dtype="int32"))


def _old_resize(op, args, known):
    a, b = args.pop("resize_a", None), args.pop("resize_b", None)
    rand, warp = args.pop("random_resize", False), args.pop("warp_resize", False)
    if a is None:
        raise TypeError("resize_a is required with the old resize arguments")
    if rand and warp:  # height and width drawn each in [a, b]
        args["resize_y"], args["resize_x"] = _uniform_sides(a, b), _uniform_sides(a, b)
        return ("random_resize/warp_resize/resize_a/resize_b",
                "resize_x, resize_y = fn.random.uniform(range=[a - 0.5, b + 0.5], dtype=INT32)")
    if rand:  # the shorter side drawn in [a, b]
        args["resize_shorter"] = _uniform_sides(a, b)
        return ("random_resize/resize_a/resize_b",
                "resize_shorter=fn.random.uniform(range=[a - 0.5, b + 0.5], dtype=INT32)")
    if warp:
        args["size"] = [a, b]
        return "warp_resize/resize_a/resize_b", "size=(resize_a, resize_b)"
    args["resize_shorter"] = a
    return "resize_a", "resize_shorter"


def _random_crop(op, args, known):
    if args.pop("random_crop"):
        for axis in ("crop_pos_x", "crop_pos_y"):
            args.setdefault(axis, Deferred(lambda fn: fn.random.uniform(range=[0, 1])))
        return "random_crop", "crop_pos_x and crop_pos_y = fn.random.uniform()"
    return None


def _mirror_prob(op, args, known):
    p = args.pop("mirror_prob")
    args.setdefault("mirror", Deferred(lambda fn: fn.random.coin_flip(probability=p)))
    return "mirror_prob", "mirror=fn.random.coin_flip(probability=p)"


def _square_crop(op, args, known):
    if isinstance(args["crop"], (int, float)):
        args["crop"] = [args["crop"], args["crop"]]  # one side: a square, as DALI took it
    return None  # today's spelling too: no warning


def _old_layout(op, args, known):
    # types.NCHW / NHWC: DALI's old layout constants (or their strings) as today's layouts.
    v = getattr(args["output_layout"], "value", args["output_layout"])
    args["output_layout"] = {"NCHW": "CHW", "NHWC": "HWC", "NFHWC": "FHWC",
                             "NFCHW": "FCHW"}.get(v, v)
    return None


@dataclass(frozen=True)
class Translation:
    """Old arguments `args` (any of them given triggers it) of the operators `ops` ("lacking":
    any operator whose schema lacks the first of them; "all": every operator), rewritten by
    `rewrite(op, args, known)`, which edits `args` in place and returns (old spelling, new
    spelling) for the DeprecationWarning, or None when nothing is deprecated."""

    args: tuple
    rewrite: object
    ops: tuple | str = "lacking"
    to: str | None = None  # the argument it becomes: applies only where the operator takes it

    def applies(self, op, known):
        if self.to is not None and self.to not in known:
            return False
        if self.ops == "lacking":
            return self.args[0] not in known
        return self.ops == "all" or op in self.ops


TRANSLATIONS = [
    Translation(("output_dtype",), _output_dtype, to="dtype"),
    Translation(("image_type",), _image_type),
    *(Translation((old,), _renamed(old, new), (op,), to=new)
      for op, names in _RENAMES.items() for old, new in names.items()),
    Translation(("resize_a", "resize_b", "random_resize", "warp_resize"), _old_resize,
                ("resize",)),
    Translation(("random_crop",), _random_crop, ("crop_mirror_normalize", "crop")),
    Translation(("mirror_prob",), _mirror_prob),
    Translation(("crop",), _square_crop, ("crop_mirror_normalize", "crop")),
    Translation(("output_layout",), _old_layout, "all"),
]


def translate(who, op, args, known, warn):
    """`args` of operator `op` (whose arguments are `known`) with DALI's old arguments as
    today's; warn(old, new) for each one rewritten. `who` names the caller in errors."""
    for t in TRANSLATIONS:
        if not any(a in args for a in t.args) or not t.applies(op, known):
            continue
        try:
            note = t.rewrite(op, args, known)
        except TypeError as e:
            raise TypeError(f"{who}: {e}") from None
        if note is not None:
            warn(*note)
    return args
