# Reading astronomical images with DALI's FITS reader (fn.experimental.readers.fits, "Reads Fits
# image HDUs from a directory"): a folder of exposures as astropy writes them, each with an
# empty primary HDU, the science image in the first extension and a Rice-compressed bad-pixel
# mask in the second; both read by HDU index (one output each), shuffled with a buffer of one
# (DALI's order exactly), the mask applied, on the CPU and with device="gpu" (where DALI 2.4
# decodes the Rice tiles on the GPU). DALI 2.4's FITS reader needs a CUDA driver even on the
# CPU, so the example runs where there is a GPU (DROPIN_DEVICE_ID).
# Written for nvidia.dali; the device comes from the environment.
import os
import tempfile

import numpy as np
from astropy.io import fits

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
RESULTS = {}

exposures = tempfile.mkdtemp(prefix="fits_examples_")
rng = np.random.default_rng(0)
for i in range(6):
    science = rng.normal(1000, 50, size=(32, 48)).astype(np.float32)
    mask = (rng.random((32, 48)) > 0.9).astype(np.int16)
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(science),
                  fits.CompImageHDU(mask, compression_type="RICE_1")]).writeto(
        os.path.join(exposures, f"exposure_{i:03d}.fits"))


@pipeline_def(batch_size=4, num_threads=2, device_id=device_id, seed=7)
def exposures_pipeline(device):
    science, mask = fn.experimental.readers.fits(device=device, file_root=exposures,
                                                 hdu_indices=[2, 3], random_shuffle=True,
                                                 initial_fill=1, name="Reader")
    good = fn.cast(mask == 0, dtype=types.FLOAT)
    return science, mask, science * good


if device_id is not None:
    for device in ("cpu", "gpu"):
        pipe = exposures_pipeline(device)
        pipe.build()
        RESULTS[f"{device}_epoch_size"] = pipe.epoch_size("Reader")
        for it in range(3):
            for name, out in zip(("science", "mask", "masked"), pipe.run()):
                out = out.as_cpu() if hasattr(out, "as_cpu") else out
                RESULTS[f"{device}_{name}_{it}"] = [np.array(out.at(i)) for i in range(len(out))]
