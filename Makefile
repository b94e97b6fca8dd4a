# CommLab: the lab toolkit of 《大规模GPU集群多卡通信拓扑优化实践》.
#
#   make            the library, the commlab command, every lab and its reference
#   make lab07      build one lab from your code (labs/lab07/lab07.c)
#   ./grade lab07   build and grade it (./grade --help)
#   make test       the project's own test suite
#   make student-release  the course without solutions, for students
#   make V=1 ...    show full commands
#
# Everything is built out of tree, under build/.

.DEFAULT_GOAL := all
.PHONY: all lib cli labs solutions skeletons check-skeletons unit-test grader-test lab-test \
        test deps same-algo-test handout-check layout-check gpu-smoke gpu-test sim-cli-test \
        exploit-test cluster-test fuzz san-test bench clean format format-check toylab \
        test-programs student-release

include mk/config.mk
include mk/library.mk
include mk/cli.mk
include mk/labs.mk
include mk/tests.mk

all: lib cli labs solutions

format:
	$(Q)clang-format -i $(shell git ls-files '*.c' '*.h' '*.cu')

format-check:
	$(Q)clang-format --dry-run --Werror $(shell git ls-files '*.c' '*.h' '*.cu')

# The student copy of the course: no solutions, no hidden material.
student-release:
	$(Q)scripts/student_release.sh $(BUILD)/student-release

clean:
	rm -rf build build-san
