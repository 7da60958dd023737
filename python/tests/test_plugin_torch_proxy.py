"""stoker.plugin.pytorch.experimental.proxy (DALI's DataLoader proxy): a torch Dataset hands its
encoded images to `server.proxy` in the DataLoader's workers (0 or 2), one pipeline in this
process decodes and resizes them, and the DataLoader yields the outputs as torch tensors. Each
batch must be what a direct run of the same pipeline gives for the same samples, in the
DataLoader's order, over several epochs; misuse must raise, not hang."""

import inspect
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")
PIL = pytest.importorskip("PIL.Image")

import stoker  # noqa: E402
from stoker import fn, pipeline_def  # noqa: E402
from stoker.plugin.pytorch.experimental import proxy as dali_proxy  # noqa: E402

N = 10  # samples; with batch_size 4 the last batch (2) is partial
BATCH = 4
SIZE = 12


def _png(k):
    """Image k: its own size and colours, so that a misplaced sample shows."""
    rng = np.random.default_rng(k)
    pixels = rng.integers(0, 256, (20 + 3 * k, 17 + 2 * k, 3), dtype=np.uint8)
    buf = io.BytesIO()
    PIL.fromarray(pixels).save(buf, format="PNG")
    return np.frombuffer(buf.getvalue(), dtype=np.uint8)


ENCODED = [_png(k) for k in range(N)]


@pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=3)
def decode_resize():
    encoded = fn.external_source(name="images", no_copy=True)
    images = fn.decoders.image(encoded)
    return fn.resize(images, size=[SIZE, SIZE]), images.shape()


def _direct():
    """Per sample: (resized image, decoded shape) from the pipeline run without the proxy."""
    pipe = decode_resize(batch_size=2)
    out = []
    for k in range(0, N, 2):
        pipe.feed_input("images", ENCODED[k:k + 2])
        images, shapes = pipe.run()
        out += [(np.array(images.at(i)), np.array(shapes.at(i))) for i in range(2)]
    return out


DIRECT = None


def direct():
    global DIRECT
    if DIRECT is None:
        DIRECT = _direct()
    return DIRECT


class Images(torch.utils.data.Dataset):
    """The Dataset: the proxy is its transform (DALI's pattern)."""

    def __init__(self, transform):
        self.transform = transform

    def __len__(self):
        return N

    def __getitem__(self, k):
        return self.transform(ENCODED[k]), k


def _check_epoch(batches, drop_last=False):
    expected = N // BATCH * BATCH if drop_last else N
    labels = [lab for _, _, labs in batches for lab in labs.tolist()]
    assert labels == list(range(expected))  # the DataLoader's order, whatever the workers' one
    for images, shapes, labs in batches:
        assert isinstance(images, torch.Tensor) and images.dtype == torch.uint8
        assert images.shape == (len(labs), SIZE, SIZE, 3)
        assert shapes.shape == (len(labs), 3)
        for i, k in enumerate(labs.tolist()):
            np.testing.assert_array_equal(images[i].numpy(), direct()[k][0])
            np.testing.assert_array_equal(shapes[i].numpy(), direct()[k][1])


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("deterministic", [False, True])
def test_dataloader_yields_the_pipelines_outputs_in_order_over_epochs(num_workers, deterministic):
    with dali_proxy.DALIServer(decode_resize(), deterministic=deterministic) as server:
        loader = dali_proxy.DataLoader(server, Images(server.proxy), batch_size=BATCH,
                                       num_workers=num_workers)
        for _ in range(3):  # each epoch starts new workers, whose batch ids start again
            _check_epoch([(images, shapes, labs) for (images, shapes), labs in loader])


def test_drop_last_and_a_loop_broken_off():
    with dali_proxy.DALIServer(decode_resize()) as server:
        loader = dali_proxy.DataLoader(server, Images(server.proxy), batch_size=BATCH,
                                       num_workers=2, drop_last=True)
        for (images, _), labs in loader:
            assert labs.tolist() == [0, 1, 2, 3]
            break
        _check_epoch([(i, s, labs) for (i, s), labs in loader], drop_last=True)


def test_the_loader_starts_the_server_itself():
    server = dali_proxy.DALIServer(decode_resize())
    loader = dali_proxy.DataLoader(server, Images(server.proxy), batch_size=BATCH,
                                   num_workers=2)
    _check_epoch([(i, s, labs) for (i, s), labs in loader])
    assert loader.server_started_by_loader and server._is_thread_running()
    server.stop_thread()
    assert not server._is_thread_running()


def test_torch_dataloader_with_produce_data():
    """DALI's example 3: torch's own DataLoader, produce_data on each batch (also a dict)."""
    class Named(Images):
        def __getitem__(self, k):
            images, shapes = self.transform(ENCODED[k])
            return {"image": images, "shape": shapes, "label": k}

    with dali_proxy.DALIServer(decode_resize()) as server:
        for workers in (0, 2):
            loader = torch.utils.data.DataLoader(Named(server.proxy), batch_size=BATCH,
                                                 num_workers=workers)
            batches = []
            for batch in loader:
                assert isinstance(batch["image"], dali_proxy.DALIOutputBatchRef)
                batch = server.produce_data(batch)
                batches.append((batch["image"], batch["shape"], batch["label"]))
            _check_epoch(batches)


def test_manual_proxy_calls_and_default_collate():
    """DALI's example 2: two named inputs (keyword-only), two outputs."""
    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def arith():
        a = fn.external_source(name="a", no_copy=True)
        b = fn.external_source(name="b", no_copy=True)
        return a + b, a - b

    server = dali_proxy.DALIServer(arith())
    assert list(inspect.signature(server.proxy).parameters) == ["a", "b"]
    with server:
        rng = np.random.default_rng(0)
        outs = []
        for _ in range(3):
            a, b = (rng.random((3, 3), dtype=np.float32) for _ in range(2))
            out0, out1 = server.proxy(a=a, b=b)
            outs.append((a, b, out0, out1))
        outs = torch.utils.data.dataloader.default_collate(outs)
        a, b, plus, minus = server.produce_data(outs)
    torch.testing.assert_close(plus, a + b, rtol=0, atol=0)
    torch.testing.assert_close(minus, a - b, rtol=0, atol=0)


def test_a_single_input_is_positional_or_keyword():
    server = dali_proxy.DALIServer(decode_resize())
    ref = server.proxy(images=ENCODED[0])
    assert isinstance(ref, tuple) and len(ref) == 2
    assert all(isinstance(r, dali_proxy.DALIOutputSampleRef) for r in ref)
    assert ref[0].sample_idx == 0 and server.proxy(ENCODED[1])[1].sample_idx == 1


def test_errors():
    with pytest.raises(TypeError, match="pipeline"):
        dali_proxy.DALIServer(3)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def no_inputs():
        return fn.random.uniform(shape=2)

    with pytest.raises(RuntimeError, match="doesn't have any inputs"):
        dali_proxy.DALIServer(no_inputs())

    server = dali_proxy.DALIServer(decode_resize())
    with pytest.raises(ValueError, match="Expected signature"):
        server.proxy(ENCODED[0], ENCODED[1])
    with pytest.raises(ValueError, match="unexpected keyword argument 'labels'"):
        server.proxy(images=ENCODED[0], labels=1)

    # produce_data outside the server's context: DALI's waits forever, stoker's raises
    batch = torch.utils.data.dataloader.default_collate([server.proxy(e) for e in ENCODED[:2]])
    with pytest.raises(RuntimeError, match="not running"):
        server.produce_data(batch)
    with server:  # the batch queued meanwhile is processed once the server runs
        images, _ = server.produce_data(batch)
    assert images.shape == (2, SIZE, SIZE, 3)
    with pytest.raises(RuntimeError, match="not running"):
        server.produce_data(torch.utils.data.dataloader.default_collate(
            [server.proxy(e) for e in ENCODED[:2]]))


def test_pipeline_errors_reach_the_consumer():
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def ragged():  # decoded images of different sizes: no batch tensor
        return fn.decoders.image(fn.external_source(name="images"))

    with dali_proxy.DALIServer(ragged()) as server:
        loader = dali_proxy.DataLoader(server, Images(server.proxy), batch_size=BATCH,
                                       num_workers=2)
        with pytest.raises(RuntimeError, match="uniform shape"):
            next(iter(loader))

    with dali_proxy.DALIServer(decode_resize()) as server:  # more samples than batch_size
        loader = dali_proxy.DataLoader(server, Images(server.proxy), batch_size=BATCH + 1)
        with pytest.raises(ValueError, match="batch_size"):
            next(iter(loader))


def test_unused_external_sources_are_not_inputs():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(name="x")
        fn.external_source(name="unused")
        return x * 2

    server = dali_proxy.DALIServer(pipe())
    assert server._dali_input_names == ["x"]


def test_the_module_is_dalis_twin():
    assert dali_proxy.__all__ == ["DALIServer", "DataLoader"]
    assert stoker.plugin.pytorch.experimental.proxy is dali_proxy
    assert issubclass(dali_proxy.DataLoader, torch.utils.data.DataLoader)
