"""DALI's class-based operator API (``nvidia.dali.ops``), as the scripts of DALI's first years
use it: an operator is an object made once with its arguments and called in ``define_graph``
with its inputs (and per-call arguments), each call adding a node::

    class SimplePipeline(stoker.Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super().__init__(batch_size, num_threads, device_id, seed=12)
            self.input = ops.FileReader(file_root=image_dir)
            self.decode = ops.ImageDecoder(device="mixed", output_type=types.RGB)

        def define_graph(self):
            jpegs, labels = self.input(name="Reader")
            return self.decode(jpegs), labels

Every ``fn`` operator is here under DALI's class name (``ops.Resize``, ``ops.readers.File``,
``ops.random.CoinFlip``, ``ops.decoders.ImageRandomCrop``) and the old names (``ops.FileReader``,
``ops.nvJPEGDecoderRandomCrop``, ``ops.HostDecoder``, ``ops.CoinFlip``, ...). Arguments of
DALI's first releases (``Resize(random_resize=True, resize_a=256, resize_b=480)``,
``CropMirrorNormalize(random_crop=True, mirror_prob=0.5, output_dtype=..., image_type=...)``)
are translated into today's, each with a DeprecationWarning naming the new spelling."""

import sys
import warnings

from stoker import _stoker
from stoker import fn as _fn
from stoker import types as _types
from stoker.pipeline import DataNode

# Schema names whose class names are not the CamelCase of their last part (DALI's spelling).
_CLASS_NAMES = {
    "bbox_paste": "BBoxPaste", "bbox_rotate": "BBoxRotate", "random_bbox_crop": "RandomBBoxCrop",
    "readers.coco": "readers.COCO", "readers.mxnet": "readers.MXNet",
    "roi_random_crop": "ROIRandomCrop",
    "segmentation.random_object_bbox": "segmentation.RandomObjectBBox",
    "readers.tfrecord": "readers.TFRecord", "external_source": "ExternalSource",
    "mxnet_reader": "MXNetReader", "coco_reader": "COCOReader",
    "tfrecord_reader": "TFRecordReader",
}

# Old names: (operator, default device). DALI 2.4's deprecated aliases and the names of its
# first releases (nvJPEG*/Host* decoders, HybridDecode).
# (DALI 2.4's deprecated names come from the schemas' deprecated_names; those with a default
# device of their own are here.)
_LEGACY_NAMES = {
    "VideoReader": ("readers.video", "gpu"),
    "HostDecoder": ("decoders.image", "cpu"), "HostDecoderCrop": ("decoders.image_crop", "cpu"),
    "HostDecoderRandomCrop": ("decoders.image_random_crop", "cpu"),
    "HostDecoderSlice": ("decoders.image_slice", "cpu"),
    "nvJPEGDecoder": ("decoders.image", "mixed"), "nvJPEGDecoderCrop": ("decoders.image_crop",
                                                                         "mixed"),
    "nvJPEGDecoderRandomCrop": ("decoders.image_random_crop", "mixed"),
    "nvJPEGDecoderSlice": ("decoders.image_slice", "mixed"),
    "HybridDecode": ("decoders.image", "mixed"),
    "SSDRandomCrop": ("random_bbox_crop", None),
}


def _dali_only(args):
    """Drops the arguments that tune DALI's own machinery (fn.DALI_TUNING_ARGS)."""
    return {k: v for k, v in args.items() if k not in _fn.DALI_TUNING_ARGS}


class _Deferred:
    """An argument that becomes a node when the operator is called (in define_graph): the
    random draws that old arguments stood for."""

    def __init__(self, make):
        self.make = make


def _deprecated(cls, old, new):
    warnings.warn(f"{cls}: `{old}` is deprecated; use {new}", DeprecationWarning, stacklevel=4)


def _layout(value):
    """types.NCHW / NHWC (DALI's old layout constants, or their strings) as today's layouts."""
    v = getattr(value, "value", value)
    return {"NCHW": "CHW", "NHWC": "HWC", "NFHWC": "FHWC", "NFCHW": "FCHW"}.get(v, v)


def _translate(cls, op, args):
    """The arguments of DALI's first releases as today's (warning once per use)."""
    schema_args = _ARG_NAMES[op]
    if "output_dtype" in args and "output_dtype" not in schema_args:
        _deprecated(cls, "output_dtype", "dtype")
        args.setdefault("dtype", args.pop("output_dtype"))
    if "image_type" in args and "image_type" not in schema_args:
        _deprecated(cls, "image_type", "nothing (the operator takes the image as it is)")
        args.pop("image_type")
    if op == "resize" and ({"resize_a", "resize_b", "random_resize", "warp_resize"} & set(args)):
        a, b = args.pop("resize_a", None), args.pop("resize_b", None)
        rand, warp = args.pop("random_resize", False), args.pop("warp_resize", False)
        if a is None:
            raise TypeError(f"{cls}: resize_a is required with the old resize arguments")
        if rand:
            # A whole number of pixels in [a, b], each equally likely (as DALI drew them).
            def side():
                return _fn.random.uniform(values=list(range(int(a), int(b) + 1)))
            if warp:  # height and width drawn each in [a, b]
                _deprecated(cls, "random_resize/warp_resize/resize_a/resize_b",
                            "resize_x and resize_y = fn.random.uniform(values=range(a, b + 1))")
                args["resize_y"] = _Deferred(side)
                args["resize_x"] = _Deferred(side)
            else:  # the shorter side drawn in [a, b]
                _deprecated(cls, "random_resize/resize_a/resize_b",
                            "resize_shorter=fn.random.uniform(values=range(a, b + 1))")
                args["resize_shorter"] = _Deferred(side)
        elif warp:
            _deprecated(cls, "warp_resize/resize_a/resize_b", "size=(resize_a, resize_b)")
            args["size"] = [a, b]
        else:
            _deprecated(cls, "resize_a", "resize_shorter")
            args["resize_shorter"] = a
    if op in ("crop_mirror_normalize", "crop") and "random_crop" in args:
        if args.pop("random_crop"):
            _deprecated(cls, "random_crop", "crop_pos_x and crop_pos_y = fn.random.uniform()")
            args.setdefault("crop_pos_x", _Deferred(lambda: _fn.random.uniform(range=[0, 1])))
            args.setdefault("crop_pos_y", _Deferred(lambda: _fn.random.uniform(range=[0, 1])))
    if "mirror_prob" in args and "mirror_prob" not in schema_args:
        p = args.pop("mirror_prob")
        _deprecated(cls, "mirror_prob", "mirror=fn.random.coin_flip(probability=p)")
        args.setdefault("mirror", _Deferred(lambda: _fn.random.coin_flip(probability=p)))
    if op in ("crop_mirror_normalize", "crop") and isinstance(args.get("crop"), (int, float)):
        args["crop"] = [args["crop"], args["crop"]]  # one side: a square, as DALI took it
    if "output_layout" in args:
        args["output_layout"] = _layout(args["output_layout"])
    return args


class _Operator:
    """One operator's class: made with arguments, called with inputs (each call a node)."""

    _op = None        # the fn operator ("resize", "readers.file")
    _device = None    # the device an old name implies ("mixed" for nvJPEGDecoder)

    _new_name = None  # an old name's class: today's, for its deprecation warning

    def __init__(self, *, device=None, **kwargs):
        self._cls = type(self).__name__
        if self._new_name:
            warnings.warn(f"ops.{self._cls} is deprecated; use ops.{self._new_name} "
                          f"(fn.{self._op})", DeprecationWarning, stacklevel=2)
        self.device = device or self._device
        self._args = _translate(self._cls, self._op, _dali_only(dict(kwargs)))
        self._check(self._args)

    def _check(self, args):
        """Unknown arguments are refused where the operator is made, as DALI does."""
        known = _ARG_NAMES[self._op]
        unknown = sorted(k for k in args if k not in known)
        if unknown:
            raise TypeError(f"ops.{self._cls} got unexpected argument(s) {', '.join(unknown)} "
                            f"(fn.{self._op} takes: {', '.join(sorted(known))})")

    def __call__(self, *inputs, name=None, **kwargs):
        args = {**self._args, **_translate(self._cls, self._op, _dali_only(dict(kwargs)))}
        args = {k: (v.make() if isinstance(v, _Deferred) else v) for k, v in args.items()}
        op = _fn
        for part in self._op.split("."):
            op = getattr(op, part)
        if self._op == "external_source":
            args.pop("name", None)
        return op(*inputs, device=self.device, name=name, **args)

    @property
    def spec(self):
        """What the operator was made with: its fn name, device and arguments."""
        return {"op": self._op, "device": self.device, "args": dict(self._args)}


class ExternalSource(_Operator):
    """ops.ExternalSource(): a node fed by `pipe.feed_input(node, batch)` (in iter_setup), or
    by a `source` callable or iterable as fn.external_source takes it."""

    _op = "external_source"

    def _check(self, args):
        pass  # fn.external_source's own signature checks them

    def __call__(self, *inputs, name=None, **kwargs):
        if inputs:
            raise TypeError("ExternalSource takes no inputs")
        args = {**self._args, **kwargs}
        return _fn.external_source(name=name, device=self.device or "cpu", **args)


_ARG_NAMES = {}


def _class_name(op):
    if op in _CLASS_NAMES:
        return _CLASS_NAMES[op]
    parts = op.split(".")
    return ".".join(parts[:-1] + ["".join(w[:1].upper() + w[1:] for w in parts[-1].split("_"))])


def _make_class(name, op, device=None, doc=None, new_name=None):
    return type(name, (_Operator,), {"_op": op, "_device": device, "__doc__": doc,
                                     "_new_name": new_name, "__module__": __name__})


def _install():
    module = sys.modules[__name__]
    for schema in _stoker.schemas():
        if not schema["name"].startswith("_"):  # _conditional.*: inserted by `if` statements
            _ARG_NAMES[schema["name"]] = {a["name"] for a in schema["args"]}
    _ARG_NAMES["external_source"] = set()
    python_args = {"function", "num_outputs", "batch_processing", "output_layouts"}
    _ARG_NAMES["python_function"] = set(python_args)
    _ARG_NAMES["torch_python_function"] = set(python_args)
    _ARG_NAMES["readers.tfrecord"] |= {"features"}
    for op in sorted(_ARG_NAMES):
        full = _class_name(op)
        *path, name = full.split(".")
        target = _fn.namespace(module, path, "stoker.ops.{}: DALI's class-based operators")
        if op == "external_source":
            cls = ExternalSource
        else:
            fn_op = _fn
            for part in op.split("."):
                fn_op = getattr(fn_op, part, None)
            cls = _make_class(name, op, doc=f"Class form of fn.{op}.\n\n"
                                            f"{getattr(fn_op, '__doc__', '') or ''}")
        setattr(target, name, cls)
    legacy = {_class_name(old): (s["name"], None) for s in _stoker.schemas()
              for old in s["deprecated_names"]}
    legacy.update(_LEGACY_NAMES)
    for old, (op, device) in legacy.items():
        if op in _ARG_NAMES:
            *path, short = old.split(".")
            target = _fn.namespace(module, path, "stoker.ops.{}: DALI's class-based operators")
            setattr(target, short, _make_class(
                short, op, device, doc=f"DALI's old name for {_class_name(op)} (fn.{op})"
                + (f", on device '{device}' unless told otherwise." if device else "."),
                new_name=_class_name(op)))


_install()
