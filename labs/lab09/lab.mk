# lab.mk: lab 09 also builds lab09-race, the student's ring under ThreadSanitizer,
# next to the lab binary (grader check cpu.race). Sources: the student's file,
# labs/lab09/race/race.c, msg.c and ring.c, all compiled with -fsanitize=thread,
# and a ThreadSanitizer build of the library (ThreadSanitizer cannot be mixed with
# the AddressSanitizer build of `make SAN=1`, nor with uninstrumented code safely).

LAB09_RACE_SRCS := labs/lab09/race/race.c labs/lab09/msg.c labs/lab09/ring.c
LAB09_RACE_FLAGS := -std=gnu11 -O1 -g -fsanitize=thread -Icommon -Ilabs/lab09
LAB09_TSAN_LIB := $(BUILD)/lib/libcommlab-tsan.a
LAB09_TSAN_OBJS := $(patsubst %.c,$(BUILD)/obj-tsan/%.o,$(filter-out common/gpu/%,$(LIB_SRCS)) \
                   common/gpu/p2p_nccl_none.c)

$(BUILD)/obj-tsan/%.o: %.c
	$(call say,CC-TSAN,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LAB09_RACE_FLAGS) -c $< -o $@

$(LAB09_TSAN_LIB): $(LAB09_TSAN_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

define LAB09_RACE_RULE
$(1)/lab09-race: $(2) $$(LAB09_RACE_SRCS) labs/lab09/lab09.h labs/lab09/msg.h $$(LAB09_TSAN_LIB)
	$$(call say,LINK,$$@)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(LAB09_RACE_FLAGS) -o $$@ $(2) $$(LAB09_RACE_SRCS) $$(LAB09_TSAN_LIB) \
		$$(filter-out -lnccl -lcudart -lstdc++,$$(LDLIBS))
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
