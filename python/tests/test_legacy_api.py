"""The scripts of DALI's first years, written out as DALI's talks, examples and getting-started
notebooks of 2018-2019 wrote them, with only the imports changed (``nvidia.dali.ops`` ->
``stoker.ops`` and so on): Pipeline subclasses with define_graph and iter_setup, operators made
once as classes (old names and old arguments included), feed_input. They run as written on a
GPU, and on the CPU here with STOKER_FORCE_CPU=1 (which puts their "mixed" and "gpu" operators on
the CPU backends). Each old spelling warns once, naming today's; the translations of the old
arguments are checked for what they meant."""

import os
import warnings

import numpy as np
import pytest

import stoker
from stoker import _stoker
# was: from nvidia.dali.pipeline import Pipeline / import nvidia.dali.ops as ops / types
from stoker import Pipeline
from stoker import ops
from stoker import types


@pytest.fixture
def device_id(monkeypatch):
    """0, the scripts' device: the GPU where there is one, else their operators on the CPU."""
    if not _stoker.cuda_available():
        monkeypatch.setenv("STOKER_FORCE_CPU", "1")
    return 0


def deprecations(record):
    return sorted({str(w.message) for w in record if w.category is DeprecationWarning})


def test_simple_pipeline_of_the_getting_started_notebook(jpeg_folder, device_id):
    image_dir = jpeg_folder
    batch_size = 8

    class SimplePipeline(Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super(SimplePipeline, self).__init__(batch_size, num_threads, device_id, seed=12)
            self.input = ops.FileReader(file_root=image_dir)
            # instead of path to file directory file with pairs image_name image_label_value can
            # be provided
            # self.input = ops.FileReader(file_root = image_dir, file_list = image_dir + '/file_list.txt')
            self.decode = ops.nvJPEGDecoder(device="mixed", output_type=types.RGB)
            self.resize = ops.Resize(device="gpu", resize_a=128, resize_b=96, warp_resize=True)

        def define_graph(self):
            jpegs, labels = self.input()
            images = self.decode(jpegs)
            images = self.resize(images)
            return (images, labels)

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe = SimplePipeline(batch_size, 1, device_id)
        pipe.build()
        pipe_out = pipe.run()
    images, labels = pipe_out
    assert images.as_cpu().is_dense_tensor()
    assert np.array(images.as_cpu().as_tensor()).shape == (batch_size, 128, 96, 3)
    assert labels.as_tensor().shape() == [batch_size, 1]
    assert deprecations(record) == [
        "Resize: `warp_resize/resize_a/resize_b` is deprecated; use size=(resize_a, resize_b)",
        "ops.FileReader is deprecated; use ops.readers.File (fn.readers.file)",
        "ops.nvJPEGDecoder is deprecated; use ops.decoders.Image (fn.decoders.image)"]


def test_resnet50_hybrid_train_pipe_with_the_classification_iterator(jpeg_folder, device_id):
    """DALI's ResNet-50 example (examples/pytorch/resnet50/main.py, 2019): the GPU variant with
    nvJPEGDecoderRandomCrop and its nvJPEG memory paddings, and the dali_cpu variant."""
    torch = pytest.importorskip("torch")
    # was: from nvidia.dali.plugin.pytorch import DALIClassificationIterator
    from stoker.plugins.torch import DALIClassificationIterator

    class Args:
        local_rank, world_size = 0, 1

    args = Args()

    class HybridTrainPipe(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, data_dir, crop, dali_cpu=False):
            super(HybridTrainPipe, self).__init__(batch_size, num_threads, device_id,
                                                  seed=12 + device_id)
            self.input = ops.FileReader(file_root=data_dir, shard_id=args.local_rank,
                                        num_shards=args.world_size, random_shuffle=True)
            # let user decide which pipeline works him bets for RN version he runs
            if dali_cpu:
                dali_device = "cpu"
                self.decode = ops.HostDecoderRandomCrop(device=dali_device,
                                                        output_type=types.RGB,
                                                        random_aspect_ratio=[0.8, 1.25],
                                                        random_area=[0.1, 1.0],
                                                        num_attempts=100)
            else:
                dali_device = "gpu"
                # This padding sets the size of the internal nvJPEG buffers to be able to handle
                # all images from full-sized ImageNet without additional reallocations
                self.decode = ops.nvJPEGDecoderRandomCrop(device="mixed", output_type=types.RGB,
                                                          device_memory_padding=211025920,
                                                          host_memory_padding=140544512,
                                                          random_aspect_ratio=[0.8, 1.25],
                                                          random_area=[0.1, 1.0],
                                                          num_attempts=100)
            self.res = ops.Resize(device=dali_device, resize_x=crop, resize_y=crop,
                                  interp_type=types.INTERP_TRIANGULAR)
            self.cmnp = ops.CropMirrorNormalize(device="gpu",
                                                output_dtype=types.FLOAT,
                                                output_layout=types.NCHW,
                                                crop=(crop, crop),
                                                image_type=types.RGB,
                                                mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                                std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
            self.coin = ops.CoinFlip(probability=0.5)
            print('DALI "{0}" variant'.format(dali_device))

        def define_graph(self):
            rng = self.coin()
            self.jpegs, self.labels = self.input(name="Reader")
            images = self.decode(self.jpegs)
            images = self.res(images)
            output = self.cmnp(images.gpu(), mirror=rng)
            return [output, self.labels]

    for dali_cpu in (False, True):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            pipe = HybridTrainPipe(batch_size=4, num_threads=2, device_id=device_id,
                                   data_dir=jpeg_folder, crop=64, dali_cpu=dali_cpu)
            pipe.build()
            train_loader = DALIClassificationIterator(
                pipe, size=int(pipe.epoch_size("Reader") / args.world_size))
            batches = 0
            for i, data in enumerate(train_loader):
                input = data[0]["data"]
                target = data[0]["label"].squeeze().cuda().long() if torch.cuda.is_available() \
                    else data[0]["label"].squeeze().long()
                assert tuple(input.shape) == (4, 3, 64, 64) and input.dtype == torch.float32
                assert abs(float(input.float().mean())) < 3  # normalised
                assert target.shape == (4,)
                batches += 1
            train_loader.reset()
        assert batches == 6  # 24 images, batch 4
        old = deprecations(record)
        assert "CropMirrorNormalize: `output_dtype` is deprecated; use dtype" in old
        assert ("CropMirrorNormalize: `image_type` is deprecated; use nothing (the operator "
                "takes the image as it is)") in old
        assert "ops.CoinFlip is deprecated; use ops.random.CoinFlip (fn.random.coin_flip)" in old


def test_hybrid_rn50_pipe_of_the_first_talk(shared_data, device_id):
    """The GTC 2018 talk's HybridRN50Pipe: Caffe2Reader, HybridDecode, Resize with
    random_resize/resize_a/resize_b, CropMirrorNormalize with random_crop and mirror_prob and
    the NCHW layout constant (the talk's `async` argument is renamed: it has been a Python
    keyword since 3.7)."""
    lmdb_folder = os.path.join(shared_data, "containers", "caffe2-lmdb")

    class HybridRN50Pipe(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, num_gpus, pipelined=True,
                     async_=True):
            super(HybridRN50Pipe, self).__init__(batch_size, num_threads, device_id,
                                                 exec_pipelined=pipelined, exec_async=async_)
            self.input = ops.Caffe2Reader(path=lmdb_folder, shard_id=device_id,
                                          num_shards=num_gpus)
            self.decode = ops.HybridDecode(output_type=types.RGB)
            self.resize = ops.Resize(device="gpu", random_resize=True, resize_a=256,
                                     resize_b=480, image_type=types.RGB,
                                     interp_type=types.INTERP_LINEAR)
            self.cmn = ops.CropMirrorNormalize(device="gpu", output_dtype=types.FLOAT,
                                               random_crop=True, crop=(224, 224),
                                               mirror_prob=0.5, image_type=types.RGB,
                                               mean=[128., 128., 128.], std=[1., 1., 1.],
                                               output_layout=types.NCHW)

        def define_graph(self):
            jpegs, labels = self.input()
            images = self.decode(jpegs)
            images = self.resize(images)
            output = self.cmn(images)
            return (output, labels)

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe = HybridRN50Pipe(batch_size=7, num_threads=2, device_id=device_id, num_gpus=1)
        try:
            pipe.build()
        except (RuntimeError, ValueError) as e:
            if "liblmdb" in str(e):
                pytest.skip("stoker was built without liblmdb")
            raise
        images, labels = pipe.run()
    images = images.as_cpu()
    assert images.is_dense_tensor() and np.array(images.as_tensor()).shape == (7, 3, 224, 224)
    assert images.layout() == "CHW" and images.dtype == np.float32
    assert len(deprecations(record)) >= 5


@pytest.mark.filterwarnings("ignore:ops.nvJPEGDecoder is deprecated:DeprecationWarning")
def test_external_source_fed_in_iter_setup(jpeg_folder, device_id):
    """The early external-source example: ops.ExternalSource nodes kept in define_graph, fed in
    iter_setup with feed_input (JPEG bytes as numpy arrays, labels)."""
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(jpeg_folder) for f in fs)
    batch_size = 4

    class ExternalInputIterator(object):
        def __init__(self, batch_size):
            self.files = files
            self.batch_size = batch_size

        def __iter__(self):
            self.i = 0
            self.n = len(self.files)
            return self

        def __next__(self):
            batch = []
            labels = []
            for _ in range(self.batch_size):
                jpeg_filename = self.files[self.i]
                f = open(jpeg_filename, 'rb')
                batch.append(np.frombuffer(f.read(), dtype=np.uint8))
                labels.append(np.array([self.i], dtype=np.uint8))
                f.close()
                self.i = (self.i + 1) % self.n
            return (batch, labels)

        next = __next__

    eii = ExternalInputIterator(batch_size)
    iterator = iter(eii)

    class ExternalSourcePipeline(Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super(ExternalSourcePipeline, self).__init__(batch_size, num_threads, device_id,
                                                         seed=12)
            self.input = ops.ExternalSource()
            self.input_label = ops.ExternalSource()
            self.decode = ops.nvJPEGDecoder(device="mixed", output_type=types.RGB)
            self.cast = ops.Cast(device="gpu", dtype=types.INT32)

        def define_graph(self):
            self.jpegs = self.input()
            self.labels = self.input_label()
            images = self.decode(self.jpegs)
            output = self.cast(images)
            return (output, self.labels)

        def iter_setup(self):
            (images, labels) = iterator.next()
            self.feed_input(self.jpegs, images)
            self.feed_input(self.labels, labels)

    pipe = ExternalSourcePipeline(batch_size=batch_size, num_threads=2, device_id=device_id)
    pipe.build()
    seen = []
    for _ in range(3):
        images, labels = pipe.run()
        seen += [int(x) for x in np.array(labels.as_tensor()).ravel()]
        assert images.dtype == np.int32 and len(images) == batch_size
    assert seen == list(range(12))


def test_feed_input_without_iter_setup_and_its_errors(device_id):
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        src = stoker.fn.external_source(name="src")
        pipe.set_outputs(src)
    pipe.build()
    data = [np.arange(3, dtype=np.int16), np.arange(2, dtype=np.int16)]
    pipe.feed_input("src", data)
    (out,) = pipe.run()
    assert [list(out.at(i)) for i in range(2)] == [[0, 1, 2], [0, 1]]
    with pytest.raises(RuntimeError, match=r"external_source 'src' has no batch for this "
                                           r"iteration: give one with pipe.feed_input"):
        pipe.run()
    with pytest.raises(ValueError, match=r"feed_input: no external source named 'other'"):
        pipe.feed_input("other", data)


def test_old_resize_arguments_mean_what_they_meant(jpeg_folder, device_id):
    def sizes(**kw):
        class P(Pipeline):
            def __init__(self):
                super().__init__(batch_size=24, num_threads=2, device_id=None, seed=3)
                self.input = ops.readers.File(file_root=jpeg_folder)
                self.decode = ops.decoders.Image()
                self.resize = ops.Resize(**kw)

            def define_graph(self):
                jpegs, _ = self.input()
                return self.resize(self.decode(jpegs))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pipe = P()
            (out,) = pipe.run()
        return [s[:2] for s in out.shape()]

    assert all(min(hw) == 40 for hw in sizes(resize_a=40, resize_b=100))
    assert all(hw == (40, 50) for hw in sizes(resize_a=40, resize_b=50, warp_resize=True))
    shorter = [min(hw) for hw in sizes(resize_a=40, resize_b=48, random_resize=True)]
    assert all(40 <= s <= 48 for s in shorter) and len(set(shorter)) > 3
    both = sizes(resize_a=40, resize_b=48, random_resize=True, warp_resize=True)
    assert all(40 <= h <= 48 and 40 <= w <= 48 for h, w in both) and len(set(both)) > 3


def test_old_crop_mirror_normalize_arguments_draw_per_sample(device_id):
    """random_crop: a window placed at random per sample; mirror_prob: a coin per sample;
    crop=int: a square; output_layout=types.NCHW: CHW."""
    image = np.arange(20 * 20, dtype=np.uint8).reshape(20, 20, 1)

    class P(Pipeline):
        def __init__(self, **kw):
            super().__init__(batch_size=32, num_threads=2, device_id=None, seed=5)
            self.input = ops.ExternalSource(source=lambda: [image] * 32, layout="HWC")
            self.cmn = ops.CropMirrorNormalize(output_dtype=types.UINT8,
                                               output_layout=types.NCHW, **kw)

        def define_graph(self):
            return self.cmn(self.input())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        (out,) = P(crop=6, random_crop=True).run()
        corners = {(int(s[0, 0, 0]) // 20, int(s[0, 0, 0]) % 20) for s in out.numpy()}
        assert out.layout() == "CHW" and out.numpy().shape == (32, 1, 6, 6)
        assert len(corners) > 5  # windows in many places
        (out,) = P(crop=6, mirror_prob=0.5).run()
        mirrored = [int(s[0, 0, 0]) > int(s[0, 0, 5]) for s in out.numpy()]
        assert 0 < sum(mirrored) < 32


def test_class_names_follow_dali():
    assert ops.readers.File._op == "readers.file" and ops.Resize._op == "resize"
    assert ops.random.CoinFlip._op == "random.coin_flip"
    assert ops.readers.COCO._op == "readers.coco" and ops.RandomBBoxCrop._op == "random_bbox_crop"
    assert ops.decoders.ImageRandomCrop._op == "decoders.image_random_crop"
    with pytest.warns(DeprecationWarning, match="ops.nvJPEGDecoderRandomCrop is deprecated; use "
                                                "ops.decoders.ImageRandomCrop"):
        assert ops.nvJPEGDecoderRandomCrop().device == "mixed"
    with pytest.raises(TypeError, match=r"ops.Resize got unexpected argument\(s\) "
                                        r"no_such_argument \(fn.resize takes: "):
        ops.Resize(no_such_argument=1)
    ops.Resize(resize_x=4, bytes_per_sample_hint=[0], preserve=True, seed=3)  # DALI's tuning


def test_schedule_run_and_outputs(device_id):
    """DALI's split run: schedule_run(), then outputs() / share_outputs() and release_outputs()."""
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(stoker.fn.external_source(
            source=lambda i: [np.full(2, i, np.int32)] * 2))
    pipe.build()
    pipe.schedule_run()
    pipe.schedule_run()
    (a,) = pipe.outputs()
    pipe.release_outputs()
    (b,) = pipe.share_outputs()
    assert list(a.at(0)) == [0, 0] and list(b.at(1)) == [1, 1]
    # As in DALI, the first schedule_run() asked for the queue's depth (2) and the second for
    # one more: a third batch is there, then none.
    (c,) = pipe.outputs()
    assert list(c.at(0)) == [2, 2]
    with pytest.raises(StopIteration):
        pipe.outputs()


# DALI's SSDRandomCrop draws its windows as random_bbox_crop does with these arguments (the
# thresholds 0.1 ... 0.9, 0 for "any window", and "no crop"; sides in [0.3, 1]; w/h in
# [0.5, 2]): stoker's is that operator and a slice, so a random_bbox_crop with the same seed
# shows the window each sample got.
_SSD_WINDOWS = dict(thresholds=[0.0, 0.1, 0.3, 0.5, 0.7, 0.9], aspect_ratio=[0.5, 2.0],
                    scaling=[0.3, 1.0], allow_no_crop=True, num_attempts=1)


def _ssd_batch(info):
    """16 HWC images with 0 to 4 boxes (ltrb, normalised) and int32 labels each."""
    rng = np.random.default_rng(info.iteration)
    images, boxes, labels = [], [], []
    for i in range(16):
        images.append(rng.integers(0, 255, (48 + i, 64, 3), dtype=np.uint8))
        n = i % 5
        lo = rng.uniform(0, 0.6, (n, 2))
        hi = np.minimum(lo + rng.uniform(0.05, 0.4, (n, 2)), 1.0)
        boxes.append(np.float32(np.concatenate([lo, hi], 1)))
        labels.append(np.arange(n, dtype=np.int32) + 10 * i)
    return images, boxes, labels


def test_ssd_random_crop_crops_images_boxes_and_labels_as_dali(device_id):
    """ops.SSDRandomCrop takes (images, boxes, labels) and returns them cropped: for the window
    each sample drew, exactly what DALI's code gives for it (tests/ssd_util.py, ported from
    DALI's random_crop.cc); samples without boxes are not cropped."""
    from ssd_util import ssd_crop_given_window

    class SSDPipe(Pipeline):
        def __init__(self):
            super().__init__(batch_size=16, num_threads=2, device_id=None, seed=4)
            self.input = ops.ExternalSource(source=_ssd_batch, num_outputs=3, batch_info=True,
                                            layout=["HWC", "", ""])
            self.crop = ops.SSDRandomCrop(num_attempts=1, seed=7)
            self.window = ops.RandomBBoxCrop(seed=7, **_SSD_WINDOWS)

        def define_graph(self):
            images, boxes, labels = self.input()
            anchor, shape, _, _ = self.window(boxes, labels)
            return (images, boxes, labels, *self.crop(images, boxes, labels), anchor, shape)

    with pytest.warns(DeprecationWarning, match=r"ops.SSDRandomCrop is deprecated; use "
                                                r"ops.RandomBBoxCrop \(fn.random_bbox_crop\)"):
        pipe = SSDPipe()
    cropped = whole = 0
    for _ in range(4):
        images, boxes, labels, out_images, out_boxes, out_labels, anchor, shape = pipe.run()
        assert out_images.layout() == "HWC"
        for i in range(16):
            image, b, lab = images.at(i), boxes.at(i), labels.at(i)
            if len(b) == 0:  # DALI: only "no crop" keeps a box-less sample
                left, top, w, h = 0.0, 0.0, 1.0, 1.0
            else:
                (left, top), (w, h) = (float(v) for v in anchor.at(i)), \
                    (float(v) for v in shape.at(i))
            want = ssd_crop_given_window(image, b, lab, left, top, w, h)
            np.testing.assert_array_equal(out_images.at(i), want[0])
            np.testing.assert_allclose(out_boxes.at(i), want[1], atol=2e-6)
            np.testing.assert_array_equal(out_labels.at(i), want[2])
            assert out_boxes.at(i).dtype == np.float32 and out_labels.at(i).dtype == np.int32
            if len(b):
                assert len(want[2]) >= 1  # a window keeps at least one box
                cropped += want[0].shape != image.shape
                whole += want[0].shape == image.shape
    assert cropped > 10 and whole > 2  # both happen: about 1 in 7 samples is not cropped


def test_ssd_random_crop_as_dali_names_and_seeds_it(device_id):
    """fn.ssd_random_crop (DALI's deprecated name) warns as DALI does; num_attempts and seed are
    DALI's arguments (the same seed, the same crops whatever the pipeline's seed); others are
    refused where the class is made."""

    def crops(pipeline_seed, **kwargs):
        pipe = Pipeline(batch_size=16, num_threads=2, device_id=None, seed=pipeline_seed)
        with pipe:
            images, boxes, labels = stoker.fn.external_source(
                _ssd_batch, num_outputs=3, batch_info=True, layout=["HWC", "", ""])
            with pytest.warns(DeprecationWarning, match=r"`stoker.fn.ssd_random_crop` is now "
                                                        r"deprecated. Use `stoker.fn."
                                                        r"random_bbox_crop` instead."):
                pipe.set_outputs(*stoker.fn.ssd_random_crop(images, boxes, labels, **kwargs))
        out, out_boxes, _ = pipe.run()
        return [out.at(i).shape for i in range(16)], [out_boxes.at(i) for i in range(16)]

    a, b, c = crops(1, seed=9), crops(2, seed=9), crops(1, seed=10, num_attempts=20)
    assert a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1], b[1]))
    assert a[0] != c[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(TypeError, match=r"ops.SSDRandomCrop got unexpected argument\(s\) "
                                            r"thresholds"):
            ops.SSDRandomCrop(thresholds=[0.5])
        assert ops.SSDRandomCrop(num_attempts=3, seed=1, bytes_per_sample_hint=[0])._op == \
            "ssd_random_crop"


def test_compose_runs_dalis_docstring_example(jpeg_folder, device_id):
    """ops.Compose as DALI's docstring shows it: a CPU decoder chained with a GPU resize of a
    random square size (the data goes to the GPU between them); readers.file stands in for the
    docstring's Caffe database."""
    pipe = Pipeline(batch_size=4, num_threads=2, device_id=device_id, seed=1)
    with pipe:
        decode_and_resize = ops.Compose([
            ops.decoders.Image(device="cpu"),
            ops.Resize(size=stoker.fn.random.uniform(range=(400, 500)), device="gpu"),
        ])
        files, labels = stoker.fn.readers.file(file_root=jpeg_folder, seed=1)
        pipe.set_outputs(decode_and_resize(files), labels)
    pipe.build()
    images, labels = pipe.run()
    for i in range(4):
        h, w, c = images.as_cpu().at(i).shape
        assert 400 <= h <= 500 and h == w and c == 3
    assert len(labels) == 4


def test_compose_chains_outputs_flattens_and_gives_keywords_to_the_first():
    seen = []

    def record(*values, **kwargs):  # a plain callable counts as an operator, as in DALI
        seen.append(kwargs)
        return values  # every input is an output: two in, two out

    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with pipe:
        x = stoker.fn.external_source(source=lambda: [np.arange(3, dtype=np.float32)] * 2,
                                      batch=True)
        inner = ops.Compose([record, ops.Cat(axis=0)])
        chain = ops.Compose([inner, ops.Cast(dtype=types.INT32)])
        assert chain._ops == [record, inner._ops[1], chain._ops[2]]  # flattened
        flip = ops.Flip(horizontal=0)
        assert ops.Compose([flip]) is flip
        pipe.set_outputs(chain(x, x * 2, tag=1))
    (out,) = pipe.run()
    assert seen == [{"tag": 1}]  # the keywords went to the first operator only
    assert out.dtype == types.INT32
    np.testing.assert_array_equal(out.at(1), [0, 1, 2, 0, 2, 4])


def test_compose_errors():
    with pytest.raises(ValueError, match="needs at least one operator"):
        ops.Compose([])
    with pytest.raises(TypeError, match="takes a list of operators, got int"):
        ops.Compose(3)
    with pytest.raises(TypeError, match="must be callable .* got str"):
        ops.Compose([ops.Flip(), "resize"])
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with pipe:
        x = stoker.fn.external_source(source=lambda: [np.zeros(3, np.float32)] * 2, batch=True)
        with pytest.raises(ValueError, match="returned no outputs for the next operator"):
            ops.Compose([lambda v: None, ops.Flip()])(x)
        # A keyword argument the first operator does not take is refused by it (when built).
        pipe.set_outputs(ops.Compose([ops.Cast(dtype=types.INT32), ops.Flip()])(
            x, no_such_arg=1))
    with pytest.raises(TypeError, match="cast .*unknown argument 'no_such_arg'"):
        pipe.build()


def test_class_names_are_dalis():
    # DALI spells some classes otherwise than the CamelCase of the fn name (RMS, BBoxPaste);
    # test_parity_public_names.py checks every one against DALI's modules.
    assert not hasattr(ops.reductions, "Rms")
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with pipe:
        x = stoker.fn.external_source(source=lambda: [np.array([3, 4], np.float32)] * 2,
                                      batch=True)
        pipe.set_outputs(ops.reductions.RMS()(x))
    (out,) = pipe.run()
    np.testing.assert_allclose(out.at(0), np.sqrt(12.5))
