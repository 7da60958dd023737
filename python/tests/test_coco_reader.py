"""readers.coco: outputs against references computed here from the annotation file itself
(numpy), pixel-wise masks against pycocotools (real annotations and random polygons and crowd
RLEs), the reader's arguments, and its errors. The parity suite compares it with DALI."""

import json
import os

import numpy as np
import pytest

import stoker
import stoker.fn as fn

mask_utils = pytest.importorskip("pycocotools.mask", reason="pycocotools (scripts/setup installs it)")


def run_reader(batch_size, iterations=1, **kwargs):
    """[iteration][output] -> list of numpy samples."""

    @stoker.pipeline_def(batch_size=batch_size, num_threads=1, seed=3)
    def pipe_def():
        return tuple(fn.readers.coco(**kwargs))

    pipe = pipe_def()
    pipe.build()
    out = []
    for _ in range(iterations):
        out.append([[np.array(b.at(i)) for i in range(len(b))] for b in pipe.run()])
    return out


@pytest.fixture(scope="module")
def coco(shared_data):
    root = os.path.join(shared_data, "photos", "dali-coco")
    with open(os.path.join(root, "instances.json")) as f:
        return root, json.load(f)


def reference(data, ltrb=False, ratio=False, skip_empty=False, size_threshold=0.1,
              include_iscrowd=True, avoid_class_remapping=False, images=None):
    """What readers.coco should give, per sample: (file_name, boxes, labels, polygons,
    vertices, image_id), written from DALI's documentation of the reader."""
    numbers = {}
    for k, c in enumerate(data["categories"]):
        numbers.setdefault(c["id"], k + 1)
    by_name = {im["file_name"]: im for im in data["images"]}
    order = ([by_name[n] for n in images] if images
             else sorted(data["images"], key=lambda im: im["id"]))
    out = []
    for im in order:
        boxes, labels, polygons, vertices = [], [], [], []
        for a in data["annotations"]:
            x, y, w, h = a["bbox"]
            if a["image_id"] != im["id"] or w < size_threshold or h < size_threshold:
                continue
            if a.get("iscrowd", 0) and not include_iscrowd:
                continue
            box = [x, y, x + w, y + h] if ltrb else [x, y, w, h]
            scale = np.array([im["width"], im["height"]] * 2, np.float32) if ratio else 1
            boxes.append(np.float32(box) / scale)
            labels.append(a["category_id"] if avoid_class_remapping else numbers[a["category_id"]])
            for poly in a["segmentation"]:
                v = np.float32(poly).reshape(-1, 2)
                if ratio:
                    v = v / np.float32([im["width"], im["height"]])
                polygons.append([len(labels) - 1, len(vertices), len(vertices) + len(v)])
                vertices.extend(v)
        if skip_empty and not labels:
            continue
        out.append((im["file_name"], np.float32(boxes).reshape(-1, 4), np.int32(labels),
                    np.int32(polygons).reshape(-1, 3), np.float32(vertices).reshape(-1, 2),
                    im["id"]))
    return out


OPTION_SETS = [
    {},
    {"ltrb": True, "ratio": True},
    {"skip_empty": True, "size_threshold": 120.0},
    {"include_iscrowd": False, "avoid_class_remapping": True},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(o) or "defaults")
def test_outputs_match_the_annotations(coco, options):
    root, data = coco
    ref = reference(data, **options)
    out = run_reader(len(ref), file_root=os.path.join(root, "images"),
                     annotations_file=os.path.join(root, "instances.json"), polygon_masks=True,
                     image_ids=True, **options)[0]
    images, boxes, labels, polygons, vertices, ids = out
    assert len(images) == len(ref)
    for i, (name, rb, rl, rp, rv, rid) in enumerate(ref):
        assert boxes[i].dtype == np.float32 and labels[i].dtype == np.int32
        np.testing.assert_array_equal(boxes[i], rb, err_msg=name)
        np.testing.assert_array_equal(labels[i], rl, err_msg=name)
        np.testing.assert_array_equal(polygons[i], rp, err_msg=name)
        np.testing.assert_array_equal(vertices[i], rv, err_msg=name)
        assert ids[i].tolist() == [rid]
    with open(os.path.join(root, "images", ref[0][0]), "rb") as f:
        assert images[0].tobytes() == f.read()


def pycocotools_labels(annotations, height, width, label_of):
    """The label image: each object's mask by pycocotools, the larger label where they overlap."""
    out = np.zeros((height, width), np.int32)
    for a in annotations:
        seg = a["segmentation"]
        if isinstance(seg, list):
            # (pycocotools reads a first polygon of two vertices as a box: repeating a vertex
            # keeps the outline and the rule's result.)
            seg = [p + p[:2] if len(p) == 4 else p for p in seg]
            rle = mask_utils.merge(mask_utils.frPyObjects(seg, height, width))
        elif isinstance(seg["counts"], list):
            rle = mask_utils.frPyObjects(seg, height, width)
        else:
            rle = seg
        out = np.maximum(out, mask_utils.decode(rle).astype(np.int32) * label_of(a))
    return out


def test_pixelwise_masks_match_pycocotools(coco):
    root, data = coco
    numbers = {c["id"]: k + 1 for k, c in enumerate(data["categories"])}
    images = sorted(data["images"], key=lambda im: im["id"])
    out = run_reader(len(images), file_root=os.path.join(root, "images"),
                     annotations_file=os.path.join(root, "instances.json"),
                     pixelwise_masks=True)[0]
    masks = out[3]
    for im, mask in zip(images, masks):
        assert mask.shape == (im["height"], im["width"], 1) and mask.dtype == np.int32
        anns = [a for a in data["annotations"] if a["image_id"] == im["id"]]
        ref = pycocotools_labels(anns, im["height"], im["width"],
                                 lambda a: numbers[a["category_id"]])
        np.testing.assert_array_equal(mask[:, :, 0], ref, err_msg=im["file_name"])


def random_polygon(rng, width, height):
    """Vertices with one decimal (as COCO's), some on the rule's rounding boundaries
    (k/5 - 0.1) and some a little outside the image."""
    n = int(rng.integers(3, 9))
    xs = np.round(rng.uniform(-3, width + 3, n), 1)
    ys = np.round(rng.uniform(-3, height + 3, n), 1)
    edge = rng.random(n) < 0.3
    xs[edge] = np.round(rng.integers(0, 5 * width, edge.sum()) / 5 - 0.1, 1)
    return [float(c) for xy in zip(xs, ys) for c in xy]


@pytest.fixture(scope="module")
def random_masks(tmp_path_factory):
    """Images of odd sizes with overlapping random polygons, crowd RLEs as pycocotools
    compresses them and as lists of counts."""
    rng = np.random.default_rng(7)
    root = tmp_path_factory.mktemp("coco_masks")
    data = {"images": [], "annotations": [], "categories": [{"id": 10 + k} for k in range(5)]}
    for i, (h, w) in enumerate([(13, 17), (40, 31), (1, 9), (64, 64), (25, 3), (50, 70)]):
        name = f"im{i}.jpg"
        (root / name).write_bytes(bytes([i]) * 5)
        data["images"].append({"id": 100 - i, "file_name": name, "width": w, "height": h})
        for _ in range(int(rng.integers(1, 6))):
            a = {"image_id": 100 - i, "category_id": int(rng.integers(10, 15)),
                 "bbox": [0, 0, 1, 1], "iscrowd": 0}
            kind = rng.random()
            if kind < 0.6:
                a["segmentation"] = [random_polygon(rng, w, h) for _ in range(rng.integers(1, 3))]
            else:
                bits = np.asfortranarray(rng.random((h, w)) < 0.3, dtype=np.uint8)
                rle = mask_utils.encode(bits)
                if kind < 0.8:
                    a["segmentation"] = {"size": [h, w], "counts": rle["counts"].decode()}
                else:
                    flat = bits.flatten(order="F")
                    change = np.flatnonzero(np.diff(flat)) + 1
                    bounds = np.concatenate([[0], change, [flat.size]])
                    counts = np.diff(bounds).tolist()
                    if flat[0]:
                        counts = [0] + counts
                    a["segmentation"] = {"size": [h, w], "counts": counts}
                a["iscrowd"] = 1
            data["annotations"].append(a)
    path = root / "instances.json"
    path.write_text(json.dumps(data))
    return root, data


def test_random_polygons_and_rles_match_pycocotools(random_masks):
    root, data = random_masks
    images = sorted(data["images"], key=lambda im: im["id"])
    out = run_reader(len(images), file_root=str(root),
                     annotations_file=str(root / "instances.json"), pixelwise_masks=True,
                     avoid_class_remapping=True)[0]
    for im, mask in zip(images, out[3]):
        anns = [a for a in data["annotations"] if a["image_id"] == im["id"]]
        ref = pycocotools_labels(anns, im["height"], im["width"], lambda a: a["category_id"])
        np.testing.assert_array_equal(mask[:, :, 0], ref, err_msg=im["file_name"])
    assert out[3][0].shape == (50, 70, 1)


def test_images_argument_picks_orders_and_repeats(coco):
    root, data = coco
    names = [data["images"][5]["file_name"], data["images"][2]["file_name"],
             data["images"][5]["file_name"]]
    ref = reference(data, images=names)
    out = run_reader(3, file_root=os.path.join(root, "images"),
                     annotations_file=os.path.join(root, "instances.json"), images=names)[0]
    for i in range(3):
        np.testing.assert_array_equal(out[1][i], ref[i][1])
        np.testing.assert_array_equal(out[2][i], ref[i][2])


def test_shards_split_the_images_and_an_epoch_reads_each_once(coco):
    root, data = coco
    args = dict(file_root=os.path.join(root, "images"),
                annotations_file=os.path.join(root, "instances.json"), image_ids=True)
    ids = []
    for shard in range(2):
        out = run_reader(10, iterations=4, shard_id=shard, num_shards=2, **args)
        ids += [int(s[0]) for it in out for s in it[3]][:30 if shard == 0 else 31]
    assert sorted(ids) == sorted(im["id"] for im in data["images"])
    out = run_reader(61, random_shuffle=True, initial_fill=16, **args)[0]
    shuffled = [int(s[0]) for s in out[3]]
    assert sorted(shuffled) == sorted(im["id"] for im in data["images"])
    assert shuffled != sorted(shuffled)


def write_annotations(tmp_path, data):
    path = tmp_path / "instances.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def build_error(**kwargs):
    @stoker.pipeline_def(batch_size=2, num_threads=1)
    def pipe_def():
        return tuple(fn.readers.coco(**kwargs))

    pipe = pipe_def()
    pipe.build()
    pipe.run()


def test_errors_name_the_operator_file_and_entry(tmp_path):
    good = {"images": [{"id": 1, "file_name": "a.jpg", "width": 4, "height": 4}],
            "annotations": [{"image_id": 1, "category_id": 5, "bbox": [0, 0, 2, 2],
                             "segmentation": [[0, 0, 2, 0, 2, 2]]}],
            "categories": [{"id": 5}]}
    with pytest.raises(ValueError, match=r"readers\.coco.*instances\.json: not valid JSON"):
        build_error(annotations_file=write_annotations(tmp_path, '{"images": [1, }'),
                    file_root=str(tmp_path))
    bad = json.loads(json.dumps(good))
    bad["annotations"][0]["category_id"] = 6
    with pytest.raises(ValueError, match=r"annotations\[0\]: category_id 6 is not in 'categories'"):
        build_error(annotations_file=write_annotations(tmp_path, bad), file_root=str(tmp_path))
    with pytest.raises(ValueError, match="polygon_masks and pixelwise_masks cannot both be set"):
        build_error(annotations_file=write_annotations(tmp_path, good), polygon_masks=True,
                    pixelwise_masks=True)
    with pytest.raises(ValueError, match=r"gives no images to read \(skip_empty is set\)"):
        build_error(annotations_file=write_annotations(tmp_path, good), skip_empty=True,
                    size_threshold=3.0)
    with pytest.raises(ValueError, match=r"images\[0\] 'b\.jpg' is not an image of"):
        build_error(annotations_file=write_annotations(tmp_path, good), images=["b.jpg"])
    with pytest.raises(IOError, match="cannot read annotations_file"):
        build_error(annotations_file=str(tmp_path / "missing.json"))
    # The image file itself is missing: the error names it.
    with pytest.raises(Exception, match=r"a\.jpg"):
        build_error(annotations_file=write_annotations(tmp_path, good), file_root=str(tmp_path))
