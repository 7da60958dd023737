"""Feature specifications for fn.readers.tfrecord, named as in DALI's
``nvidia.dali.tfrecord`` (and TensorFlow's tf.io)::

    from stoker import tfrecord
    out = fn.readers.tfrecord(path=files, index_path=indexes, features={
        "image/encoded": tfrecord.FixedLenFeature((), tfrecord.string, ""),
        "image/class/label": tfrecord.FixedLenFeature([1], tfrecord.int64, -1),
        "image/object/bbox/xmin": tfrecord.VarLenFeature(tfrecord.float32, 0.0),
    })
    images, labels = out["image/encoded"], out["image/class/label"]
"""

string = "string"
int64 = "int64"
float32 = "float32"
_TYPES = (string, int64, float32)


class FixedLenFeature:
    """A feature with a fixed shape (() for a scalar; strings are always one value). Records
    without it get `default_value`; with no default they are an error."""

    def __init__(self, shape, dtype, default_value=None):
        if dtype not in _TYPES:
            raise ValueError(f"dtype must be one of {_TYPES}, got {dtype!r}")
        self.shape = [int(d) for d in (shape if isinstance(shape, (list, tuple)) else [shape])]
        self.dtype = dtype
        self.default_value = default_value
        self.var_len = False


class VarLenFeature:
    """A feature of any length, output as a 1-D tensor (empty when absent). DALI's second
    form, ``VarLenFeature(partial_shape, dtype, default_value)``, shapes the values as
    (n, *partial_shape), n = number of values / volume(partial_shape); a count the volume does
    not divide is an error."""

    def __init__(self, dtype, default_value=None, *more):
        partial_shape = []
        if isinstance(dtype, (list, tuple)):  # (partial_shape, dtype, default_value)
            partial_shape, dtype = [int(d) for d in dtype], default_value
            default_value, more = (more[0], more[1:]) if more else (None, more)
            if any(d <= 0 for d in partial_shape):
                raise ValueError(f"partial_shape must have positive extents, got {partial_shape}")
        if more:
            raise TypeError("VarLenFeature takes (dtype, default_value) or "
                            "(partial_shape, dtype, default_value)")
        if dtype not in _TYPES:
            raise ValueError(f"dtype must be one of {_TYPES}, got {dtype!r}")
        self.shape = partial_shape
        self.dtype = dtype
        self.default_value = default_value
        self.var_len = True


def _default_text(feature):
    v = feature.default_value
    if v is None:
        return ""
    if isinstance(v, bytes):
        return v.decode("latin-1")
    return str(v)
