"""Constants for operator arguments: element types (``types.FLOAT16``) and colour formats
(``types.RGB``). They are strings underneath, so ``dtype="float16"`` works too."""

from enum import Enum


class DALIDataType(str, Enum):
    """Element types, named as DALI names them."""

    BOOL = "bool"
    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    UINT64 = "uint64"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"
    FLOAT = "float32"
    FLOAT64 = "float64"

    def __str__(self):
        return self.value


class DALIImageType(str, Enum):
    """Colour formats of decoded images."""

    RGB = "RGB"
    BGR = "BGR"
    GRAY = "GRAY"
    YCbCr = "YCbCr"
    ANY_DATA = "ANY_DATA"

    def __str__(self):
        return self.value


class DALIInterpType(str, Enum):
    """Interpolation types (resize, random_resized_crop); see fn.resize for each filter."""

    INTERP_NN = "nn"
    INTERP_LINEAR = "linear"
    INTERP_CUBIC = "cubic"
    INTERP_LANCZOS3 = "lanczos3"
    INTERP_TRIANGULAR = "triangular"
    INTERP_GAUSSIAN = "gaussian"

    def __str__(self):
        return self.value


DataType = DALIDataType
InterpType = DALIInterpType
ImageType = DALIImageType

BOOL = DALIDataType.BOOL
UINT8 = DALIDataType.UINT8
UINT16 = DALIDataType.UINT16
UINT32 = DALIDataType.UINT32
UINT64 = DALIDataType.UINT64
INT8 = DALIDataType.INT8
INT16 = DALIDataType.INT16
INT32 = DALIDataType.INT32
INT64 = DALIDataType.INT64
FLOAT16 = DALIDataType.FLOAT16
BFLOAT16 = DALIDataType.BFLOAT16
FLOAT = DALIDataType.FLOAT
FLOAT32 = DALIDataType.FLOAT
FLOAT64 = DALIDataType.FLOAT64
INTERP_NN = DALIInterpType.INTERP_NN
INTERP_LINEAR = DALIInterpType.INTERP_LINEAR
INTERP_CUBIC = DALIInterpType.INTERP_CUBIC
INTERP_LANCZOS3 = DALIInterpType.INTERP_LANCZOS3
INTERP_TRIANGULAR = DALIInterpType.INTERP_TRIANGULAR
INTERP_GAUSSIAN = DALIInterpType.INTERP_GAUSSIAN
# Layout names DALI users know; plain strings ("CHW") work the same.
NCHW = "CHW"
NHWC = "HWC"
NFCHW = "FCHW"
NFHWC = "FHWC"
SAME = ""  # (DALI's "keep the input's layout")
# DALI's device_id for a pipeline without a GPU (stoker also takes None).
CPU_ONLY_DEVICE_ID = -99999
RGB = DALIImageType.RGB
BGR = DALIImageType.BGR
GRAY = DALIImageType.GRAY
YCbCr = DALIImageType.YCbCr
ANY_DATA = DALIImageType.ANY_DATA


# What external sources' callables receive (fn.external_source; DALI's types.SampleInfo).
from stoker.worker_process import BatchInfo, SampleInfo  # noqa: E402,F401
# types.Constant's node (nothing these import imports this module back).
from stoker.conditionals import constant as _constant  # noqa: E402
from stoker.definition import current_pipeline as _current_pipeline  # noqa: E402


def Constant(value, dtype=None, shape=None, layout=None, device=None, **kwargs):  # noqa: N802
    """`value` (a number, list or numpy array) as a pipeline value, the same for every sample
    (DALI's types.Constant): Python ints become int32 and floats float32 unless `dtype` says;
    `shape` reshapes the values (one value is repeated); device="gpu" puts it on the GPU.
    Call it inside a pipeline definition."""
    pipe = _current_pipeline()
    if pipe is None:
        raise RuntimeError("types.Constant called outside a pipeline definition: use it in a "
                           "@stoker.pipeline_def function or inside `with pipe:`")
    return _constant(pipe, value, dtype=dtype, shape=shape, layout=layout, device=device)


_NUMPY = {"bool": "bool_", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
          "uint64": "uint64", "int8": "int8", "int16": "int16", "int32": "int32",
          "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64"}


def to_numpy_type(dali_type):
    """The numpy type of an element type (types.FLOAT -> numpy.float32), as DALI's."""
    import numpy as np

    name = getattr(dali_type, "value", dali_type)
    if name not in _NUMPY:
        raise TypeError(f"no numpy type for {dali_type!r}")
    return getattr(np, _NUMPY[name])


def to_dali_type(framework_type):
    """The element type of a numpy dtype or type, or anything numpy understands
    (numpy.float32 -> types.FLOAT), as DALI's."""
    import numpy as np

    try:
        return DALIDataType(np.dtype(framework_type).name)
    except (TypeError, ValueError):
        raise TypeError(f"no stoker element type for {framework_type!r}") from None


class ElementTypeMap(dict):
    """A dict keyed by element types (types.FLOAT...) that also answers for numpy dtypes (what
    batch.dtype gives) and type names: the frameworks' type tables (DALI's to_torch_type,
    the Paddle plugin's dtype_map)."""

    def __missing__(self, key):
        import numpy as np

        name = getattr(key, "value", None) or (key if isinstance(key, str) else
                                               np.dtype(key).name)
        for k, v in self.items():
            if k.value == name:
                return v
        raise KeyError(key)
