# lab.mk: lab 09 also builds lab09-student-tsan, the student's program under ThreadSanitizer,
# next to lab09-student (grader check cpu.race: `lab09 race --student .../lab09-student-tsan`).
# The student's file, the plug-in's student side, ring.c and tsan.c are instrumented; the
# runtime (libcommlab-student.a) is not, and the plug-in's harness_*.c files stay out.
# ThreadSanitizer links dynamically: the harness then lets the program open files read-only
# (its loader's), as for any dynamic student program.
#
# In the student's file, the ways to switch ThreadSanitizer off are defined away: the
# attributes become empty, the annotation calls name a function that does not exist (the
# build fails), and tsan.c defines the options and suppressions hooks itself.
#
# Not under `make SAN=1`: ThreadSanitizer cannot be combined with AddressSanitizer.

ifneq ($(SAN),1)

LAB09_TSAN_FLAGS := $(filter-out -MMD -MP -O2,$(STUDENT_CFLAGS)) -Ilabs/lab09 -O1 -g \
                    -fsanitize=thread
LAB09_TSAN_GIVEN := $(filter-out labs/lab09/lab09.c labs/lab09/harness_%.c,\
                                 $(wildcard labs/lab09/*.c))
LAB09_TSAN_OFF := -Dno_sanitize_thread= -D__no_sanitize_thread__= '-Dno_sanitize(x)=' \
                  '-D__no_sanitize__(x)=' -Ddisable_sanitizer_instrumentation= \
                  $(foreach f,__tsan_acquire __tsan_release __tsan_ignore_thread_begin \
                      AnnotateHappensBefore AnnotateHappensAfter AnnotateBenignRace \
                      AnnotateBenignRaceSized AnnotateIgnoreReadsBegin AnnotateIgnoreWritesBegin,\
                      -D$(f)=lab09_threadsanitizer_stays_on)

# lab09_tsan_rule(output, student source)
define lab09_tsan_rule
$(1): $(2) $$(LAB09_TSAN_GIVEN) $$(wildcard labs/lab09/*.h) $$(LIBSTUDENT)
	$$(call say,LINK,$$@)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(STUDENT_CC) $$(LAB09_TSAN_FLAGS) $$(LAB09_TSAN_OFF) -c $(2) -o $$@.o
	$$(Q)$$(STUDENT_CC) $$(LAB09_TSAN_FLAGS) -o $$@ $$@.o $$(LAB09_TSAN_GIVEN) $$(LIBSTUDENT) \
		-fsanitize=thread -lpthread $$(STUDENT_LDLIBS)
endef

ifdef STUDENT_DIR
LAB09_OUT := $(or $(LAB_OUT),$(BUILD)/submission)
lab09: $(LAB09_OUT)/lab09-student-tsan
$(eval $(call lab09_tsan_rule,$(LAB09_OUT)/lab09-student-tsan,$(STUDENT_DIR)/lab09.c))
else
lab09: $(BUILD)/labs/lab09/lab09-student-tsan
$(eval $(call lab09_tsan_rule,$(BUILD)/labs/lab09/lab09-student-tsan,labs/lab09/lab09.c))
endif
solution-lab09: $(BUILD)/solutions/lab09/lab09-student-tsan
$(eval $(call lab09_tsan_rule,$(BUILD)/solutions/lab09/lab09-student-tsan,solutions/lab09/lab09.c))
endif
