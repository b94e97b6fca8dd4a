# library.mk: the two libraries.
#
#   build/lib/libcommlab.a          the harness's: every module of common/ but student/
#   build/lib/libcommlab-student.a  the student program's: its runtime (student/), the
#                                   interface's front end and the small pure helpers

STUDENT_ONLY := $(wildcard common/student/*.c)
LIB_SRCS := $(filter-out common/p2p_mpi.c common/p2p_mpi_none.c,\
              $(wildcard common/*.c common/sim/*.c common/boundary/*.c common/harness/*.c))
ifeq ($(HAVE_MPI),1)
LIB_SRCS += common/p2p_mpi.c
GPU_BOOT := common/gpu/boot_mpi.c
else
LIB_SRCS += common/p2p_mpi_none.c
GPU_BOOT := common/gpu/boot_solo.c
endif
ifeq ($(HAVE_CUDA),1)
LIB_SRCS += common/gpu/p2p_nccl.c $(GPU_BOOT)
LIB_CUS  := common/gpu/reduce_kernels.cu common/gpu/compute_kernels.cu
ifeq ($(GPU_FAKE),1)
LIB_SRCS += tests/gpu/fake_cuda.c
LIB_CUS  :=
endif
else
LIB_SRCS += common/gpu/p2p_nccl_none.c
LIB_CUS  :=
endif
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(LIB_CUS:%.cu=$(BUILD)/obj/%.o)
LIBCOMMLAB := $(BUILD)/lib/libcommlab.a

STUDENT_LIB_SRCS := $(STUDENT_ONLY) common/p2p.c common/result.c common/dtype.c common/coroutine.c \
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
