# lance-cpp: top-level driver over CMake.
#   make            install what is missing, build, leave build/bin/lance-cpp
#   make demo       build the CLI alone if needed, then walk a sample dataset through its life
#   make test       every test: GoogleTest through ctest, then the pytest interop suite,
#                   then the Python binding's tests (tests/python)
#                   (with tests/interop/compat: datasets written by released pylance
#                   versions installed into throwaway venvs, cached in ~/.cache/lance-cpp;
#                   the tests that need the historical datasets of ../shared/fixtures
#                   skip, and say so, when the clone has none beside it)
#   make test-asan  the same suite built with ASan+UBSan
#   make fuzz       libFuzzer (clang, ASan+UBSan) on every fuzz target, FUZZ_SECONDS each (default 300)
#   make test-tsan  the unit suite and the concurrency interop tests built with ThreadSanitizer
#   make test-crash  crash campaign: every write path SIGKILLed at random moments,
#                   CRASH_KILLS per path (default 100, 10 paths), each kill checked
#   make bench      read benchmarks, lance-cpp beside pylance (BENCH_ARGS="--rows N")
#   make bench-write  write/delete/update/merge-insert benchmarks (BENCH_ARGS="--rows N")
#   make bench-concurrency  commits/s of 1, 2, 4, 8 concurrent writers (BENCH_ARGS="--commits N")
#   make bench-compaction  compaction rows/s and peak RSS (BENCH_ARGS="--fragments N")
#   make bench-index  indexed filter latency beside pylance on its indices (BENCH_ARGS="--rows N")
#   make bench-fts  full-text query latency and INVERTED build beside pylance (BENCH_ARGS="--rows N")
JOBS ?= $(shell nproc)
VENV := .venv
PY := $(CURDIR)/$(VENV)/bin/python
BUILD ?= build
ASAN_BUILD := build-asan
TSAN_BUILD := build-tsan
FUZZ_BUILD := build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := manifest_fuzz file_reader_fuzz deletion_fuzz filter_fuzz index_fuzz
CMAKE_FLAGS := -G Ninja -DLANCE_PYTHON=$(PY)

.PHONY: all deps build demo test unit interop python test-asan test-tsan test-crash fuzz bench bench-write bench-concurrency bench-compaction bench-index bench-fts clean

all: build

deps:
	@bash scripts/bootstrap.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

# The Python binding (build/python/lance_cpp) goes on the .venv's path by a .pth file.
build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	@if [ -d $(BUILD)/python/lance_cpp ]; then \
	  echo "$(CURDIR)/$(BUILD)/python" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/lance_cpp_build.pth"; fi

# Only the CLI: the demo needs no test or benchmark binary.
demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target lance-cpp
	@bash scripts/demo.sh $(BUILD)/bin/lance-cpp $(URI)

unit: build
	cd $(BUILD) && { ctest --output-on-failure -j $(JOBS); rc=$$?; bash $(CURDIR)/scripts/unit_summary.sh .; exit $$rc; }

# The interop tests run on every core (pytest-xdist), a test file per worker
# at a time so module fixtures are built once; PYTEST_JOBS=0 runs them in one process.
PYTEST_JOBS ?= $(JOBS)
PYTEST_PAR := $(if $(filter 0 1,$(PYTEST_JOBS)),,-n $(PYTEST_JOBS) --dist loadfile)

interop: build
	LANCE_CPP_BIN=$(CURDIR)/$(BUILD)/bin/lance-cpp $(PY) -m pytest -q $(PYTEST_PAR) tests/interop

# The Python binding lance_cpp against pylance, DuckDB and Polars.
python: build
	$(PY) -m pytest -q tests/python

test: unit interop python

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Debug -DLANCE_SANITIZE=ON

test-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && { ASAN_OPTIONS=detect_leaks=1:exitcode=86 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86 ctest --output-on-failure -j $(JOBS); rc=$$?; bash $(CURDIR)/scripts/unit_summary.sh .; exit $$rc; }
	ASAN_OPTIONS=detect_leaks=1:exitcode=86 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86 LANCE_CPP_BIN=$(CURDIR)/$(ASAN_BUILD)/bin/lance-cpp \
	  $(PY) -m pytest -q $(PYTEST_PAR) tests/interop

# ThreadSanitizer: every unit test (the thread pools, read-ahead, caches and
# commit retries run there) and the interop tests whose writers race, each
# CLI process instrumented. Reports stop the run (halt_on_error).
# pyarrow's Arrow is not built with TSan: its atomics and locks are invisible,
# so what it frees or hands between threads looked racy (every report was in
# its frames). Interceptors called from uninstrumented libraries are ignored,
# and Arrow allocates with malloc, not its bundled mimalloc/jemalloc (a huge
# allocation a damaged file asks for is then an error, as with those).
TSAN_ENV := ARROW_DEFAULT_MEMORY_POOL=system \
  TSAN_OPTIONS=ignore_noninstrumented_modules=1:allocator_may_return_null=1:halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp
$(TSAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(TSAN_BUILD) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Debug -DLANCE_SANITIZE_THREAD=ON

test-tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && { $(TSAN_ENV) ctest --output-on-failure -j $(JOBS); rc=$$?; bash $(CURDIR)/scripts/unit_summary.sh .; exit $$rc; }
	$(TSAN_ENV) LANCE_CPP_BIN=$(CURDIR)/$(TSAN_BUILD)/bin/lance-cpp \
	  $(PY) -m pytest -q $(PYTEST_PAR) tests/interop/test_concurrency.py tests/interop/test_compaction.py tests/interop/test_crash.py

# The long crash campaign (the short form runs in `make test`,
# tests/interop/test_crash_campaign.py); exits 1 on any failed check.
CRASH_KILLS ?= 100
test-crash: build
	LANCE_CPP_BIN=$(CURDIR)/$(BUILD)/bin/lance-cpp $(PY) tests/interop/crash_campaign.py --kills-per-path $(CRASH_KILLS)

# libFuzzer needs clang (installed here when missing, not by `make`): the
# whole library is built instrumented, the targets run in turn.
$(FUZZ_BUILD)/build.ninja: | deps
	@command -v clang++ >/dev/null || { SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get install -y -qq clang >/dev/null; }
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Debug \
	  -DLANCE_SANITIZE=ON -DLANCE_FUZZ=ON

fuzz: deps $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS)
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

bench: build
	$(PY) bench/run.py $(BENCH_ARGS)

bench-write: build
	$(PY) bench/run_write.py $(BENCH_ARGS)

bench-concurrency: build
	$(PY) bench/run_concurrency.py $(BENCH_ARGS)

bench-compaction: build
	$(PY) bench/run_compaction.py $(BENCH_ARGS)

bench-index: build
	$(PY) bench/run_index.py $(BENCH_ARGS)

bench-fts: build
	$(PY) bench/run_fts.py $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
