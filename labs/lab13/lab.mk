# lab.mk: lab 13's student program is linked dynamically against libibverbs (rdma-core).
# On a machine with an RDMA NIC it runs on rdma-core's provider. Everywhere else the harness
# starts it with LD_LIBRARY_PATH=<lab program's folder>/verbs-emu, where the emulated
# provider's libibverbs.so.1 (labs/lab13/emu/libibverbs.c) stands in for rdma-core's; it
# reaches the emulated HCA (emu/hca.c, linked into the harness program) through
# commlab_verbs_call(), which the student program exports.

lab13_STUDENT_STATIC := no
lab13_STUDENT_LDLIBS := -libverbs -Wl,--export-dynamic-symbol=commlab_verbs_call

LAB13_EMU_OBJS := $(BUILD)/obj/labs/lab13/emu/hca.o $(BUILD)/obj/labs/lab13/emu/ref.o \
                  $(BUILD)/obj/labs/lab13/session/session.o
lab13_LDLIBS := $(LAB13_EMU_OBJS) $(LIBCOMMLAB) # after its objects: they use the harness too
LAB13_SHIM := labs/lab13/emu/libibverbs.c
LAB13_SHIM_DEPS := $(LAB13_SHIM) labs/lab13/emu/verbs_msg.h labs/lab13/emu/libibverbs.map

# lab13_shim(dir): dir/verbs-emu/libibverbs.so.1, built with the harness program dir/lab13.
define LAB13_SHIM_RULE
$(1)/verbs-emu/libibverbs.so.1: $$(LAB13_SHIM_DEPS)
	$$(call say,LINK,$$@)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(STUDENT_CC) -std=gnu11 -O2 -g -Wall -Wextra -fPIC -fvisibility=hidden -shared \
	    -Wl,-soname,libibverbs.so.1 -Wl,--version-script=labs/lab13/emu/libibverbs.map \
	    -o $$@ $$(LAB13_SHIM)
$(1)/lab13: $(1)/verbs-emu/libibverbs.so.1 $$(LAB13_EMU_OBJS)
endef

$(eval $(call LAB13_SHIM_RULE,$(BUILD)/labs/lab13))
$(eval $(call LAB13_SHIM_RULE,$(BUILD)/solutions/lab13))
ifdef STUDENT_DIR
$(eval $(call LAB13_SHIM_RULE,$(or $(LAB_OUT),$(BUILD)/submission)))
endif

# The emulated provider's own tests (tests/verbs): the provider library and the HCA in one
# process, two nodes, every error path the handout lists.
$(BUILD)/tests/verbs_emu: tests/verbs/test_verbs_emu.c $(LAB13_SHIM_DEPS) labs/lab13/emu/hca.c \
		labs/lab13/emu/hca.h labs/lab13/emu/ref.c
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(STUDENT_CC) -std=gnu11 -O1 -g -Wall -Wextra -Ilabs/lab13/emu -o $@ $< $(LAB13_SHIM) \
	    labs/lab13/emu/hca.c labs/lab13/emu/ref.c $(CMOCKA_LIBS) -lm -lpthread

verbs-test: $(BUILD)/tests/verbs_emu
	$(Q)$(BUILD)/tests/verbs_emu

# The project's unit tests include them.
unit-test: verbs-test

.PHONY: verbs-test
