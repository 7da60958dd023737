# stoker's front door. `make demo` and `make test` work on a fresh Debian 12 machine as root:
# they run scripts/setup (a no-op when everything is installed), build, then run.
PYTHON  ?= python3
BUILD   ?= build
ASAN_BUILD ?= build-asan
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
export PYTHONUNBUFFERED = 1

.PHONY: all setup setup-build build demo test test-cpp test-python test-sanitize test-tsan fuzz reference wheel wheels format format-check lint clean

all: build

# What building, the demo and the wheel need (setup-build), and that plus the whole test stack
# (setup: DALI, the frameworks, the reference libraries, the developer tools).
setup:
	@bash scripts/setup test

setup-build:
	@bash scripts/setup build

# A developer's build compiles GPU kernels for one architecture (the H100/H200's; `native` on a
# machine with a GPU), for speed; `make wheel` compiles them for every GPU since Turing.
CUDA_ARCHS ?= $(shell nvidia-smi -L >/dev/null 2>&1 && echo native || echo 90-real)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$$(command -v $(PYTHON)) \
	  -DSTOKER_CUDA_ARCHITECTURES="$(CUDA_ARCHS)" $(CMAKE_FLAGS)

build: setup-build $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The main job on an embedded default: generates sample JPEGs unless DATA=/path is given.
demo: setup-build $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target _stoker  # the module alone: no C++ tests
	PYTHONPATH=$(abspath $(BUILD))/python $(PYTHON) -m stoker.demo $(if $(DATA),--data "$(DATA)")

test: setup build
	$(MAKE) --no-print-directory test-cpp test-python

test-cpp:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-python:
	PYTHONPATH=$(abspath $(BUILD))/python $(PYTHON) -m pytest python/tests -q

# Everything built with AddressSanitizer + UndefinedBehaviorSanitizer; the Python tests run in
# an uninstrumented interpreter with the ASan runtime preloaded (leak checks off there: CPython
# itself keeps memory until exit; the C++ tests keep them on). The parity suite is left out: it
# runs DALI, whose libraries do not load under the preloaded sanitizer (make test runs it); so is
# the PaddlePaddle plugin's test: libpaddle itself frees with a mismatched delete at exit, and
# its import beside TensorFlow needs RTLD_DEEPBIND, which ASan refuses.
test-sanitize: setup
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSTOKER_SANITIZE=address,undefined -DPython_EXECUTABLE=$$(command -v $(PYTHON)) \
	  -DSTOKER_CUDA_ARCHITECTURES="$(CUDA_ARCHS)" $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  PYTHONPATH=$(abspath $(ASAN_BUILD))/python $(PYTHON) -m pytest python/tests -q -p no:cacheprovider \
	  --ignore=python/tests/parity --ignore=python/tests/test_plugin_paddle.py \
	  --capture=sys  # fd 2 free: a sanitizer's report stays in the log

# ThreadSanitizer over the C++ tests (executor, thread pool, pools); see CMakePresets.json.
# Then the Python tests of the threaded parts (python_function's servers, the executor's stages
# and close(), readers' I/O threads and mapped files, pipelines dropped while running) in an
# uninstrumented interpreter with the TSan runtime preloaded: stoker's own accesses are checked.
# Tests that fork worker processes stay out (TSan does not follow a fork of a threaded process),
# and so do the video cases: the ffmpeg tool making their files would inherit the preload.
# The interpreter itself, not a wrapper script (pyenv's shim), takes the preload.
TSAN_PYTHON_TESTS = test_python_function.py test_python_function_reliability.py \
  test_pipeline.py test_process_safety.py test_mapped_files.py test_readers_io.py \
  test_reader_epochs.py test_cpu_lanes.py test_thread_limits.py
TSAN_SUPP = $(abspath cmake/tsan_suppressions.txt)
test-tsan: setup
	cmake --preset tsan
	cmake --build --preset tsan -j $(JOBS)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(TSAN_SUPP) \
	  ctest --preset tsan -j $(JOBS)
	py=$$($(PYTHON) -c 'import sys; print(sys.executable)'); \
	LD_PRELOAD="$$(gcc -print-file-name=libtsan.so)" \
	  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0:suppressions=$(TSAN_SUPP) \
	  PYTHONPATH=$(abspath build-tsan)/python $$py -m pytest -q -p no:cacheprovider \
	  --capture=sys -k "not video" $(addprefix python/tests/,$(TSAN_PYTHON_TESTS))

# A libFuzzer campaign over every fuzz target (FUZZ_SECONDS each, default 300; FUZZ_TARGETS to
# choose): scripts/fuzz.sh. Corpora grow in build-fuzz/corpus, crashes land in build-fuzz/findings.
fuzz: setup
	bash scripts/fuzz.sh

# docs/operators.md and python/stoker/fn.pyi, from the operator registry (a test checks them).
reference: build
	PYTHONPATH=$(BUILD)/python $(PYTHON) -m stoker.tools.reference --write

# The wheel users install (dist/): GPU kernels for every architecture since Turing, the codec
# libraries inside, a manylinux tag (scripts/build_wheel.sh).
wheel: setup-build
	PYTHON=$(PYTHON) bash scripts/build_wheel.sh

# A wheel for every CPython here among 3.10-3.13 (cp310, cp311, cp312-abi3 for 3.12 and later),
# each installed and checked under every interpreter it serves (scripts/check_wheel.py).
wheels: setup-build
	bash scripts/build_wheel.sh --all --check

# Developer tools (Debian: apt-get install clang-format clang-tidy); not needed by build/test.
format:
	git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format -i

format-check:
	git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format --dry-run --Werror

lint: build
	find src python/src -name '*.cpp' ! -name '*_test.cpp' | xargs -P $(JOBS) -n 4 clang-tidy -p $(BUILD) --quiet

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz dist
