# lab.mk: included by labs/labNN/Makefile so that `make` works inside a lab folder.
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)

all:
	@$(MAKE) -C $(TOP) $(LAB)

grade:
	@cd $(TOP) && ./grade $(LAB)

.PHONY: all grade
