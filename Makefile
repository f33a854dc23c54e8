# Entry points (see README.md): `make demo` and `make test` do everything on a fresh
# Debian 12 machine as root: install what is missing (scripts/bootstrap), build, then
# run the demo or the whole test suite.
#
#   make demo        bootstrap, build, run ompdbg in batch mode on an example program
#   make test        bootstrap, build, run the suite (ctest) in build/, then in build-sanitize/
#   make test-sanitize  the same suite in the AddressSanitizer+UBSan build (build-sanitize/)
#   make build       bootstrap and build build/ only
#   make bench       build and run the benchmarks against gdb (bench/run, bench/README.md)
#   make clean       remove the build directories (not the bootstrap cache)

SHELL := /bin/bash
BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
JOBS ?= 2
CTEST_FLAGS ?= -j $(JOBS) --output-on-failure --timeout 300
DEMO_PROGRAM ?= $(BUILD)/examples/threads
OMPDBG := $(BUILD)/apps/ompdbg/ompdbg

.PHONY: all bootstrap configure build build-sanitize demo test test-sanitize bench clean

all: build

bootstrap:
	@scripts/bootstrap

# cmake runs again by itself (from ninja) when a CMakeLists changes; configure once.
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja

$(SANITIZE_BUILD)/build.ninja:
	cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DOMPDBG_SANITIZE=address,undefined

build: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-sanitize: bootstrap $(SANITIZE_BUILD)/build.ninja
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)

# A breakpoint (threads.c:27, LINE-MARK hit in worker) that several threads reach at once;
# the backtrace, locals and threads there.
demo: build
	$(OMPDBG) --batch -ex 'break threads.c:27' -ex run -ex bt -ex 'info locals' \
	  -ex 'info threads' -ex continue run $(DEMO_PROGRAM)

# The suite in build/, then the same suite in the AddressSanitizer+UBSan build (any
# ASan/UBSan report fails the test that triggered it: -fno-sanitize-recover=all).
# SANITIZE=no skips the second half (a quick local run; CI runs both).
SANITIZE ?= yes
test: build
	ctest --test-dir $(BUILD) $(CTEST_FLAGS)
ifneq ($(SANITIZE),no)
	$(MAKE) --no-print-directory test-sanitize
endif

# Leak suppressions (third-party libraries only) come from tests/sanitizer/lsan.supp through
# each test's environment; UBSan reports carry a stack.
test-sanitize: build-sanitize
	UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir $(SANITIZE_BUILD) $(CTEST_FLAGS)

# Builds ompdbg and the workloads, then runs every workload against gdb and the raw-ptrace
# limits (bench/README.md); BENCH_FLAGS e.g. "-w 1 -r 3".
bench: bootstrap $(BUILD)/build.ninja
	python3 bench/run --build-dir $(BUILD) --jobs $(JOBS) $(BENCH_FLAGS)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)
