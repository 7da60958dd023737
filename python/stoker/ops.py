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
are translated into today's, each with a DeprecationWarning naming the new spelling.
``ops.Compose([op1, op2, ...])`` chains operators into one callable, as DALI's."""

import sys
import warnings

from stoker import _schema
from stoker import fn as _fn


def _warn(cls, old, new):
    warnings.warn(f"{cls}: `{old}` is deprecated; use {new}", DeprecationWarning, stacklevel=4)


class _Operator:
    """One operator's class: made with arguments, called with inputs (each call a node)."""

    _op = None        # the fn operator ("resize", "readers.file")
    _device = None    # the device an old name implies ("mixed" for nvJPEGDecoder)
    _new_name = None  # an old name's class: today's, for its deprecation warning
    _new_fn = None    # and today's fn function
    _known = None     # the arguments it takes (names)
    _fed = False      # a source fed from Python (no inputs; `name` names the source)

    def __init__(self, *, device=None, **kwargs):
        self._cls = type(self).__name__
        if self._new_name:
            warnings.warn(f"ops.{self._cls} is deprecated; use ops.{self._new_name} "
                          f"(fn.{self._new_fn or self._op})", DeprecationWarning, stacklevel=2)
        self.device = device or self._device
        self._args = self._translate(kwargs)
        self._check(self._args)

    def _translate(self, args):
        """The arguments as today's: DALI's tuning arguments that the operator does not take
        dropped, the old ones of DALI's first releases rewritten (stoker._schema.TRANSLATIONS)."""
        args = {k: v for k, v in args.items()
                if k not in _fn.DALI_TUNING_ARGS or k in self._known}
        return _schema.translate(self._cls, self._op, args, self._known,
                                 lambda old, new: _warn(self._cls, old, new))

    def _check(self, args):
        """Unknown arguments are refused where the operator is made, as DALI does."""
        unknown = sorted(k for k in args if k not in self._known)
        if unknown:
            raise TypeError(f"ops.{self._cls} got unexpected argument(s) {', '.join(unknown)} "
                            f"(fn.{self._op} takes: {', '.join(sorted(self._known))})")

    def __call__(self, *inputs, name=None, **kwargs):
        args = {**self._args, **self._translate(kwargs)}
        args = {k: (v.draw(_fn) if isinstance(v, _schema.Deferred) else v)
                for k, v in args.items()}
        if self._fed:
            if inputs:
                raise TypeError(f"{self._cls} takes no inputs")
            return _function(self._op)(name=name, device=self.device or "cpu", **args)
        return _function(self._op)(*inputs, device=self.device, name=name, **args)

    @property
    def spec(self):
        """What the operator was made with: its fn name, device and arguments."""
        return {"op": self._op, "device": self.device, "args": dict(self._args)}


class _CompoundOp:
    """What ops.Compose returns: its operators called in turn, each on all of the previous
    one's outputs. CPU data meeting a GPU operator is copied to the GPU by the pipeline (as for
    any GPU operator given CPU data, host-read inputs excepted), which is what DALI's Compose
    arranges with .gpu()."""

    def __init__(self, op_list):
        self._ops = []
        for op in op_list:  # a Compose inside a Compose is flattened, as in DALI
            self._ops += op._ops if isinstance(op, _CompoundOp) else [op]

    def __call__(self, *inputs, **kwargs):
        values = list(inputs)
        for op in self._ops:
            out = op(*values, **kwargs)
            kwargs = {}  # DALI gives the call's keyword arguments to the first operator only
            if out is None:
                raise ValueError(f"ops.Compose: {type(op).__name__} returned no outputs for "
                                 f"the next operator")
            values = list(out) if isinstance(out, (tuple, list)) else [out]
        return values[0] if len(values) == 1 else values


def Compose(op_list):  # noqa: N802 (DALI's name)
    """Returns a meta-operator that chains the operations in op_list: called, it performs
    ``op_list[n-1](op_list[n-2](... op_list[0](args)))``, every output of one operator going to
    the next as its inputs (keyword arguments of the call go to the first). One operator is
    returned as it is. A CPU-to-GPU transition in the middle copies the data to the GPU::

        decode_and_resize = ops.Compose([
            ops.decoders.Image(device="cpu"),
            ops.Resize(size=fn.random.uniform(range=(400, 500)), device="gpu"),
        ])
        files, labels = fn.readers.caffe(path=caffe_db_folder, seed=1)
        pipe.set_outputs(decode_and_resize(files), labels)
    """
    if isinstance(op_list, (str, bytes)) or not hasattr(op_list, "__iter__"):
        raise TypeError(f"ops.Compose takes a list of operators, got "
                        f"{type(op_list).__name__}")
    op_list = list(op_list)
    if not op_list:  # DALI: IndexError
        raise ValueError("ops.Compose needs at least one operator")
    bad = [type(op).__name__ for op in op_list if not callable(op)]
    if bad:  # DALI fails only when called; the list is wrong already
        raise TypeError(f"ops.Compose: the operators must be callable (ops objects, or "
                        f"functions of DataNodes), got {', '.join(bad)}")
    return op_list[0] if len(op_list) == 1 else _CompoundOp(op_list)


def _function(op):
    """The fn function of `op`, without a deprecation warning (the class warned when made)."""
    return _fn.FUNCTIONS[op] if op in _fn.FUNCTIONS else _schema.WRAPPERS[op].function()


def _make_class(name, op, device=None, doc=None, new_name=None, new_fn=None):
    w = _schema.WRAPPERS.get(op)
    known = w.accepts() if w is not None else _schema.arg_names(op)
    return type(name, (_Operator,), {"_op": op, "_device": device, "__doc__": doc,
                                     "_new_name": new_name, "_new_fn": new_fn,
                                     "_known": frozenset(known),
                                     "_fed": bool(w and w.fed), "__module__": __name__})


def _put(module, full, cls):
    *path, short = full.split(".")
    target = _fn.namespace(module, path, "stoker.ops.{}: DALI's class-based operators")
    setattr(target, short, cls)


def _install():
    module = sys.modules[__name__]
    ops = {name for name in _schema.SCHEMAS if _schema.public(name)}
    ops |= set(_schema.WRAPPERS)
    for op in sorted(ops):
        w = _schema.WRAPPERS.get(op)
        if w is not None and w.deprecated:  # a deprecated name: its class warns when made
            _put(module, _schema.class_name(op), _make_class(
                _schema.class_name(op).rsplit(".", 1)[-1], op,
                doc=f"DALI's deprecated {_schema.class_name(op)} (fn.{op}).\n\n"
                    f"{_function(op).__doc__ or ''}",
                new_name=_schema.class_name(w.deprecated), new_fn=w.deprecated))
            continue
        full = _schema.class_name(op)
        _put(module, full, _make_class(full.rsplit(".", 1)[-1], op,
                                       doc=f"Class form of fn.{op}.\n\n"
                                           f"{_function(op).__doc__ or ''}"))
    legacy = {_schema.class_name(old): (new, None)
              for old, new in _schema.deprecated_names().items()}
    legacy.update(_schema.LEGACY_NAMES)
    for old, (op, device) in legacy.items():
        if op in ops:
            short = old.rsplit(".", 1)[-1]
            _put(module, old, _make_class(
                short, op, device, doc=f"DALI's old name for {_schema.class_name(op)} (fn.{op})"
                + (f", on device '{device}' unless told otherwise." if device else "."),
                new_name=_schema.class_name(op)))


_install()
