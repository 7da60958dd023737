"""fn.python_function under hostile use: writes into its inputs (read-only views: a clear error,
never a crash or a change of another output), a function running another pipeline with
python_function (no deadlock), functions freed with their pipeline, Ctrl-C during a slow
per-sample function, and outputs of a type no batch holds."""

import gc
import signal
import subprocess
import sys
import textwrap
import time
import weakref

import numpy as np
import pytest

import stoker.python_function as registry
from stoker import fn, pipeline_def


def external(batch_size=2):
    return fn.external_source(lambda: [np.full(3, 7, np.uint8)] * batch_size, batch=True)


def zero(a):
    a[:] = 0  # a write into the input
    return a


def run_python(code, timeout):
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"no exit after {timeout} s (a hang); stdout: {e.stdout!r}, stderr: "
                    f"{(e.stderr or '')[-3000:]!r}")


# -- writes into the inputs ------------------------------------------------------------------

@pytest.fixture
def mapped_folder(tmp_path):
    """A file_root whose one file (2 MB) readers.file reads through a read-only mapping (files
    of 1 MiB and more are mapped): a write there was SIGSEGV."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "big.jpg").write_bytes(bytes(range(256)) * 8192)
    return str(tmp_path)


def test_a_write_into_a_mapped_files_bytes_is_an_error_not_a_crash(mapped_folder):
    result = run_python(f"""
        import numpy as np
        from stoker import fn, pipeline_def

        def zero(a):
            a[:] = 0
            return a

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            data, _ = fn.readers.file(file_root={mapped_folder!r})
            return fn.python_function(data, function=zero)

        pipe = p()
        pipe.build()
        pipe.run()
        """, timeout=60)
    assert result.returncode == 1, result.stderr[-2000:]
    err = result.stderr
    assert "python_function 'zero'" in err and "assignment destination is read-only" in err
    assert "write into a copy" in err
    assert ", in zero" in err  # the traceback reaches the function


def test_torch_python_function_gets_a_copy_of_a_mapped_files_bytes(mapped_folder):
    # torch has no read-only tensors: a write into a view of the mapping was SIGSEGV.
    pytest.importorskip("torch")
    result = run_python(f"""
        from stoker import fn, pipeline_def

        def zero(t):
            t[:] = 0
            return t

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            data, _ = fn.readers.file(file_root={mapped_folder!r})
            return data, fn.torch_python_function(data, function=zero)

        pipe = p()
        data, zeroed = pipe.run()
        print("SUMS", int(data[0].numpy().astype("int64").sum()),
              int(zeroed[0].numpy().astype("int64").sum()))
        """, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"SUMS {sum(range(256)) * 8192} 0" in result.stdout, result.stdout


def test_a_write_into_a_decoded_image_never_changes_the_image_output(jpeg_folder):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        data, _ = fn.readers.file(file_root=jpeg_folder)
        image = fn.decoders.image(data)
        return image, fn.python_function(image, function=zero)

    pipe = p()
    pipe.build()
    with pytest.raises(RuntimeError) as e:
        pipe.run()
    text = str(e.value)
    assert "python_function 'zero'" in text and "assignment destination is read-only" in text


@pytest.mark.parametrize("batch_processing", [False, True])
def test_inputs_are_read_only_and_a_copy_may_be_written(batch_processing):
    def edit(a):
        assert not a.flags.writeable
        b = a.copy()
        b[0] = 1
        return b

    function = (lambda xs: [edit(a) for a in xs]) if batch_processing else edit

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        x = external()
        return x, fn.python_function(x, function=function, batch_processing=batch_processing)

    pipe = p()
    pipe.build()
    x, y = pipe.run()
    for i in range(2):
        np.testing.assert_array_equal(np.array(x[i]), [7, 7, 7])  # the other output: intact
        np.testing.assert_array_equal(np.array(y[i]), [1, 7, 7])


# -- a function running another pipeline -----------------------------------------------------

NESTED = """
    import time
    import numpy as np
    from stoker import fn, pipeline_def

    def inner_function(a):
        time.sleep(INNER_SLEEP)
        return a + 1

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def inner():
        x = fn.external_source(lambda: [np.ones(3, np.uint8)] * 2, batch=True)
        return fn.python_function(x, function=inner_function)

    def outer_function(a):
        pipe = inner()
        pipe.build()
        (out,) = pipe.run()
        return a + np.array(out[0])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def outer():
        x = fn.external_source(lambda: [np.ones(3, np.uint8)] * 2, batch=True)
        return fn.python_function(x, function=outer_function)

    pipe = outer()
    pipe.build()
    print("running", flush=True)
    (out,) = pipe.run()
    print("result", np.array(out[1]).tolist(), flush=True)
    """


def test_a_function_running_another_pipeline_with_python_function_does_not_deadlock():
    code = "import faulthandler; faulthandler.dump_traceback_later(20)\n" + textwrap.dedent(NESTED)
    result = run_python(code.replace("INNER_SLEEP", "0"), timeout=30)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "result [3, 3, 3]" in result.stdout


# A parent that ignores SIGINT (a background job of a non-interactive shell) passes that on,
# and Python then never raises KeyboardInterrupt: the children take Python's own handler.
SIGINT_DEFAULT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def interrupt_after(code, seconds, timeout=15):
    """Runs `code`, sends SIGINT `seconds` after it prints its first line; (seconds the
    process took to end after the signal, its exit code, stderr)."""
    # The threads' stacks on stderr if it hangs.
    code = f"import faulthandler; faulthandler.dump_traceback_later({timeout - 3})\n" + \
        SIGINT_DEFAULT + textwrap.dedent(code)
    child = subprocess.Popen([sys.executable, "-c", code],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "running", child.stderr.read()[-2000:]
        time.sleep(seconds)
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            _, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            pytest.fail(f"no exit {timeout} s after SIGINT; stderr: "
                        f"{child.communicate()[1][-4000:]}")
        return time.monotonic() - sent, child.returncode, err
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


def test_ctrl_c_ends_a_function_waiting_on_another_pipeline():
    took, rc, err = interrupt_after(NESTED.replace("INNER_SLEEP", "0.5"), 1.0)
    assert "KeyboardInterrupt" in err, err[-2000:]
    assert rc in (-signal.SIGINT, 128 + signal.SIGINT, 1)
    assert took < 4, f"the process took {took:.1f} s to end after SIGINT"


# -- Ctrl-C during a slow per-sample function ------------------------------------------------

@pytest.mark.parametrize("op", ["python_function", "dl_tensor_python_function"])
def test_ctrl_c_during_a_slow_per_sample_function_ends_the_run_promptly(op):
    # 16 samples of 0.5 s: 8 s for the batch; the stop is seen between samples.
    took, rc, err = interrupt_after(f"""
        import time
        import numpy as np
        from stoker import fn, pipeline_def

        def slow(a):
            time.sleep(0.5)
            return a

        @pipeline_def(batch_size=16, num_threads=1, device_id=None)
        def p():
            x = fn.external_source(lambda: [np.ones(3, np.uint8)] * 16, batch=True)
            return fn.{op}(x, function=slow, batch_processing=False)

        pipe = p()
        pipe.build()
        print("running", flush=True)
        pipe.run()
        """, 1.0)
    assert "KeyboardInterrupt" in err, err[-2000:]
    assert rc in (-signal.SIGINT, 128 + signal.SIGINT, 1)
    assert took < 2, f"the process took {took:.1f} s to end after SIGINT"


# -- functions are freed with their pipeline -------------------------------------------------

def test_a_function_is_freed_when_its_pipeline_is_deleted():
    gc.collect()
    before = len(registry._functions)
    closures = []
    gc.disable()  # freed by reference counting alone, as a plain pipeline is
    try:
        for _ in range(20):
            big = np.ones(1 << 20, np.uint8)
            closures.append(weakref.ref(big))

            def add(a, big=big):
                return a + big[0]

            @pipeline_def(batch_size=2, num_threads=1, device_id=None)
            def p():
                return fn.python_function(external(), function=add)

            pipe = p()
            pipe.build()
            (out,) = pipe.run()
            np.testing.assert_array_equal(np.array(out[0]), [8, 8, 8])
            del pipe, out, add, big, p
            assert len(registry._functions) == before
        assert all(ref() is None for ref in closures)
    finally:
        gc.enable()


# -- outputs of a type no batch holds --------------------------------------------------------

@pytest.mark.parametrize("value, dtype", [
    (np.array([object(), object()], dtype=object), "object"),
    (np.ones(2, np.complex64), "complex64"),
    (np.array(["ab", "c"]), "str"),
    (["ab", "c"], "str"),  # a list, made an array by the import
])
@pytest.mark.parametrize("batch_processing", [False, True])
def test_an_output_of_an_unsupported_dtype_is_named(value, dtype, batch_processing):
    def odd(a):
        return value

    function = (lambda xs: [odd(a) for a in xs]) if batch_processing else odd

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return fn.python_function(external(), function=function,
                                  batch_processing=batch_processing)

    pipe = p()
    pipe.build()
    with pytest.raises(RuntimeError) as e:
        pipe.run()
    text = str(e.value)
    assert f"the function returned an array of dtype {dtype}" in text, text
    assert "python_function '" in text and "output 0, sample 0" in text
    assert "C-contiguous" not in text
