"""readers.coco against DALI 2.4 on DALI's own COCO subset (DALI_extra's db/coco, in
../shared/data/photos/dali-coco) and on crowd RLE masks written here: every output of every
sample equal, for each combination of the reader's arguments, over epochs and shards."""

import json
import os

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"readers.coco": "exact"}

CASES = [
    {"polygon_masks": True},
    {"polygon_masks": True, "ratio": True, "ltrb": True, "skip_empty": True},
    {"pixelwise_masks": True, "image_ids": True},
    {"include_iscrowd": False, "avoid_class_remapping": True, "size_threshold": 60.0,
     "image_ids": True},
]


@pytest.fixture(scope="module")
def coco(shared_data):
    return os.path.join(shared_data, "photos", "dali-coco")


def coco_reader(root, annotations=None, **kwargs):
    annotations = annotations or os.path.join(root, "instances.json")

    def define(fn, types):
        return tuple(fn.readers.coco(file_root=os.path.join(root, "images"),
                                     annotations_file=annotations, **kwargs))

    return define


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(c))
def test_every_output_equals_dalis(coco, case):
    # 61 images in batches of 16: the fourth batch crosses into the second epoch.
    ours, theirs = (run(lib, coco_reader(coco, **case), 16, iterations=5)
                    for lib in ("stoker", "dali"))
    for it, (a, b) in enumerate(zip(ours, theirs)):
        assert len(a) == len(b)
        for k in range(len(a)):
            assert_same(a[k], b[k], what=f"iteration {it} output {k}")


@pytest.mark.parametrize("loader", [
    {"shard_id": 1, "num_shards": 3},
    {"shard_id": 2, "num_shards": 3, "stick_to_shard": True, "pad_last_batch": True},
    {"shuffle_after_epoch": True},
    {"images": ["cat-323262_1280.jpg", "apple-256261_1280.jpg", "cat-323262_1280.jpg"]},
], ids=lambda c: ",".join(c))
def test_sharding_shuffles_and_image_lists_are_dalis(coco, loader):
    ours, theirs = (run(lib, coco_reader(coco, image_ids=True, **loader), 7, iterations=6)
                    for lib in ("stoker", "dali"))
    ids = [[int(s[0]) for s in it[3]] for it in ours]
    assert ids == [[int(s[0]) for s in it[3]] for it in theirs]
    for a, b in zip(ours, theirs):
        for k in range(3):
            assert_same(a[k], b[k])


def test_crowd_rle_masks_equal_dalis(coco, tmp_path):
    """Crowd RLEs (compressed strings and lists of counts) beside polygons of other categories:
    DALI's rules agree with ours there (one RLE per category; docs/dali_differences.md says
    where they do not)."""
    with open(os.path.join(coco, "instances.json")) as f:
        data = json.load(f)
    rng = np.random.default_rng(5)
    images = sorted(data["images"], key=lambda im: im["id"])[:6]
    keep = {im["id"] for im in images}
    data["images"] = images
    data["annotations"] = [a for a in data["annotations"] if a["image_id"] in keep]
    used = {}
    for a in data["annotations"]:
        used.setdefault(a["image_id"], set()).add(a["category_id"])
    for n, im in enumerate(images):
        free = [c["id"] for c in data["categories"] if c["id"] not in used.get(im["id"], set())]
        h, w = im["height"], im["width"]
        bits = np.zeros((h, w), np.uint8)
        y, x = rng.integers(0, h // 2), rng.integers(0, w // 2)
        bits[y:y + h // 3, x:x + w // 4] = 1
        flat = bits.flatten(order="F")
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(flat)) + 1, [flat.size]])
        counts = np.diff(bounds).tolist()
        if flat[0]:
            counts = [0] + counts
        if n % 2:
            from pycocotools import mask as mask_utils
            counts = mask_utils.frPyObjects({"size": [h, w], "counts": counts}, h, w)["counts"]
            counts = counts.decode()
        data["annotations"].append({"id": 10000 + n, "image_id": im["id"], "iscrowd": 1,
                                    "category_id": free[0], "bbox": [float(x), float(y), 9.0, 9.0],
                                    "segmentation": {"size": [h, w], "counts": counts}})
    path = tmp_path / "crowd.json"
    path.write_text(json.dumps(data))
    ours, theirs = (run(lib, coco_reader(coco, str(path), pixelwise_masks=True), 6)
                    for lib in ("stoker", "dali"))
    for k in range(4):
        assert_same(ours[0][k], theirs[0][k], what=f"output {k}")
    assert any(int(s.max()) > 0 for s in ours[0][3])


def test_masks_where_dali_drops_crowds_differ_as_documented(tmp_path):
    """docs/dali_differences.md: DALI keeps only the last crowd RLE of a category, and none of
    a category that also has polygons in the image; stoker draws every object."""
    h, w = 10, 12

    def counts(bits):
        flat = bits.flatten(order="F")
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(flat)) + 1, [flat.size]])
        c = np.diff(bounds).tolist()
        return [0] + c if flat[0] else c

    first, second, third = (np.zeros((h, w), np.uint8) for _ in range(3))
    first[0:3, 0:3] = second[5:8, 5:8] = third[7:10, 0:3] = 1
    crowd = {"image_id": 1, "bbox": [0, 0, 3, 3], "iscrowd": 1}
    data = {"images": [{"id": 1, "file_name": "a.jpg", "width": w, "height": h}],
            "categories": [{"id": 1}, {"id": 2}],
            "annotations": [
                {**crowd, "category_id": 1, "segmentation": {"size": [h, w], "counts": counts(first)}},
                {**crowd, "category_id": 1, "segmentation": {"size": [h, w], "counts": counts(second)}},
                {"image_id": 1, "category_id": 2, "bbox": [8, 0, 3, 3], "iscrowd": 0,
                 "segmentation": [[8, 0, 11, 0, 11, 3, 8, 3]]},
                {**crowd, "category_id": 2, "segmentation": {"size": [h, w], "counts": counts(third)}},
            ]}
    (tmp_path / "a.jpg").write_bytes(b"x")
    (tmp_path / "i.json").write_text(json.dumps(data))

    def define(fn, types):
        return tuple(fn.readers.coco(file_root=str(tmp_path), annotations_file=str(tmp_path / "i.json"),
                                     pixelwise_masks=True))

    ours, theirs = (run(lib, define, 1)[0][3][0][:, :, 0] for lib in ("stoker", "dali"))
    square = np.zeros((h, w), np.int32)
    square[0:3, 8:11] = 2
    np.testing.assert_array_equal(theirs, square + second.astype(np.int32))
    np.testing.assert_array_equal(ours, square + first + second + 2 * third.astype(np.int32))
