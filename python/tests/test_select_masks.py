"""segmentation.select_masks: against a numpy reference (every polygon of each selected mask,
in mask_ids order, vertices renumbered), on readers.coco's own polygons too, and errors."""
import os

import numpy as np
import pytest

import stoker
from stoker import fn


def _run(ids, polygons, vertices, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(ids), num_threads=2, seed=1)
    with pipe:
        m = fn.external_source(lambda: ids)
        p = fn.external_source(lambda: polygons)
        v = fn.external_source(lambda: vertices)
        pipe.set_outputs(*fn.segmentation.select_masks(m, p, v, **kwargs))
    po, vo = pipe.run()
    return [np.array(s) for s in po], [np.array(s) for s in vo]


def reference(ids, polygons, vertices, reindex):
    out_p, out_v = [], []
    for k, mask in enumerate(ids):
        for mask_id, first, end in polygons:
            if mask_id == mask:
                out_p.append([k if reindex else mask_id, len(out_v), len(out_v) + end - first])
                out_v.extend(vertices[first:end])
    return np.int32(out_p).reshape(-1, 3), np.array(out_v).reshape(-1, vertices.shape[1])


@pytest.mark.parametrize("reindex", [False, True])
def test_selects_every_polygon_of_the_chosen_masks(reindex):
    polygons = [np.int32([[0, 0, 3], [1, 3, 7], [2, 7, 10], [0, 10, 13], [2, 13, 16]]),
                np.int32([[4, 0, 4]])]
    ids = [np.int32([2, 0]), np.int32([4])]
    for dtype in (np.float32, np.int16):  # any vertex type, any number of coordinates
        vertices = [np.arange(32, dtype=dtype).reshape(16, 2), np.arange(12, dtype=dtype).reshape(4, 3)]
        got_p, got_v = _run(ids, polygons, vertices, reindex_masks=reindex)
        for i in range(2):
            ref_p, ref_v = reference(ids[i], polygons[i], vertices[i], reindex)
            np.testing.assert_array_equal(got_p[i], ref_p)
            np.testing.assert_array_equal(got_v[i], ref_v)
            assert got_v[i].dtype == dtype


def test_on_the_coco_readers_polygons(shared_data):
    root = os.path.join(shared_data, "photos", "dali-coco")
    pipe = stoker.Pipeline(batch_size=8, num_threads=1, seed=1)
    with pipe:
        _, _, labels, polygons, vertices = fn.readers.coco(
            file_root=os.path.join(root, "images"),
            annotations_file=os.path.join(root, "instances.json"), polygon_masks=True)
        ids = fn.external_source(lambda: [np.int32([0])] * 8)
        pipe.set_outputs(polygons, vertices, *fn.segmentation.select_masks(ids, polygons, vertices))
    p_in, v_in, p_out, v_out = (list(map(np.array, b)) for b in pipe.run())
    for pi, vi, po, vo in zip(p_in, v_in, p_out, v_out):
        ref_p, ref_v = reference([0], pi, vi, False)
        np.testing.assert_array_equal(po, ref_p)
        np.testing.assert_array_equal(vo, ref_v)


def test_errors_name_what_is_wrong():
    polygons = [np.int32([[0, 0, 3]])]
    vertices = [np.float32(np.zeros((3, 2)))]
    with pytest.raises(ValueError, match="mask id 5 has no polygon"):
        _run([np.int32([5])], polygons, vertices)
    with pytest.raises(ValueError, match="mask id 0 is selected twice"):
        _run([np.int32([0, 0])], polygons, vertices)
    with pytest.raises(ValueError, match=r"polygon 0 has vertices \[0, 3\) of 2"):
        _run([np.int32([0])], polygons, [np.float32(np.zeros((2, 2)))])
