# lab.mk: lab 09 also builds lab09-race, the student's ring under ThreadSanitizer,
# next to the lab binary (grader check cpu.race). Sources: the student's file,
# labs/lab09/race/race.c, msg.c and ring.c, all compiled with -fsanitize=thread.

LAB09_RACE_SRCS := labs/lab09/race/race.c labs/lab09/msg.c labs/lab09/ring.c
LAB09_RACE_FLAGS := -std=gnu11 -O1 -g -fsanitize=thread -Icommon -Ilabs/lab09

define LAB09_RACE_RULE
$(1)/lab09-race: $(2) $$(LAB09_RACE_SRCS) labs/lab09/lab09.h labs/lab09/msg.h $$(LIBCOMMLAB)
	$$(call say,LINK,$$@)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(LAB09_RACE_FLAGS) -o $$@ $(2) $$(LAB09_RACE_SRCS) $$(LIBCOMMLAB) $$(LDLIBS)
endef

ifdef STUDENT_DIR
lab09: $(or $(LAB_OUT),$(BUILD)/submission/lab09)/lab09-race
$(eval $(call LAB09_RACE_RULE,$(or $(LAB_OUT),$(BUILD)/submission/lab09),$(STUDENT_DIR)/lab09.c))
else
lab09: $(BUILD)/labs/lab09/lab09-race
$(eval $(call LAB09_RACE_RULE,$(BUILD)/labs/lab09,labs/lab09/lab09.c))
endif
solution-lab09: $(BUILD)/solutions/lab09/lab09-race
$(eval $(call LAB09_RACE_RULE,$(BUILD)/solutions/lab09,solutions/lab09/lab09.c))
