# labs.mk: how a lab is built: two programs, one on each side of the trust boundary.
#
# labs/labNN/ holds the student's file labNN.c, the plug-in driver.c, the
# plug-in's other parts harness_*.c (harness program only), and any other .c
# file: code the lab gives the student (compiled into the student's program).
# driver.c is compiled twice: into the harness program, and with
# CL_STUDENT_SIDE into the student's program (its table of entries).
#
#   make lab01                              build/labs/lab01/lab01 and lab01-student
#   make solution-lab01                     build/solutions/lab01/lab01 and lab01-student
#   make lab01 STUDENT_DIR=dir LAB_OUT=out  out/lab01 and out/lab01-student from dir/lab01.c
#
# A lab may add labs/labNN/lab.mk setting labNN_LDLIBS (the harness program's
# extra libraries), labNN_STUDENT_LDLIBS (the student program's), and
# labNN_STUDENT_STATIC := no when a library it needs cannot link statically
# (the student's program is then dynamic, and may open files read-only).

LABS := $(notdir $(wildcard labs/lab[0-9][0-9]))
SOLUTION_LABS := $(notdir $(wildcard solutions/lab[0-9][0-9]))

-include $(wildcard labs/lab[0-9][0-9]/lab.mk)

given_objs = $(patsubst %.c,$(BUILD)/obj/student-side/%.o,\
               $(filter-out labs/$(1)/$(1).c labs/$(1)/driver.c labs/$(1)/harness_%.c,\
                            $(wildcard labs/$(1)/*.c)))
harness_objs = $(BUILD)/obj/labs/$(1)/driver.o \
               $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard labs/$(1)/harness_*.c)) \
               $(if $(HAVE_CUDA),$(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard labs/$(1)/*.cu)))
student_objs = $(BUILD)/obj/student-side/labs/$(1)/driver.o $(call given_objs,$(1))

# link_harness(out, objs) and link_student(out, objs, lab)
define link_harness
	$(call say,LINK,$(1))
	@mkdir -p $$(dir $(1))
	$(Q)$(CC) $(LDFLAGS) -o $(1) $(2) $(LIBCOMMLAB) $($(3)_LDLIBS) $(LDLIBS)
endef
define link_student
	$(call say,LINK,$(1))
	@mkdir -p $$(dir $(1))
	$(Q)$(STUDENT_CC) $(if $(filter no,$($(3)_STUDENT_STATIC)),,$(STUDENT_STATIC)) $(STUDENT_LDFLAGS) \
	    -o $(1) $(2) $(LIBSTUDENT) $($(3)_STUDENT_LDLIBS) $(STUDENT_LDLIBS)
endef

define LAB_RULES
$(BUILD)/obj/labs/$(1)/%.o: CFLAGS += -Ilabs/$(1)
$(BUILD)/obj/student-side/labs/$(1)/%.o: STUDENT_CFLAGS += -Ilabs/$(1)
$(BUILD)/obj/student-side/solutions/$(1)/%.o: STUDENT_CFLAGS += -Ilabs/$(1)

$(BUILD)/labs/$(1)/$(1): $(call harness_objs,$(1)) $(LIBCOMMLAB)
	$(call link_harness,$$@,$(call harness_objs,$(1)),$(1))
$(BUILD)/labs/$(1)/$(1)-student: $(BUILD)/obj/student-side/labs/$(1)/$(1).o $(call student_objs,$(1)) $(LIBSTUDENT)
	$(call link_student,$$@,$$(filter %.o,$$^),$(1))
$(BUILD)/solutions/$(1)/$(1): $(call harness_objs,$(1)) $(LIBCOMMLAB)
	$(call link_harness,$$@,$(call harness_objs,$(1)),$(1))
$(BUILD)/solutions/$(1)/$(1)-student: $(BUILD)/obj/student-side/solutions/$(1)/$(1).o $(call student_objs,$(1)) $(LIBSTUDENT)
	$(call link_student,$$@,$$(filter %.o,$$^),$(1))

solution-$(1): $(BUILD)/solutions/$(1)/$(1) $(BUILD)/solutions/$(1)/$(1)-student

ifdef STUDENT_DIR
$(1): $(LAB_OUT)/$(1) $(LAB_OUT)/$(1)-student
$(LAB_OUT)/$(1): $(call harness_objs,$(1)) $(LIBCOMMLAB)
	$(call link_harness,$$@,$(call harness_objs,$(1)),$(1))
$(LAB_OUT)/$(1)-student: $(STUDENT_DIR)/$(1).c $(call student_objs,$(1)) $(LIBSTUDENT)
	$(call say,CC,$(STUDENT_DIR)/$(1).c)
	@mkdir -p $(LAB_OUT)
	$(Q)$(STUDENT_CC) $(STUDENT_CFLAGS) -Ilabs/$(1) -c $(STUDENT_DIR)/$(1).c -o $$@.o
	$(call link_student,$$@,$$@.o $(call student_objs,$(1)),$(1))
else
$(1): $(BUILD)/labs/$(1)/$(1) $(BUILD)/labs/$(1)/$(1)-student
endif
endef

LAB_OUT ?= $(BUILD)/submission
$(foreach lab,$(LABS),$(eval $(call LAB_RULES,$(lab))))

labs: $(LABS)
solutions: $(addprefix solution-,$(SOLUTION_LABS))

# Skeletons are generated from the solutions: one source of truth.
skeletons:
	$(Q)/usr/bin/python3 scripts/skeleton.py --write $(SOLUTION_LABS)

check-skeletons:
	$(Q)/usr/bin/python3 scripts/skeleton.py --check $(SOLUTION_LABS)

-include $(wildcard $(BUILD)/obj/labs/*/*.d $(BUILD)/obj/student-side/labs/*/*.d \
                    $(BUILD)/obj/student-side/solutions/*/*.d)
.PHONY: $(LABS) $(addprefix solution-,$(LABS))
