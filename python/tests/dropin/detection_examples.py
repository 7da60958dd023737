# DALI's "COCO Reader with Augmentations" example (docs/examples/use_cases/detection_pipeline):
# readers.coco with relative ltrb boxes and polygon masks; random_bbox_crop with the masks of the
# kept boxes (segmentation.select_masks), the image cut by slice and the vertices and boxes
# mapped to the crop's pixels (transforms.crop + coord_transform); paste + bbox_paste (the
# vertices moved by arithmetic), flip + bb_flip + coord_flip; pixel-wise masks with
# segmentation.random_mask_pixel (and random_object_bbox + roi_random_crop, as DALI's
# segmentation examples) choosing where slice cuts. Written for nvidia.dali; the data folder and
# device come from the environment (with a device, the images go to the GPU after decoding, as in
# the example).
#
# Random draws differ between the libraries by design (docs/dali_differences.md): what follows
# from a draw compares by "kind", and the script checks what must hold for any draw (boxes
# inside the image, slices equal to numpy's cut at the drawn window, ...), recording booleans.
import os

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

coco_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-coco")
file_root = os.path.join(coco_dir, "images")
annotations_file = os.path.join(coco_dir, "instances.json")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 4
RESULTS, COMPARE = {}, {}


def coco_reader_def():
    return fn.readers.coco(file_root=file_root, annotations_file=annotations_file,
                           polygon_masks=True, ratio=True, ltrb=True)


def to_device(images):
    return images.gpu() if device_id is not None else images


def run(pipe, names, iterations=1):
    pipe.build()
    got = {name: [] for name in names}
    for _ in range(iterations):
        for name, batch in zip(names, pipe.run()):
            got[name] += [np.array(batch.as_cpu().at(i)) for i in range(batch_size)]
    return got


# --- random_bbox_crop, select_masks, slice, transforms.crop + coord_transform ---------------
@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12345)
def bbox_crop_pipe():
    inputs, bboxes, labels, polygons, vertices = coco_reader_def()
    anchor_rel, shape_rel, crop_bboxes, crop_labels, bbox_indices = fn.random_bbox_crop(
        bboxes, labels, aspect_ratio=[0.5, 2], thresholds=[0.0], allow_no_crop=False,
        scaling=[0.3, 0.6], seed=12345, bbox_layout="xyXY", output_bbox_indices=True)
    sel_polygons, sel_vertices = fn.segmentation.select_masks(bbox_indices, polygons, vertices)
    images = fn.decoders.image(inputs)
    cropped = fn.slice(images, anchor_rel, shape_rel, out_of_bounds_policy="trim_to_shape")
    crop_shape = fn.shapes(cropped, dtype=types.FLOAT)
    crop_h = fn.slice(crop_shape, 0, 1, axes=[0])
    crop_w = fn.slice(crop_shape, 1, 1, axes=[0])
    mt_vertices = fn.transforms.crop(from_start=anchor_rel, from_end=(anchor_rel + shape_rel),
                                     to_start=(0.0, 0.0), to_end=fn.cat(crop_w, crop_h))
    abs_vertices = fn.coord_transform(sel_vertices, MT=mt_vertices)
    mt_bboxes = fn.transforms.crop(to_start=(0.0, 0.0, 0.0, 0.0),
                                   to_end=fn.cat(crop_w, crop_h, crop_w, crop_h))
    abs_bboxes = fn.coord_transform(crop_bboxes, MT=mt_bboxes)
    # The same steps with a fixed window and the first object's mask: no draw, so exact.
    fixed_anchor, fixed_shape = (0.1, 0.2), (0.5, 0.6)
    fixed_crop = fn.slice(to_device(images), fixed_anchor, fixed_shape)
    first_polygons, first_vertices = fn.segmentation.select_masks(
        polygons[0:1, 0], polygons, vertices, reindex_masks=True)
    mt_fixed = fn.transforms.crop(from_start=fixed_anchor, from_end=(0.6, 0.8),
                                  to_start=(0.0, 0.0), to_end=(640.0, 480.0))
    fixed_vertices = fn.coord_transform(first_vertices, MT=mt_fixed)
    return (images, bboxes, labels, polygons, vertices, anchor_rel, shape_rel, crop_bboxes,
            crop_labels, bbox_indices, sel_polygons, sel_vertices, cropped, mt_vertices,
            abs_vertices, abs_bboxes, fixed_crop, first_polygons, first_vertices, mt_fixed,
            fixed_vertices)


names = ["images", "bboxes", "labels", "polygons", "vertices", "anchor_rel", "shape_rel",
         "crop_bboxes", "crop_labels", "bbox_indices", "sel_polygons", "sel_vertices", "cropped",
         "mt_vertices", "abs_vertices", "abs_bboxes", "fixed_crop", "first_polygons",
         "first_vertices", "mt_fixed", "fixed_vertices"]
out = run(bbox_crop_pipe(), names, iterations=2)
for name in ("bboxes", "labels", "polygons", "vertices", "fixed_crop", "first_polygons",
             "first_vertices", "mt_fixed", "fixed_vertices"):
    RESULTS["crop_" + name] = out[name]
for name in ("anchor_rel", "shape_rel", "crop_bboxes", "crop_labels", "bbox_indices",
             "sel_polygons", "sel_vertices", "cropped", "mt_vertices", "abs_vertices",
             "abs_bboxes"):
    RESULTS["crop_" + name] = out[name]
    # follows from the drawn window: "shape" where the draw cannot change it
    COMPARE["crop_" + name] = "shape" if name in ("anchor_rel", "shape_rel",
                                                  "mt_vertices") else "kind"
checks = []
for k in range(len(out["images"])):
    image, cropped = out["images"][k], out["cropped"][k]
    a, s = out["anchor_rel"][k], out["shape_rel"][k]
    boxes, idx = out["crop_bboxes"][k], out["bbox_indices"][k]
    h, w = image.shape[:2]
    x0, y0 = int(round(a[0] * w)), int(round(a[1] * h))
    x1, y1 = int(round((a[0] + s[0]) * w)), int(round((a[1] + s[1]) * h))
    ch, cw = cropped.shape[:2]
    checks.append({
        "window_inside": bool(np.all(a >= 0) and np.all(a + s <= 1 + 1e-6)),
        "boxes_inside": bool(np.all(boxes >= 0) and np.all(boxes <= 1)),
        "counts_agree": len(boxes) == len(out["crop_labels"][k]) == len(idx),
        "labels_of_kept_boxes": bool(np.array_equal(out["crop_labels"][k],
                                                    out["labels"][k][idx])),
        "masks_of_kept_boxes": sorted(out["sel_polygons"][k][:, 0].tolist()) == sorted(
            idx.tolist()),
        "slice_is_numpy_cut": bool(np.array_equal(cropped, image[y0:y1, x0:x1])),
        "boxes_in_pixels": bool(np.allclose(out["abs_bboxes"][k], boxes * [cw, ch, cw, ch],
                                            atol=1e-3)),
        "vertices_in_pixels": bool(np.allclose(out["abs_vertices"][k],
                                               (out["sel_vertices"][k] - a) / s * [cw, ch],
                                               atol=1e-2)),
    })
RESULTS["crop_checks"] = checks


# --- paste + bbox_paste, flip + bb_flip + coord_flip -------------------------------------------
@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12345)
def paste_flip_pipe():
    inputs, bboxes, labels, polygons, vertices = coco_reader_def()
    images = to_device(fn.decoders.image(inputs))
    px = fn.random.uniform(range=(0, 1))
    py = fn.random.uniform(range=(0, 1))
    ratio = fn.random.uniform(range=(1, 2))
    pasted = fn.paste(images, paste_x=px, paste_y=py, ratio=ratio, fill_value=(32, 64, 128))
    pasted_bboxes = fn.bbox_paste(bboxes, paste_x=px, paste_y=py, ratio=ratio, ltrb=True)
    scale = 1.0 / ratio
    margin = ratio - 1.0
    px_1 = scale * px * margin
    py_1 = scale * py * margin
    ver_x = scale * fn.slice(vertices, 0, 1, axes=[1]) + px_1
    ver_y = scale * fn.slice(vertices, 1, 1, axes=[1]) + py_1
    pasted_vertices = fn.cat(ver_x, ver_y, axis=1)
    # The example's flips, "100% probability for demo purposes": the same on both libraries.
    should_flip = fn.random.coin_flip(probability=1.0)
    flipped = fn.flip(pasted, horizontal=should_flip)
    flipped_bboxes = fn.bb_flip(pasted_bboxes, horizontal=should_flip, ltrb=True)
    flipped_vertices = fn.coord_flip(pasted_vertices, flip_x=should_flip)
    # Fixed paste places and flips: exact.
    fixed = fn.paste(images, paste_x=0.25, paste_y=0.75, ratio=1.5, fill_value=(32, 64, 128))
    fixed_bboxes = fn.bbox_paste(bboxes, paste_x=0.25, paste_y=0.75, ratio=1.5, ltrb=True)
    return (images, bboxes, vertices, px, py, ratio, pasted, pasted_bboxes, pasted_vertices,
            flipped, flipped_bboxes, flipped_vertices,
            fn.flip(fixed, horizontal=should_flip, vertical=1), fixed_bboxes,
            fn.bb_flip(fixed_bboxes, horizontal=should_flip, vertical=1, ltrb=True),
            fn.bb_flip(bboxes, ltrb=True, horizontal=0, vertical=1),
            fn.coord_flip(vertices, flip_x=should_flip, flip_y=1, center_x=0.4),
            fn.coord_flip(vertices, flip_x=0, flip_y=1, center_y=0.75))


names = ["images", "bboxes", "vertices", "px", "py", "ratio", "pasted", "pasted_bboxes",
         "pasted_vertices", "flipped", "flipped_bboxes", "flipped_vertices", "fixed_flipped",
         "fixed_bboxes", "fixed_flipped_bboxes", "bb_flip_vertical", "coord_flip_center_x",
         "coord_flip_center_y"]
out = run(paste_flip_pipe(), names)
for name in names[6:]:
    RESULTS["paste_" + name] = out[name]
    if name in names[6:12]:  # follow from the drawn place and ratio (not the boxes' number)
        COMPARE["paste_" + name] = "kind" if name in ("pasted", "flipped") else "shape"
checks = []
fill = np.array([32, 64, 128], np.uint8)
for k in range(batch_size):
    image, pasted, flipped = out["images"][k], out["pasted"][k], out["flipped"][k]
    px, py, ratio = out["px"][k], out["py"][k], out["ratio"][k]
    h, w = image.shape[:2]
    ho, wo = int(np.float32(h) * ratio), int(np.float32(w) * ratio)
    y0, x0 = int(py * np.float32(ho - h)), int(px * np.float32(wo - w))
    outside = np.ones((ho, wo), bool)
    outside[y0:y0 + h, x0:x0 + w] = False
    moved = (out["bboxes"][k] + (ratio - 1) * np.array([px, py, px, py])) / ratio
    b = out["pasted_bboxes"][k]
    checks.append({
        "pasted_shape": pasted.shape == (ho, wo, 3),
        "image_in_place": bool(np.array_equal(pasted[y0:y0 + h, x0:x0 + w], image)),
        "filled_around": bool(np.all(pasted[outside] == fill)),
        "flipped_is_mirror": bool(np.array_equal(flipped, pasted[:, ::-1])),
        "boxes_moved": bool(np.allclose(out["pasted_bboxes"][k], moved, atol=1e-6)),
        "boxes_flipped": bool(np.allclose(out["flipped_bboxes"][k], np.stack(
            [1 - b[:, 2], b[:, 1], 1 - b[:, 0], b[:, 3]], axis=1), atol=1e-6)),
        "vertices_flipped": bool(np.allclose(out["flipped_vertices"][k][:, 0],
                                             1 - out["pasted_vertices"][k][:, 0], atol=1e-6)),
    })
RESULTS["paste_checks"] = checks


# --- pixel-wise masks: random_mask_pixel, random_object_bbox + roi_random_crop, slice ----------
@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=12345)
def mask_crop_pipe():
    inputs, bboxes, labels, masks = fn.readers.coco(
        file_root=file_root, annotations_file=annotations_file, pixelwise_masks=True)
    images = fn.decoders.image(inputs)
    masks = fn.reshape(masks, rel_shape=(1, 1), layout="HW")  # (H, W, 1) -> (H, W)
    # Foreground pixels with 70% probability, any pixel with 30% (the example)
    center = fn.segmentation.random_mask_pixel(
        masks, foreground=fn.random.coin_flip(probability=0.7))
    fg_center = fn.segmentation.random_mask_pixel(masks, foreground=1)
    crop_h = fn.cast(fn.random.uniform(range=(200, 300), shape=(1,), device="cpu"),
                     dtype=types.INT64)
    crop_w = fn.cast(fn.random.uniform(range=(200, 300), shape=(1,), device="cpu"),
                     dtype=types.INT64)
    crop_shape = fn.cat(crop_h, crop_w, axis=0)
    crop_anchor = center - crop_shape // 2
    out_image = fn.slice(to_device(images), crop_anchor, crop_shape, axis_names="HW",
                         out_of_bounds_policy="pad")
    out_mask = fn.slice(masks, crop_anchor, crop_shape, axis_names="HW",
                        out_of_bounds_policy="pad")
    # An object's box, and a 256x256 window around it (DALI's 3-D segmentation pipelines).
    roi_start, roi_end = fn.segmentation.random_object_bbox(masks, format="start_end")
    roi_anchor = fn.roi_random_crop(masks, roi_start=roi_start, roi_end=roi_end,
                                    crop_shape=(256, 256))
    roi_image = fn.slice(to_device(images), fn.cast(roi_anchor, dtype=types.INT32), (256, 256),
                         axis_names="HW", out_of_bounds_policy="pad")
    box, box_class = fn.segmentation.random_object_bbox(masks, format="box", output_class=True,
                                                        k_largest=1)
    return (images, masks, center, fg_center, crop_anchor, crop_shape, out_image, out_mask,
            roi_start, roi_end, roi_anchor, roi_image, box, box_class)


names = ["images", "masks", "center", "fg_center", "crop_anchor", "crop_shape", "out_image",
         "out_mask", "roi_start", "roi_end", "roi_anchor", "roi_image", "box", "box_class"]
out = run(mask_crop_pipe(), names)
RESULTS["mask_masks"] = out["masks"]
for name in names[2:]:
    RESULTS["mask_" + name] = out[name]
    COMPARE["mask_" + name] = "kind" if name in ("out_image", "out_mask") else "shape"
checks = []
for k in range(batch_size):
    image, mask = out["images"][k], out["masks"][k]
    h, w = mask.shape
    cy, cx = out["center"][k]
    fy, fx = out["fg_center"][k]
    ch, cw = out["crop_shape"][k]
    s, e, a = out["roi_start"][k], out["roi_end"][k], out["roi_anchor"][k]
    blob = mask[s[0]:e[0], s[1]:e[1]]
    lo, hi = out["box"][k][:2], out["box"][k][2:]
    checks.append({
        "center_inside": bool(0 <= cy < h and 0 <= cx < w),
        "foreground_center": bool(mask[fy, fx] > 0),
        "crop_shape": out["out_image"][k].shape == (ch, cw, 3) == out["out_mask"][k].shape + (3,),
        "center_at_crop_middle": bool(out["out_mask"][k][ch // 2, cw // 2] == mask[cy, cx] and
                                      np.array_equal(out["out_image"][k][ch // 2, cw // 2],
                                                     image[cy, cx])),
        "object_box_tight": bool(blob.any() and blob[0].any() and blob[-1].any() and
                                 blob[:, 0].any() and blob[:, -1].any()),
        "window_holds_object": bool(all(
            (a[d] <= s[d] and a[d] + 256 >= e[d]) if e[d] - s[d] <= 256 else
            (s[d] <= a[d] and a[d] + 256 <= e[d]) for d in range(2))),
        "window_inside_image": bool(all(0 <= a[d] <= mask.shape[d] - 256 for d in range(2))),
        "box_of_class": bool(np.any(mask[lo[0]:hi[0], lo[1]:hi[1]] == out["box_class"][k])),
    })
RESULTS["mask_checks"] = checks
