# labs.mk: how a lab is built.
#
# A lab is labs/labNN/: the student's file labNN.c plus the driver files
# (every other .c there). The reference solution solutions/labNN/labNN.c
# replaces the student's file in the solution build; the driver objects are
# shared, so student and reference run exactly the same harness.
#
#   make lab01                                  build/labs/lab01/lab01
#   make solution-lab01                         build/solutions/lab01/lab01
#   make lab01 STUDENT_DIR=dir LAB_OUT=out      out/lab01 from dir/lab01.c

LABS := $(notdir $(wildcard labs/lab[0-9][0-9]))
SOLUTION_LABS := $(notdir $(wildcard solutions/lab[0-9][0-9]))

# A lab may add a labs/labNN/lab.mk setting labNN_LDLIBS (extra libraries, e.g.
# -lhwloc). Its .cu files (kernels of the driver) are compiled where nvcc exists;
# the C code calls them under #ifdef CL_HAVE_CUDA.
-include $(wildcard labs/lab[0-9][0-9]/lab.mk)

# driver_objs(lab): object files of the lab's driver (everything but the student file)
driver_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out labs/$(1)/$(1).c,$(wildcard labs/$(1)/*.c))) \
              $(if $(HAVE_CUDA),$(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard labs/$(1)/*.cu)))

define LAB_RULES
ifdef STUDENT_DIR
$(1): $(or $(LAB_OUT),$(BUILD)/submission/$(1))/$(1)
$(or $(LAB_OUT),$(BUILD)/submission/$(1))/$(1): $(STUDENT_DIR)/$(1).c $(call driver_objs,$(1)) $(LIBCOMMLAB)
	$$(call say,LINK,$$@)
	@mkdir -p $$(dir $$@)
	$(Q)$(CC) $(CFLAGS) -Ilabs/$(1) -c $(STUDENT_DIR)/$(1).c -o $$@.o
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$@.o $(call driver_objs,$(1)) $(LIBCOMMLAB) $$($(1)_LDLIBS) $(LDLIBS)
else
$(1): $(BUILD)/labs/$(1)/$(1)
endif

$(BUILD)/labs/$(1)/$(1): $(BUILD)/obj/labs/$(1)/$(1).o $(call driver_objs,$(1)) $(LIBCOMMLAB)
	$$(call say,LINK,$$@)
	@mkdir -p $$(dir $$@)
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(LIBCOMMLAB) $$($(1)_LDLIBS) $(LDLIBS)

solution-$(1): $(BUILD)/solutions/$(1)/$(1)

$(BUILD)/solutions/$(1)/$(1): $(BUILD)/obj/solutions/$(1)/$(1).o $(call driver_objs,$(1)) $(LIBCOMMLAB)
	$$(call say,LINK,$$@)
	@mkdir -p $$(dir $$@)
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(LIBCOMMLAB) $$($(1)_LDLIBS) $(LDLIBS)

$(BUILD)/obj/solutions/$(1)/$(1).o: CFLAGS += -Ilabs/$(1)
endef

$(foreach lab,$(LABS),$(eval $(call LAB_RULES,$(lab))))

labs: $(LABS)
solutions: $(addprefix solution-,$(SOLUTION_LABS))

# Skeletons are generated from the solutions: one source of truth.
skeletons:
	$(Q)/usr/bin/python3 scripts/skeleton.py --write $(SOLUTION_LABS)

check-skeletons:
	$(Q)/usr/bin/python3 scripts/skeleton.py --check $(SOLUTION_LABS)

-include $(wildcard $(BUILD)/obj/labs/*/*.d $(BUILD)/obj/solutions/*/*.d)
.PHONY: $(LABS) $(addprefix solution-,$(LABS))
