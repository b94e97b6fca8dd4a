# tests.mk: the project's own test suite (`make test`).
#
#   unit-test    cmocka tests of common/ (tests/unit/test_*.c)
#   grader-test  the grading harness on small fake labs (tests/grader)
#   lab-test     every lab: reference full marks, skeleton zero, mutants caught (tests/labs)
#   format-check every C file as clang-format leaves it (`make format` fixes it)
#   handout-check every handout against its spec (ids, points table, sections, commands)
#   layout-check every lab's files, and its driver.c short (scripts/layout_check.py)
#   exploit-test hostile submissions, 20 graders at once, official mode (tests/exploits)
#   gpu-test     the GPU paths skip cleanly here; the smoke program (gpu-smoke) runs
#   cluster-test a private Slurm and network namespaces on this machine (tests/cluster)
#   fuzz, san-test  brief fuzzing of every parser; the suites under ASan/UBSan (CI runs both)

PYTHON     := /usr/bin/python3
# The suites' builds use every core (the suites themselves run one after the other).
JOBS       := -j$(shell nproc 2>/dev/null || echo 2)
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

$(BUILD)/tests/%: tests/unit/%.c $(LIBCOMMLAB)
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBCOMMLAB) $(CMOCKA_LIBS) $(LDLIBS)

# test_boundary drives a student program of its own, built as the labs' are.
$(BUILD)/tests/probe-student: tests/unit/student/probe.c $(LIBSTUDENT)
	$(call say,LINK,$@)
	@mkdir -p $(dir $@)
	$(Q)$(STUDENT_CC) $(STUDENT_CFLAGS) $(STUDENT_STATIC) $(STUDENT_LDFLAGS) -o $@ $< \
	    $(LIBSTUDENT) $(STUDENT_LDLIBS)
$(BUILD)/tests/test_boundary: $(BUILD)/tests/probe-student

unit-test: $(UNIT_BINS) toylab
	$(Q)$(if $(filter 1,$(SAN)),COMMLAB_SANITIZE=1) $(PYTHON) scripts/run_unit_tests.py $(UNIT_BINS)
	$(Q)BUILD=$(BUILD) $(if $(filter 1,$(SAN)),COMMLAB_SANITIZE=1) $(PYTHON) -m unittest tests.toylab.test_toylab $(if $(V),-v)

# The toy lab (tests/toylab): a plug-in with no main(), options or JSON of its
# own, built as labs are, into a harness program and a student program.
TOYLAB := $(BUILD)/tests/toylab/toylab
$(BUILD)/obj/tests/toylab/%.o: CFLAGS += -Itests/toylab
$(BUILD)/obj/student-side/tests/toylab/%.o: STUDENT_CFLAGS += -Itests/toylab
$(TOYLAB): $(BUILD)/obj/tests/toylab/driver.o $(LIBCOMMLAB)
	$(call say,LINK,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIBCOMMLAB) $(LDLIBS)
$(TOYLAB)-student: $(BUILD)/obj/student-side/tests/toylab/toylab.o \
                   $(BUILD)/obj/student-side/tests/toylab/driver.o $(LIBSTUDENT)
	$(call say,LINK,$@)
	$(Q)$(STUDENT_CC) $(STUDENT_STATIC) $(STUDENT_LDFLAGS) -o $@ $(filter %.o,$^) \
	    $(LIBSTUDENT) $(STUDENT_LDLIBS)
toylab: $(TOYLAB) $(TOYLAB)-student

grader-test:
	$(Q)$(PYTHON) -m unittest discover -s tests/grader -t . $(if $(V),-v)

# Every handout against its spec: check ids, the points table, the sections every
# handout has, the commands it shows (scripts/handout_check.py).
handout-check:
	$(Q)$(PYTHON) scripts/handout_check.py

layout-check:
	$(Q)$(PYTHON) scripts/layout_check.py

exploit-test:
	$(Q)$(PYTHON) -m unittest discover -s tests/exploits -t . $(if $(V),-v)

# Fuzz every parser briefly (FUZZ_SECONDS each); docs/fuzzing.md has the long runs.
FUZZ_SECONDS ?= 20
fuzz:
	$(Q)scripts/fuzz.sh $(FUZZ_SECONDS)
	$(Q)$(PYTHON) tests/fuzz/fuzz_spec.py $(FUZZ_SECONDS)

# The library, the simulator and every lab's reference under AddressSanitizer and
# UndefinedBehaviorSanitizer (build-san/). The skeletons are not built: nothing here runs them.
# Open MPI's own allocations are not freed at exit: leak reports would be about it.
san-test: export ASAN_OPTIONS = detect_leaks=0
san-test: export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
san-test:
	$(Q)$(MAKE) --no-print-directory $(JOBS) SAN=1 lib cli solutions
	$(Q)$(MAKE) --no-print-directory $(JOBS) SAN=1 test-programs
	$(Q)$(MAKE) --no-print-directory SAN=1 unit-test same-algo-test
	$(Q)$(PYTHON) -m unittest tests.labs.sanitized $(if $(V),-v)

cluster-test:
	$(Q)$(PYTHON) -m unittest discover -s tests/cluster -t . $(if $(V),-v)

lab-test:
	$(Q)$(PYTHON) -m unittest discover -s tests/labs -t . $(if $(V),-v)

# Suites run one after the other (lab tests time real runs: nothing else may load
# the machine meanwhile), after the packages are installed.
test: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) all test-programs
	$(Q)$(MAKE) --no-print-directory check-skeletons
	$(Q)$(MAKE) --no-print-directory format-check
	$(Q)$(MAKE) --no-print-directory handout-check
	$(Q)$(MAKE) --no-print-directory layout-check
	$(Q)$(MAKE) --no-print-directory unit-test
	$(Q)$(MAKE) --no-print-directory same-algo-test
	$(Q)$(MAKE) --no-print-directory gpu-test
	$(Q)$(MAKE) --no-print-directory sim-cli-test
	$(Q)$(MAKE) --no-print-directory grader-test
	$(Q)$(MAKE) --no-print-directory lab-test
	$(Q)$(MAKE) --no-print-directory exploit-test
	$(Q)$(MAKE) --no-print-directory cluster-test
	@echo "make test: all suites passed"

deps:
	$(Q)$(PYTHON) scripts/deps.py --tests

# `commlab sim`: bad input refused with one line, the D-mod-K repro, --topo, --system FILE;
# the training-step search's best is the same on a relabelled node (lab07's copies).
sim-cli-test: cli solution-lab07
	$(Q)$(PYTHON) -m unittest tests.sim.test_cli tests.sim.test_relabelled $(if $(V),-v)

# The same student algorithm must give identical results on MPI and on the simulator.
$(BUILD)/tests/same_algo: tests/sim/same_algo.c $(LIBCOMMLAB)
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBCOMMLAB) $(LDLIBS)

same-algo-test: $(BUILD)/tests/same_algo
	$(Q)$(PYTHON) scripts/same_algo_test.py $(BUILD)/tests/same_algo

# Every program the suites run, built in parallel before they start.
test-programs: $(UNIT_BINS) toylab $(BUILD)/tests/same_algo

# The gpu backend's smoke test: every entry point on one rank (skips without a GPU).
GPU_SMOKE := $(BUILD)/tests/gpu_smoke
$(GPU_SMOKE): tests/gpu/smoke.c $(LIBCOMMLAB)
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBCOMMLAB) $(LDLIBS)

gpu-smoke: $(GPU_SMOKE)

# GPU readiness here: what must skip cleanly without a GPU does, and the backend
# runs, one rank, over a host stand-in for CUDA and NCCL (tests/gpu).
gpu-test: $(GPU_SMOKE) cli solution-lab05
	$(Q)$(MAKE) --no-print-directory $(JOBS) BUILD=$(BUILD)-fake GPU_FAKE=1 cli gpu-smoke solution-lab05
	$(Q)COMMLAB_FAKE_BUILD=$(BUILD)-fake $(PYTHON) -m unittest discover -s tests/gpu -t . \
	    $(if $(V),-v)

# Simulator speed table (not a test: it reports times and says which goals are met).
# BENCH_RANKS: the student-code path's rank counts (the goal is stated for 1024).
$(BUILD)/bench/sim_scale: bench/sim_scale.c $(LIBCOMMLAB)
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBCOMMLAB) $(LDLIBS)

BENCH_RANKS ?= 256 1024
bench: $(BUILD)/bench/sim_scale
	$(Q)$(BUILD)/bench/sim_scale
	$(Q)bench/student_path.sh $(BUILD) $(BENCH_RANKS)
