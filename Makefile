# Entry points (see README.md): `make demo` and `make test` do everything on a fresh
# Debian 12 machine as root: install what is missing (scripts/bootstrap), build, then
# run the demo or the whole test suite.
#
#   make demo        bootstrap the demo's packages, libfmt.a and the OpenMP runtime, build
#                    ompdbg and the demo programs only (build-demo/, made to compile fast), show ompdbg on an
#                    OpenMP program (and an MPI job when the bootstrap's Open MPI is already
#                    built: make test builds it)
#   make test        bootstrap everything, build everything, run the suite (ctest) in build/,
#                    then in build-sanitize/
#   make test-sanitize  the same suite in the AddressSanitizer+UBSan build (build-sanitize/)
#   make build       bootstrap and build build/ only
#   make bench       build and run the benchmarks against gdb (bench/run, bench/README.md)
#   make soak        attach/detach cycles and MPI jobs with injected faults (bench/soak/soak;
#                    SOAK_CYCLES, SOAK_JOBS; not part of CI)
#   make fuzz        build the libFuzzer targets (clang-19) and run each FUZZ_SECONDS (default 60)
#   make clean       remove the build directories (not the bootstrap cache)

SHELL := /bin/bash
BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
DEMO_BUILD ?= build-demo
JOBS ?= 2
CTEST_FLAGS ?= -j $(JOBS) --output-on-failure --timeout 300

CACHE := $(or $(OMPDBG_CACHE),$(HOME)/.cache/ompdbg)

.PHONY: all bootstrap configure configure-sanitize configure-demo build build-sanitize demo test test-sanitize \
  bench soak fuzz clean

all: build

bootstrap:
	@scripts/bootstrap

# cmake runs again by itself (from ninja) when a CMakeLists changes. The OpenMP and MPI
# examples are configured only when the bootstrap cache holds their runtime, so a build
# configured before a bootstrap step finished (make demo builds no Open MPI) is configured
# again once it has: its stamp is older than the step's. The targets that bootstrap first
# configure through a second make, which sees the stamps the bootstrap has just written.
BOOTSTRAP_STAMPS = $(wildcard $(CACHE)/*/.ompdbg-bootstrap-done)

configure: $(BUILD)/.ompdbg-configured
$(BUILD)/.ompdbg-configured: $(BOOTSTRAP_STAMPS)
	cmake -S . -B $(BUILD) -G Ninja
	@touch $@

configure-sanitize: $(SANITIZE_BUILD)/.ompdbg-configured
$(SANITIZE_BUILD)/.ompdbg-configured: $(BOOTSTRAP_STAMPS)
	cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DOMPDBG_SANITIZE=address,undefined
	@touch $@

# The demo's own build: what a fresh machine compiles first, so it is made to compile fast
# (-O1 without debug info, precompiled headers for the app, no tests); make test builds
# build/ as always.
configure-demo: $(DEMO_BUILD)/.ompdbg-configured
$(DEMO_BUILD)/.ompdbg-configured: $(BOOTSTRAP_STAMPS)
	cmake -S . -B $(DEMO_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
	  -DOMPDBG_PCH=ON -DOMPDBG_BUILD_TESTS=OFF
	@touch $@

build: bootstrap
	@$(MAKE) --no-print-directory -s configure
	cmake --build $(BUILD) -j $(JOBS)

build-sanitize: bootstrap
	@$(MAKE) --no-print-directory -s configure-sanitize
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)

# Only what the demo needs: the packages, the static libfmt and the OpenMP runtime (not
# Open MPI), then ompdbg, its plugins and the demo programs (scripts/demo), not the test suite.
demo:
	@scripts/bootstrap demo-packages fmt openmp
	@$(MAKE) --no-print-directory -s configure-demo
	@scripts/demo $(DEMO_BUILD) $(JOBS)

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
bench: bootstrap
	@$(MAKE) --no-print-directory -s configure
	python3 bench/run --build-dir $(BUILD) --jobs $(JOBS) $(BENCH_FLAGS)

# SOAK_CYCLES (default 1000) attach cycles and SOAK_JOBS (default 100) MPI jobs with faults;
# exit status 1 on any violation (bench/README.md has the figures of a full run).
soak: bootstrap
	@$(MAKE) --no-print-directory -s configure
	cmake --build $(BUILD) -j $(JOBS) --target ompdbg program_soak_counter program_mpi_stages
	python3 bench/soak/soak --build-dir $(BUILD)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) $(DEMO_BUILD) $(FUZZ_BUILD)

# libFuzzer targets (fuzz/; docs/fuzzing.md): installs clang's libFuzzer
# runtime if missing, builds build-fuzz/ with clang-19 (ASan+UBSan, OMPDBG_FUZZ=ON), makes
# seed corpora from the examples and runs each target for FUZZ_SECONDS. Inputs that crash
# land in tests/fuzz_regressions/<target>/, which the suite replays (fuzz_replay_*).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= elf_dwarf core_file mpir mpi2dd dmpl msgq ompd
FUZZ_CORPUS ?= $(FUZZ_BUILD)/corpus

$(FUZZ_BUILD)/build.ninja:
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DOMPDBG_FUZZ=ON \
	  -DOMPDBG_SANITIZE=address,undefined -DOMPDBG_BUILD_TESTS=OFF

fuzz: bootstrap
	@scripts/bootstrap fuzz
	$(MAKE) --no-print-directory $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target ompdbg_fuzzers program_crash program_structs
	python3 fuzz/seeds.py $(FUZZ_BUILD)/examples $(FUZZ_CORPUS)
	fuzz/run $(FUZZ_BUILD) $(FUZZ_CORPUS) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
