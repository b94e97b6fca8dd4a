# library.mk: the two libraries.
#
#   build/lib/libcommlab.a          the harness's: every module of common/ but student/
#   build/lib/libcommlab-student.a  the student program's: its runtime (student/), the
#                                   interface's front end and the small pure helpers

STUDENT_ONLY := $(wildcard common/student/*.c)
LIB_SRCS := $(wildcard common/*.c common/sim/*.c common/boundary/*.c common/harness/*.c)
ifeq ($(HAVE_CUDA),1)
LIB_SRCS += common/gpu/p2p_nccl.c
LIB_CUS  := common/gpu/reduce_kernels.cu
else
LIB_SRCS += common/gpu/p2p_nccl_none.c
LIB_CUS  :=
endif
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(LIB_CUS:%.cu=$(BUILD)/obj/%.o)
LIBCOMMLAB := $(BUILD)/lib/libcommlab.a

STUDENT_LIB_SRCS := $(STUDENT_ONLY) common/p2p.c common/result.c common/dtype.c \
                    common/coll.c common/timing.c
STUDENT_LIB_OBJS := $(STUDENT_LIB_SRCS:%.c=$(BUILD)/obj/student-side/%.o)
LIBSTUDENT := $(BUILD)/lib/libcommlab-student.a

lib: $(LIBCOMMLAB) $(LIBSTUDENT)

$(LIBCOMMLAB): $(LIB_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSTUDENT): $(STUDENT_LIB_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/%.o: %.c
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# The student side: plain gcc, no MPI or CUDA on the include path.
$(BUILD)/obj/student-side/%.o: %.c
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(STUDENT_CC) $(STUDENT_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu
	$(call say,NVCC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(NVCC) $(NVCCFLAGS) -Icommon -MMD -MP -c $< -o $@

-include $(LIB_OBJS:.o=.d) $(STUDENT_LIB_OBJS:.o=.d)
