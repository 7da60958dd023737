#!/usr/bin/env python3
"""What this GPU's video hardware can do, asked of the driver itself (no SDK needed).

Prints, for each codec readers.video may meet, whether NVDEC decodes it (8-bit 4:2:0), on how
many engines and up to what size (cuvidGetDecoderCaps of libnvcuvid), and whether the optical
flow accelerator (NVOFA) can be opened (nvCreateOpticalFlowCuda of libnvidia-opticalflow).
Uses ctypes over the driver's libraries: run it where the driver is, e.g. the GPU machine.
"""
import ctypes
import json
import sys

CODECS = {"mpeg4": 2, "h264": 4, "hevc": 8, "vp8": 9, "vp9": 10, "av1": 11}
CHROMA_420 = 1


class DecodeCaps(ctypes.Structure):  # CUVIDDECODECAPS (cuviddec.h)
    _fields_ = [("eCodecType", ctypes.c_int), ("eChromaFormat", ctypes.c_int),
                ("nBitDepthMinus8", ctypes.c_uint), ("reserved1", ctypes.c_uint * 3),
                ("bIsSupported", ctypes.c_ubyte), ("nNumNVDECs", ctypes.c_ubyte),
                ("nOutputFormatMask", ctypes.c_ushort), ("nMaxWidth", ctypes.c_uint),
                ("nMaxHeight", ctypes.c_uint), ("nMaxMBCount", ctypes.c_uint),
                ("nMinWidth", ctypes.c_ushort), ("nMinHeight", ctypes.c_ushort),
                ("bIsHistogramSupported", ctypes.c_ubyte), ("nCounterBitDepth", ctypes.c_ubyte),
                ("nMaxHistogramBins", ctypes.c_ushort), ("reserved3", ctypes.c_uint * 10)]


def cuda_context():
    cuda = ctypes.CDLL("libcuda.so.1")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    for call in (lambda: cuda.cuInit(0), lambda: cuda.cuDeviceGet(ctypes.byref(dev), 0),
                 lambda: cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                 lambda: cuda.cuCtxSetCurrent(ctx)):
        err = call()
        if err != 0:
            raise RuntimeError(f"CUDA driver call failed with {err}")
    name = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(name, 256, dev)
    return ctx, name.value.decode()


def nvdec_caps():
    try:
        cuvid = ctypes.CDLL("libnvcuvid.so.1")
    except OSError as e:
        return {"error": f"libnvcuvid not loadable: {e}"}
    out = {}
    for codec, code in CODECS.items():
        caps = DecodeCaps(eCodecType=code, eChromaFormat=CHROMA_420, nBitDepthMinus8=0)
        err = cuvid.cuvidGetDecoderCaps(ctypes.byref(caps))
        out[codec] = ({"error": err} if err else
                      {"supported": bool(caps.bIsSupported), "engines": caps.nNumNVDECs,
                       "max": [caps.nMaxWidth, caps.nMaxHeight]})
    return out


def nvofa(ctx):
    try:
        of = ctypes.CDLL("libnvidia-opticalflow.so.1")
    except OSError as e:
        return {"available": False, "why": f"libnvidia-opticalflow not loadable: {e}"}
    functions = (ctypes.c_void_p * 64)()  # NV_OF_CUDA_API_FUNCTION_LIST: pointers, first = create
    for major, minor in ((5, 0), (4, 0), (3, 0), (2, 0)):
        err = of.NvOFAPICreateInstanceCuda(ctypes.c_uint32((major << 4) | minor), functions)
        if err == 0:
            break
    else:
        return {"available": False, "why": f"NvOFAPICreateInstanceCuda failed ({err})"}
    create = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_void_p))(functions[0])
    handle = ctypes.c_void_p()
    err = create(ctx, ctypes.byref(handle))
    # NV_OF_ERR_OF_NOT_AVAILABLE = 1: the GPU has no optical flow hardware.
    return {"available": err == 0, "api": f"{major}.{minor}", "create_status": err}


def main():
    try:
        ctx, name = cuda_context()
    except (OSError, RuntimeError) as e:
        sys.exit(f"video_hw_caps: no usable CUDA driver here ({e})")
    report = {"gpu": name, "nvdec_8bit_420": nvdec_caps(), "nvofa": nvofa(ctx)}
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
