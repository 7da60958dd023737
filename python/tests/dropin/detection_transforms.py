# DALI's detection training and geometry examples, on the COCO photos: the SSD training
# pipeline (docs/examples/use_cases/pytorch/single_stage_detector: ssd_random_crop, SSD300's
# default boxes made here, box_encoder with offsets), bbox_rotate (boxes turned with the image),
# the geometric transforms example (docs/examples/math/geometric_transforms: transforms.* about
# the image centre, combined and applied to box corners with coord_transform), and image
# augmentations from the augmentation gallery and the Erase example (docs/examples/
# image_processing/augmentation_gallery, docs/examples/general/erase: erase, multi_paste mosaic,
# random_resized_crop, random_crop_generator + slice, jitter on the GPU). Written for
# nvidia.dali; the data folder and device come from the environment.
#
# Random draws differ between the libraries by design (docs/dali_differences.md): what follows
# from a draw compares by "shape"/"kind", and the script checks what holds for any draw,
# recording booleans.
import itertools
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


def dboxes300_coco():
    """SSD300's default boxes (the SSD example's DefaultBoxes), as a flat ltrb list."""
    fig_size, feat_size, steps = 300, [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300]
    scales, aspect_ratios = [21, 45, 99, 153, 207, 261, 315], [[2], [2, 3], [2, 3], [2, 3], [2],
                                                                 [2]]
    boxes = []
    for idx, sfeat in enumerate(feat_size):
        sk1, sk2 = scales[idx] / fig_size, scales[idx + 1] / fig_size
        sizes = [(sk1, sk1), (np.sqrt(sk1 * sk2),) * 2]
        for alpha in aspect_ratios[idx]:
            w, h = sk1 * np.sqrt(alpha), sk1 / np.sqrt(alpha)
            sizes += [(w, h), (h, w)]
        for w, h in sizes:
            for i, j in itertools.product(range(sfeat), repeat=2):
                cx, cy = (j + 0.5) * steps[idx] / fig_size, (i + 0.5) * steps[idx] / fig_size
                boxes.append((cx, cy, w, h))
    boxes = np.clip(np.array(boxes), 0, 1)
    ltrb = np.concatenate([boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2], 1)
    return ltrb.astype(np.float32).ravel().tolist()


def run(pipe, names):
    pipe.build()
    return {name: [np.array(b.as_cpu().at(i)) for i in range(batch_size)]
            for name, b in zip(names, pipe.run())}


def to_device(images):
    return images.gpu() if device_id is not None else images


# --- SSD: box_encoder, ssd_random_crop; bbox_rotate; transforms.* + coord_transform -----------
@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=42)
def ssd_pipe():
    inputs, bboxes, labels = fn.readers.coco(file_root=file_root,
                                             annotations_file=annotations_file, ratio=True,
                                             ltrb=True, skip_empty=True)
    images = fn.decoders.image(inputs, output_type=types.RGB)
    shape = fn.peek_image_shape(inputs)
    # SSD's training step (its deprecated crop: the example's older form)
    crop_images, crop_bboxes, crop_labels = fn.ssd_random_crop(images, bboxes, labels)
    enc_bboxes, enc_labels = fn.box_encoder(bboxes, labels, criteria=0.5,
                                            anchors=dboxes300_coco(), offset=True,
                                            stds=[0.1, 0.1, 0.2, 0.2], scale=1.0)
    plain_bboxes, plain_labels = fn.box_encoder(bboxes, labels, anchors=dboxes300_coco())
    rot_bboxes, rot_labels = fn.bbox_rotate(bboxes, labels, angle=30.0, input_shape=shape,
                                            shape_layout="HWC", keep_size=True)
    exp_bboxes = fn.bbox_rotate(bboxes, angle=-15.0, input_shape=shape, shape_layout="HWC",
                                mode="halfway")
    # The geometric transforms example: about the image centre, in pixels.
    size = fn.cast(shape[1::-1], dtype=types.FLOAT)  # (W, H)
    center = size / 2
    tr1 = fn.transforms.translation(offset=-center)
    tr2 = fn.transforms.translation(offset=center)
    rot = fn.transforms.rotation(angle=30.0)
    scl = fn.transforms.scale(scale=[1.2, 0.8])
    shr = fn.transforms.shear(angles=[10.0, 0.0])
    mt = fn.transforms.combine(tr1, rot, scl, shr, tr2)
    corners = fn.coord_transform(fn.reshape(bboxes, shape=[-1, 2]),
                                 MT=fn.transforms.scale(scale=size))
    moved = fn.coord_transform(corners, MT=mt)
    about = fn.transforms.rotation(angle=fn.random.uniform(range=(-90, 90)), center=center)
    sheared = fn.transforms.shear(shear=[0.1, -0.2], center=center, reverse_order=True)
    return (images, bboxes, labels, crop_images, crop_bboxes, crop_labels, enc_bboxes,
            enc_labels, plain_bboxes, plain_labels, rot_bboxes, rot_labels, exp_bboxes, center,
            tr1, rot, scl, shr, mt, corners, moved, about, fn.transforms.combine(mt, sheared))


names = ["images", "bboxes", "labels", "crop_images", "crop_bboxes", "crop_labels",
         "enc_bboxes", "enc_labels", "plain_bboxes", "plain_labels", "rot_bboxes", "rot_labels",
         "exp_bboxes", "center", "tr1", "rot", "scl", "shr", "mt", "corners", "moved", "about",
         "combined"]
out = run(ssd_pipe(), names)
for name in names[3:]:
    RESULTS["ssd_" + name] = out[name]
COMPARE.update({"ssd_crop_images": "kind", "ssd_crop_bboxes": "kind", "ssd_crop_labels": "kind",
                "ssd_about": "shape"})
checks = []
for k in range(batch_size):
    image, boxes = out["images"][k], out["crop_bboxes"][k]
    r = np.vstack([out["about"][k], [0, 0, 1]])
    c = out["center"][k]
    checks.append({
        "crop_within_image": all(a <= b for a, b in zip(out["crop_images"][k].shape,
                                                         image.shape)),
        "crop_boxes_inside": bool(np.all(boxes >= 0) and np.all(boxes <= 1)),
        "crop_labels_per_box": len(boxes) == len(out["crop_labels"][k]),
        "rotation_keeps_center": bool(np.allclose(r @ [c[0], c[1], 1], [c[0], c[1], 1],
                                                  atol=1e-3)),
        "rotation_is_rigid": bool(np.isclose(np.linalg.det(r[:2, :2]), 1, atol=1e-5)),
    })
RESULTS["ssd_checks"] = checks


# --- image augmentations: erase, multi_paste, random_resized_crop, random_crop_generator, jitter
TILE = (240, 320)
mosaic_ids = [np.int32([k, (k + 1) % batch_size, (k + 2) % batch_size, (k + 3) % batch_size])
              for k in range(batch_size)]


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=7)
def augment_pipe():
    inputs, _, _ = fn.readers.coco(file_root=file_root, annotations_file=annotations_file)
    shape = fn.peek_image_shape(inputs)
    images = to_device(fn.decoders.image(inputs, output_type=types.RGB))
    # The Erase example: absolute and normalized regions, two regions, a centred anchor.
    erased = fn.erase(images, anchor=[50, 15], shape=[200, 300], axis_names="HW",
                      fill_value=(118, 185, 0))
    erased_rel = fn.erase(images, anchor=[0.3, 0.2, 0.6, 0.5], shape=[0.1, 0.4, 0.2, 0.1],
                          normalized_anchor=True, normalized_shape=True, axis_names="HW",
                          fill_value=0)
    erased_centered = fn.erase(images, anchor=[0.5, 0.5], shape=[0.25, 0.25], normalized=True,
                               centered_anchor=True, axis_names="HW", fill_value=255)
    erased_w = fn.erase(images, anchor=[0.1], shape=[0.3], normalized=True, axis_names="W")
    rand_anchor = fn.random.uniform(range=(0, 0.75), shape=(2,))
    erased_random = fn.erase(images, anchor=rand_anchor, shape=[0.25, 0.25], normalized=True,
                             axis_names="HW", fill_value=(1, 2, 3))
    # A 2x2 mosaic of four photos' top-left tiles (each sample its own order).
    tiles = fn.crop(images, crop=TILE, crop_pos_x=0.0, crop_pos_y=0.0)
    ids = fn.external_source(source=lambda: mosaic_ids, batch=True)
    mosaic = fn.multi_paste(tiles, in_ids=ids, output_size=[2 * TILE[0], 2 * TILE[1]],
                            out_anchors=np.int32([[0, 0], [0, TILE[1]], [TILE[0], 0], TILE]),
                            shapes=np.int32([TILE] * 4))
    rrc = fn.random_resized_crop(images, size=[128, 128])
    anchor, window = fn.random_crop_generator(shape, random_area=[0.3, 1.0])
    cut = fn.slice(images, anchor, window, axis_names="HW")
    outs = [images, erased, erased_rel, erased_centered, erased_w, rand_anchor, erased_random,
            tiles, mosaic, rrc, anchor, window, cut]
    if device_id is not None:  # DALI's jitter runs on the GPU only
        outs += [fn.jitter(images, nDegree=2),
                 fn.jitter(images, mask=fn.random.coin_flip(probability=0.0))]
    return tuple(outs)


names = ["images", "erased", "erased_rel", "erased_centered", "erased_w", "rand_anchor",
         "erased_random", "tiles", "mosaic", "rrc", "anchor", "window", "cut", "jitter",
         "jitter_masked"]
out = run(augment_pipe(), names)
for name in names[1:]:
    if name in out:
        RESULTS["aug_" + name] = out[name]
# Drawn: the erased place, the windows of random_resized_crop and random_crop_generator.
COMPARE.update({"aug_rand_anchor": "shape", "aug_erased_random": "shape", "aug_rrc": "shape",
                "aug_anchor": "shape", "aug_window": "shape", "aug_cut": "kind",
                "aug_jitter": "shape"})
checks = []
for k in range(batch_size):
    image, h, w = out["images"][k], *out["images"][k].shape[:2]
    ay, ax = (out["rand_anchor"][k] * [h, w]).astype(int)
    region = np.zeros((h, w), bool)  # the erased box, a pixel wider (float32 rounding)
    region[max(ay - 1, 0):ay + h // 4 + 2, max(ax - 1, 0):ax + w // 4 + 2] = True
    er = out["erased_random"][k]
    (y0, x0), (ch, cw) = out["anchor"][k], out["window"][k]
    check = {
        "erase_outside_unchanged": bool(np.array_equal(er[~region], image[~region])),
        "erase_fills_region": bool(np.all(er[ay + 1:ay + h // 4 - 1, ax + 1:ax + w // 4 - 1] ==
                                          [1, 2, 3])),
        "window_inside": bool(y0 >= 0 and x0 >= 0 and y0 + ch <= h and x0 + cw <= w),
        "window_area": bool(0.3 * h * w - 1 <= ch * cw <= h * w),
        "slice_is_numpy_cut": bool(np.array_equal(out["cut"][k], image[y0:y0 + ch, x0:x0 + cw])),
    }
    if "jitter" in out:
        jit = out["jitter"][k].astype(int)
        pad = np.pad(image, ((1, 0), (1, 0), (0, 0)), mode="edge").astype(int)
        near = [pad[1 - dy:1 - dy + h, 1 - dx:1 - dx + w] for dy in (0, 1) for dx in (0, 1)]
        check["jitter_moves_by_one"] = bool(np.all(np.any([jit == n for n in near], axis=0)))
        check["jitter_mask_0_unchanged"] = bool(np.array_equal(out["jitter_masked"][k], image))
    checks.append(check)
RESULTS["aug_checks"] = checks
