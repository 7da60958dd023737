"""DALI's SSDRandomCrop once its window is drawn, ported from DALI 2.4's
dali/operators/ssd/random_crop.cc (RunImpl, after the IoU test): what stoker's composition
(stoker.wrappers.ssd_random_crop) must give for the window its random_bbox_crop drew."""

import math

import numpy as np


def _llround(x):
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def ssd_crop_given_window(image, boxes, labels, left, top, w, h):
    """(image, boxes, labels) cut to the window [left, left + w) x [top, top + h) (normalised):
    the boxes whose centre lies in it (ends included), in its coordinates and clamped to
    [0, 1], their labels, and the image between the window's ends rounded to the nearest
    pixel. The whole window (0, 0, 1, 1) is DALI's "no crop": everything as it was."""
    if (left, top, w, h) == (0.0, 0.0, 1.0, 1.0):
        return image, boxes, labels
    right, bottom = left + w, top + h
    xc = 0.5 * (boxes[:, 0].astype(np.float64) + boxes[:, 2])
    yc = 0.5 * (boxes[:, 1].astype(np.float64) + boxes[:, 3])
    keep = (xc >= left) & (xc <= right) & (yc >= top) & (yc <= bottom)
    shift = np.float64([left, top, left, top])
    scale = np.float64([w, h, w, h])
    out = np.clip((boxes[keep].astype(np.float64) - shift) / scale, 0.0, 1.0).astype(np.float32)
    height, width = image.shape[:2]
    x0, x1 = _llround(left * width), _llround(right * width)
    y0, y1 = _llround(top * height), _llround(bottom * height)
    return image[y0:y1, x0:x1], out, labels[keep]
